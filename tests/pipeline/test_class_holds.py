"""End to end: a class whose files have odd names, a learner with two files and links to files outside the folder is
graded by `snakemake grade_class`: none stops the others, each odd name is graded under a safe id and shown as it is
(its control characters escaped),
each link is refused unread, and what a link points to appears in no output.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from sdpa_lab.grading import sandbox
from sdpa_lab.grading.classroom import learner_ids

from tests.grading.test_classroom import notebook_of
from tests.pipeline.conftest import make_workdir, snakemake

REPO = Path(__file__).resolve().parents[2]
CORRECT = (REPO / "examples" / "solutions" / "correct.py").read_text()
ODD = ["my file.py", "o'neil.py", "a<b>.py", "new\nline.py", "\u0430nn.py"]  # \u0430: a Cyrillic a
MARKER = "instructor-only-2b9f: root:x:0:0"


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
def test_odd_names_duplicates_and_links_never_stop_a_class(tmp_path, tiny_config):
    outside = tmp_path / "home" / "passwd"
    outside.parent.mkdir()
    outside.write_text(f"{MARKER}\n")
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "ann.py").write_text(CORRECT)
    for name in ODD:
        (subs / name).write_text(CORRECT)
    (subs / "x.py").write_text(CORRECT)
    notebook_of(CORRECT, subs / "x.ipynb")
    (subs / "eve.py").symlink_to(outside)
    (subs / "gone.py").symlink_to(tmp_path / "nothing.py")
    names = sorted(p.name for p in subs.iterdir())
    ids = learner_ids(names)

    work = make_workdir(tmp_path / "work", tiny_config)
    shutil.copy(REPO / "environment.yml", work)
    proc = snakemake(work, "--config", f"submissions={subs}", "grading_seed=7", "grading_time_limit=20",
                     "grading_n_samples=2000", targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]

    book = (work / "results/class/gradebook.csv").read_text()
    totals = {r["learner"]: r for r in csv.DictReader(io.StringIO(book)) if r["part"] == "total"}
    assert sorted(totals) == sorted(ids.values())
    # each original name in `file`, as it is but for its control characters, escaped (a newline as \n)
    assert {totals[ids[n]]["file"] for n in names} == {n.replace("\n", "\\n") for n in names}
    for name in [*ODD, "ann.py", "x.py", "x.ipynb"]:
        assert totals[ids[name]]["verdict"] == "5 of 5 pass", name
    for name in ("eve.py", "gone.py"):
        assert totals[ids[name]]["verdict"] == "unusable" and "symbolic link" in totals[ids[name]]["detail"]
    pages = {p.stem: p.read_text() for p in (work / "reports/class").glob("*.html")}
    assert sorted(pages) == sorted(ids.values())
    assert "a&lt;b&gt;.py" in pages[ids["a<b>.py"]] and "a<b>.py" not in pages[ids["a<b>.py"]]
    records = [json.loads(p.read_text()) for p in (work / "results/class/grades").glob("*.json")]
    shown = book + "".join(pages.values()) + json.dumps(records) + "".join(
        p.read_text(errors="replace") for p in (work / "logs").rglob("*.log"))
    assert MARKER not in shown and "root:x" not in shown
