"""Submissions as the LMS hands them over, matched to the roster's learners by the id in their names.

- Canvas's "Download Submissions": flat files `<sortable name>_[LATE_]<user id>_<file id>_<original
  name>` (the user id is the roster's `ID`; a later upload has a larger file id);
- Moodle's "Download all submissions": a folder per participant, `<Full name>_<participant id>_
  assignsubmission_file_/`, holding the files (or, without folders, the files named with that
  prefix); `assignsubmission_onlinetext_` is online text, not a file to grade;
- with a plain roster: `<id>.py`, `<id>.ipynb`, or `<id>_<anything>`.

`intake(folder, roster)` decides, before any job, for every file: whose it is, and whether it is
graded or why not. A learner with several gradable files gets the latest graded (Canvas: the
largest file id; otherwise the latest modification time), the others listed; a `.zip` is graded
through the one notebook or .py it holds (sdpa_lab.grading.archive); any other file is named with
its reason; a file matching no roster learner is named too. Parse-time light.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sdpa_lab.grading.archive import ArchiveError, graded_member
from sdpa_lab.grading.roster import Roster, RosterError, read_roster, roster_problem

CANVAS_NAME = re.compile(r"^(?P<who>.*?)_(?:late_)?(?P<id>\d+)_(?P<file>\d+)_(?P<original>.+)$", re.I)
MOODLE_FOLDER = re.compile(r"^(?P<who>.+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<original>.*)$")
GRADED = (".py", ".ipynb")
MAX_DEPTH = 3  # folders below the submissions folder that are read (Moodle's: one, and a learner's own)
MAX_FILES = 10_000  # a class's download holds far fewer; more is no class


class IntakeError(ValueError):
    """A submissions folder that cannot be read; the message is one line."""


@dataclass
class Intake:
    """What a class's folder holds: `graded` {learner id: file}, `files` (one row per file: its path relative to
    the folder, its learner id or "", whether it is graded and why not), `missing` (learner ids without any
    file), and `learners` (every roster id, in the roster's order)."""

    graded: dict[str, Path] = field(default_factory=dict)
    files: list[dict] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    learners: list[str] = field(default_factory=list)

    def as_params(self) -> dict:
        """The plain data the gradebook job reads (a Snakemake param: a change reruns the tables, not the grades)."""
        return {"files": self.files, "missing": self.missing}


def listed_files(folder: Path) -> list[Path]:
    """Every file under `folder` (links and other non-folders too, never followed), up to MAX_DEPTH down, dot-files
    and dot-folders left out (an OS's .DS_Store), sorted."""
    found: list[Path] = []
    todo = [(folder, 0)]
    while todo:
        here, depth = todo.pop()
        for p in sorted(here.iterdir()):
            if p.name.startswith("."):
                continue
            if stat.S_ISDIR(p.lstat().st_mode) and depth < MAX_DEPTH:
                todo.append((p, depth + 1))
            else:  # a folder deeper down is listed too, and named as no file
                found.append(p)
            if len(found) > MAX_FILES:
                raise IntakeError(f"submissions: more than {MAX_FILES} files in {folder}")
    return sorted(found)


def owner(relative: Path, roster: Roster) -> tuple[str, str, int]:
    """(learner id from the name, how it was read, the Canvas file id or -1); ("", why, -1) when the name carries
    no roster learner."""
    ids = roster.by_id()
    top = relative.parts[0]
    if m := MOODLE_FOLDER.match(top):
        if m["plugin"] != "file":
            return m["id"], f"Moodle's {m['plugin']} submission, not a file to grade", -1
        return (m["id"], "", -1) if m["id"] in ids else ("", f"Moodle participant {m['id']} is not in the roster", -1)
    if len(relative.parts) == 1 and (m := CANVAS_NAME.match(top)):
        if m["id"] in ids:
            return m["id"], "", int(m["file"])
        if roster.format == "canvas":
            return "", f"Canvas user id {m['id']} is not in the roster", -1
    for candidate in (Path(top).stem, top.split(".")[0], top.split("_")[0]):  # ana.py, ana.ipynb.txt, ana_v2.py
        if candidate in ids:
            return candidate, "", -1
    return "", "its name carries no id of the roster", -1


def gradable(path: Path) -> str:
    """Why a learner's file cannot be graded ("" if it can): a link or no regular file, a suffix the grader does not
    read (a notebook saved as .ipynb.txt is one), a zip without exactly one notebook or .py."""
    from sdpa_lab.grading.classroom import refusal

    if why := refusal(path):
        return why
    name = path.name.lower()
    if name.endswith(".ipynb.txt"):
        return "a notebook saved as text (.ipynb.txt): rename it .ipynb (or have it handed in again) to grade it"
    if path.suffix.lower() == ".zip":
        try:
            graded_member(path)
        except ArchiveError as exc:
            return str(exc)
        return ""
    if path.suffix not in GRADED:
        return f"a {path.suffix or 'suffix-less'} file: only .py, .ipynb and a .zip holding one of them are graded"
    return ""


def intake(folder: str | os.PathLike, roster: Roster) -> Intake:
    """Every file under `folder` matched to `roster` and judged gradable or not; the latest gradable file of each
    learner graded (IntakeError when the folder is none)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise IntakeError(f"submissions: {folder} is not a folder")
    rows, candidates = [], {}
    for path in listed_files(folder):
        relative = path.relative_to(folder)
        learner, why, file_id = owner(relative, roster)
        why = why or gradable(path)
        rows.append({"file": relative.as_posix(), "learner": learner, "graded": False, "why": why})
        if learner and not why:
            latest = (file_id, path.lstat().st_mtime_ns, relative.as_posix())
            candidates.setdefault(learner, []).append((latest, len(rows) - 1, path))
    graded = {}
    for learner, found in candidates.items():
        found.sort()
        (_, chosen, path) = found[-1]
        graded[learner] = path
        rows[chosen]["graded"] = True
        for _, other, _ in found[:-1]:
            rows[other]["why"] = f"an earlier file: {rows[chosen]['file']} was graded"
    with_files = {r["learner"] for r in rows if r["learner"]}
    missing = [learner.id for learner in roster.learners if learner.id not in with_files]
    return Intake({k: graded[k] for k in sorted(graded)}, rows, missing, [learner.id for learner in roster.learners])


def class_intake(folder: str | os.PathLike, roster_path: str | os.PathLike, assignment: str | None,
                 table: Mapping[str, float]) -> Intake:
    """The class folder matched to the roster in `roster_path`, before any job: RosterError when the roster is bad
    or its assignment is worth other points than the rubric `table`, IntakeError when no file can be graded."""
    roster = read_roster(roster_path, assignment)
    if problem := roster_problem(roster, round(sum(table.values()), 2)):
        raise RosterError(problem)
    found = intake(folder, roster)
    if not found.graded:
        raise IntakeError(f"submissions: no file in {folder} can be graded for a learner of {roster_path}")
    return found
