"""Two small classes laid out as Canvas and Moodle hand them over, with their rosters (shared by the LMS tests).

Canvas ("Download Submissions", flat `<sortable name>_[late_]<user id>_<file id>_<name>`):
Chidi hands in twice (a .py, then a notebook: the later file id is graded), Petra a late .zip
(with `__MACOSX/` beside her file), Ren a `.ipynb.txt`, Luz nothing; a file of user 5999, who
is not on the roster. Moodle ("Download all submissions", a folder per participant): Aiko hands
in twice (the later modified is graded), Bruno a .zip, Chen online text only, Dara nothing; a
folder of participant 399, not on the worksheet.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

CODE = "def softmax(x, axis=-1):\n    return x\n"
NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'

CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Attention lab (7001),Quiz 1 (7002),Current Score,Final Score\n"
    "    Points Possible,,,,,10.00,5.00,(read only),(read only)\n"
    '"Okafor, Chidi",5101,S5101,chidi.o,Lab A,,,0.00,0.00\n'
    '"Novak, Petra",5102,S5102,pnovak,Lab A,,4.00,80.00,80.00\n'
    '"Tanaka, Ren",5103,S5103,rtanaka,Lab B,,,0.00,0.00\n'
    '"Reyes, Luz",5104,S5104,lreyes,Lab B,,,0.00,0.00\n'
)
MOODLE_ROSTER = (
    "\ufeffIdentifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
    'Participant 301,Aiko Mori,aiko@example.edu,Submitted for grading,,10.00,Yes,'
    '"Monday, 1 December 2026, 9:12 AM",-,\n'
    'Participant 302,Bruno Silva,bruno@example.edu,Submitted for grading,,10.00,Yes,'
    '"Monday, 1 December 2026, 9:40 AM",-,\n'
    "Participant 303,Chen Wei,chen@example.edu,Submitted for grading,,10.00,Yes,-,-,\n"
    "Participant 304,Dara Quinn,dara@example.edu,No submission,,10.00,Yes,-,-,\n"
)


def zip_bytes(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buffer.getvalue()


def canvas_class(root: Path) -> tuple[Path, Path]:
    """(the submissions folder, the roster) of the Canvas class."""
    subs = root / "canvas_submissions"
    subs.mkdir(parents=True)
    (subs / "okaforchidi_5101_88001_attention.py").write_text(CODE)
    (subs / "okaforchidi_5101_88017_attention.ipynb").write_text(NOTEBOOK)
    (subs / "novakpetra_late_5102_88005_lab.zip").write_bytes(zip_bytes(
        {"lab/solution.py": CODE.encode(), "__MACOSX/lab/._solution.py": b"\x00\x05", "lab/notes.txt": b"hi"}))
    (subs / "tanakaren_5103_88009_attention.ipynb.txt").write_text(NOTEBOOK)
    (subs / "strangerx_5999_88011_attention.py").write_text(CODE)
    roster = root / "canvas_export.csv"
    roster.write_text(CANVAS_ROSTER)
    return subs, roster


def moodle_class(root: Path) -> tuple[Path, Path]:
    """(the submissions folder, the roster) of the Moodle class."""
    subs = root / "moodle_submissions"
    aiko = subs / "Aiko Mori_301_assignsubmission_file_"
    aiko.mkdir(parents=True)
    (aiko / "attention.ipynb").write_text(NOTEBOOK)
    (aiko / "attention_fixed.py").write_text(CODE)
    os.utime(aiko / "attention.ipynb", (1_700_000_000, 1_700_000_000))
    os.utime(aiko / "attention_fixed.py", (1_700_000_500, 1_700_000_500))  # handed in later: graded
    bruno = subs / "Bruno Silva_302_assignsubmission_file_"
    bruno.mkdir()
    (bruno / "work.zip").write_bytes(zip_bytes({"work/attention.ipynb": NOTEBOOK.encode(), "work/data.csv": b"1"}))
    chen = subs / "Chen Wei_303_assignsubmission_onlinetext_"
    chen.mkdir()
    (chen / "onlinetext.html").write_text("<p>my code is in a gist</p>")
    ghost = subs / "Dara Q_399_assignsubmission_file_"
    ghost.mkdir()
    (ghost / "x.py").write_text(CODE)
    roster = root / "worksheet.csv"
    roster.write_text(MOODLE_ROSTER, encoding="utf-8")
    return subs, roster
