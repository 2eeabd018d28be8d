"""End to end: a class as Canvas hands it over, graded by `snakemake grade_class` with its roster and overrides, and
a bad roster or override refused before any job."""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from sdpa_lab.grading import sandbox

from tests.grading.lms_classes import CANVAS_ROSTER, MOODLE_ROSTER, zip_bytes
from tests.grading.test_classroom import notebook_of
from tests.pipeline.conftest import make_workdir, snakemake

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "solutions"
needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")


def _class(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Chidi hands in a mistake, then the correct file (graded); Petra the correct file in a late zip; Ren a
    .ipynb.txt; Luz nothing; a file of a user who is not on the roster."""
    subs = tmp_path / "submissions"
    subs.mkdir()
    correct = (EXAMPLES / "correct.py").read_text()
    (subs / "okaforchidi_5101_88001_attention.py").write_text((EXAMPLES / "no_scale.py").read_text())
    (subs / "okaforchidi_5101_88017_attention.py").write_text(correct)
    (subs / "novakpetra_late_5102_88005_lab.zip").write_bytes(zip_bytes(
        {"lab/attention.py": correct.encode(), "__MACOSX/lab/._attention.py": b"\x00"}))
    (subs / "tanakaren_5103_88009_attention.ipynb.txt").write_text("{}")
    (subs / "strangerx_5999_88011_attention.py").write_text(correct)
    roster = tmp_path / "export.csv"
    roster.write_text(CANVAS_ROSTER)
    overrides = tmp_path / "overrides.csv"
    overrides.write_text("learner,part,points,comment\n5102,exercise_3,1.5,half marks: see my note\n")
    return subs, roster, overrides


@needs_sandbox
def test_a_canvas_class_goes_from_its_download_to_an_import_with_one_row_per_roster_learner(tmp_path, tiny_config):
    subs, roster, overrides = _class(tmp_path)
    work = make_workdir(tmp_path / "work", tiny_config)
    shutil.copy(REPO / "environment.yml", work)
    proc = snakemake(work, "--config", f"submissions={subs}", f"roster={roster}", f"grading_overrides={overrides}",
                     "grading_assignment=Attention lab", "grading_seed=7", "grading_n_samples=2000",
                     "grading_time_limit=30", "grading_memory_mib=1024", targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = pd.read_csv(work / "results/class/lms_import.csv", dtype={"ID": str})
    assert imported["Student"][0].strip() == "Points Possible"
    total = imported.iloc[1:].set_index("ID")["Attention lab (7001)"]
    assert total.to_dict() == {"5101": 10, "5102": 10 - 2 + 1.5, "5103": 0, "5104": 0}
    assert sorted(p.name for p in (work / "reports/class").iterdir()) == ["5101.html", "5102.html"]
    assert "half marks: see my note" in (work / "reports/class/5102.html").read_text()
    overview = (work / "reports/class.html").read_text()
    for shown in ("strangerx_5999_88011_attention.py", "tanakaren_5103_88009_attention.ipynb.txt",
                  "Reyes, Luz", "missing: no submission"):
        assert shown in overview


@pytest.mark.parametrize("setting, says", [
    ("roster", "roster .*: its header .* is none of"),
    ("grading_overrides", "grading_overrides .* line 2: learner '9' is not in the class"),
])
def test_a_bad_roster_or_override_is_refused_before_any_job_in_one_line(tmp_path, tiny_config, setting, says):
    subs, roster, overrides = _class(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("who,score\n9,1\n" if setting == "roster" else "learner,part,points\n9,softmax,1\n")
    given = {"roster": roster, "grading_overrides": overrides, setting: bad}
    work = make_workdir(tmp_path / "work", tiny_config)
    proc = snakemake(work, "-n", "--config", f"submissions={subs}", "grading_assignment=Attention lab",
                     *(f"{k}={v}" for k, v in given.items()), targets=["grade_class"])
    said = proc.stderr + proc.stdout
    assert proc.returncode != 0 and re.search(says, said), said[-2000:]
    assert not (work / "results").exists()


@needs_sandbox
def test_a_moodle_class_goes_from_its_folders_to_the_worksheet_with_grade_filled_in(tmp_path, tiny_config):
    """Aiko's correct file in her folder (a name with a space), Bruno's notebook in a zip, Chen's online text,
    Dara nothing."""
    subs = tmp_path / "download"
    correct = (EXAMPLES / "correct.py").read_text()
    for folder in ("Aiko Mori_301_assignsubmission_file_", "Bruno Silva_302_assignsubmission_file_",
                   "Chen Wei_303_assignsubmission_onlinetext_"):
        (subs / folder).mkdir(parents=True)
    (subs / "Aiko Mori_301_assignsubmission_file_" / "my attention.py").write_text(correct)
    notebook = notebook_of(correct, tmp_path / "attention.ipynb").read_bytes()
    (subs / "Bruno Silva_302_assignsubmission_file_" / "hw.zip").write_bytes(
        zip_bytes({"hw/attention.ipynb": notebook, "hw/.DS_Store": b"\x00"}))
    (subs / "Chen Wei_303_assignsubmission_onlinetext_" / "onlinetext.html").write_text("<p>see gist</p>")
    roster = tmp_path / "worksheet.csv"
    roster.write_text(MOODLE_ROSTER, encoding="utf-8")
    work = make_workdir(tmp_path / "work", tiny_config)
    proc = snakemake(work, "--config", f"submissions={subs}", f"roster={roster}", "grading_seed=7",
                     "grading_n_samples=2000", "grading_time_limit=30", "grading_memory_mib=1024",
                     targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader(io.StringIO((work / "results/class/lms_import.csv").read_text(encoding="utf-8"))))
    assert [(r["Identifier"], float(r["Grade"])) for r in rows] == [
        ("Participant 301", 10.0), ("Participant 302", 10.0), ("Participant 303", 0.0), ("Participant 304", 0.0)]
    record = (work / "results/class/grades/301.json").read_text()
    assert "Aiko Mori_301_assignsubmission_file_/my attention.py" in record  # what regrade finds again
    overview = (work / "reports/class.html").read_text()
    assert "onlinetext" in overview and "Dara Quinn" in overview and "missing: no submission" in overview
