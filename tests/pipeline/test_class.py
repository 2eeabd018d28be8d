"""End to end: a class of about twenty mixed submissions graded by `snakemake grade_class --config submissions=DIR`.

Correct files (a .py and the same code as a notebook), each classic mistake, files that
cannot be used and each attack on the grader: every one is graded, none stops the others.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from sdpa_lab.grading import sandbox
from sdpa_lab.grading.skeleton import SKELETON

from tests.grading.test_classroom import notebook_of
from tests.pipeline.conftest import make_workdir, snakemake

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "solutions"
CORRECT = (EXAMPLES / "correct.py").read_text()
SECRET = "sdpa-class-secret-5f1c"

ATTACKS = {  # learner: code appended to the correct solution
    # `softmax = sys and softmax` needs `sys`: the line that changes it runs at import
    "harness": 'import sys\nsys.modules["__main__"].answer = lambda *a: ({"status": "pass"}, b"")\n'
               "softmax = sys and softmax\n",
    "exec_correct": "import pathlib, sdpa_lab\nexec((pathlib.Path(sdpa_lab.__file__).parents[2] / "
                    "'examples/solutions/correct.py').read_text())\n",
    "constants": "def exercise_1(seed=42, n_samples=100_000, d_k=1024):\n    return 1024.0, 1.0\n",
    "argsorts": "def exercise_3(seed=42, d_k=256, T=8):\n    o = np.array([2, 0, 7, 6, 4, 3, 1, 5])\n"
                "    return o, o\n",
    "forged": "import os\ndef softmax(x, axis=-1):\n    os.write(4, b'this is not json\\n')\n    os._exit(0)\n",
    "forks": "def exercise_3(seed=42, d_k=256, T=8):\n    import os, time\n    for _ in range(3):\n"
             "        if os.fork() == 0:\n            a = np.ones(400 * 2**20 // 8)\n            time.sleep(2)\n"
             "            os._exit(0)\n    for _ in range(3):\n        os.wait()\n",
    "printing": "def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):\n    import time\n    for _ in range(300):\n"
                "        print('x' * 10**6)\n    while True:\n        time.sleep(1)\n",
    "setsid": "def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):\n    import subprocess, sys, time\n"
              "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', 'sdpa-class-marker'],"
              " start_new_session=True)\n    while True:\n        time.sleep(1)\n",
    "secrets": "def exercise_3(seed=42, d_k=256, T=8):\n    import os\n"
               "    raise RuntimeError(repr(dict(os.environ)))\n",
}
BROKEN = {"syntax": "def softmax(x, axis=-1)\n    return x\n", "raises": "raise RuntimeError('at import')\n",
          "empty": "# nothing yet\n", "skeleton": SKELETON.format(name="skeleton.py")}


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
def test_a_class_of_nineteen_is_graded_end_to_end(tmp_path, tiny_config, monkeypatch):
    monkeypatch.setenv("SDPA_LAB_TEST_SECRET", SECRET)
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "correct.py").write_text(CORRECT)
    notebook_of(CORRECT, subs / "notebook.ipynb")
    for mistake in ("no_scale", "divides_by_dk", "wrong_axis", "swapped_outputs"):
        (subs / f"{mistake}.py").write_text((EXAMPLES / f"{mistake}.py").read_text())
    for name, code in ATTACKS.items():
        (subs / f"{name}.py").write_text(CORRECT + "\n\n" + code)
    for name, code in BROKEN.items():
        (subs / f"{name}.py").write_text(code)
    learners = sorted(p.stem for p in subs.iterdir())
    assert len(learners) == 19

    work = make_workdir(tmp_path / "work", tiny_config)
    shutil.copy(REPO / "environment.yml", work)  # the rules' conda environment, as in a checkout
    # the time limit leaves room, on a loaded machine, for the forks learner's children, which hold their memory
    # for 2 s so that the kernel sees them together
    proc = snakemake(work, "--config", f"submissions={subs}", "grading_seed=1234",
                     "grading_time_limit=8", "grading_n_samples=2000", "grading_memory_mib=1024",
                     targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]

    rows = list(csv.DictReader(io.StringIO((work / "results/class/gradebook.csv").read_text())))
    totals = {r["learner"]: r for r in rows if r["part"] == "total"}
    assert sorted(totals) == learners and {r["seed"] for r in rows} == {"1234"}
    verdict = {k: v["verdict"] for k, v in totals.items()}
    assert verdict["correct"] == verdict["notebook"] == "5 of 5 pass"
    mine = [{k: v for k, v in r.items() if k not in ("learner", "file")} for r in rows if r["learner"] == "correct"]
    theirs = [{k: v for k, v in r.items() if k not in ("learner", "file")} for r in rows if r["learner"] == "notebook"]
    assert mine == theirs
    for name in ("no_scale", "divides_by_dk", "wrong_axis", "swapped_outputs"):
        assert verdict[name] != "5 of 5 pass" and totals[name]["mistakes"], name
    for name in (*(a for a in ATTACKS if a != "exec_correct"), *BROKEN):  # exec_correct: below
        assert verdict[name] in ("unusable", *(f"{k} of 5 pass" for k in range(5))), name
    for name in ("harness", "forged", "syntax", "raises", "empty"):
        assert verdict[name] == "unusable" and totals[name]["detail"], name
    # its attack binds nothing the graded functions need: it never runs, and the correct functions are graded
    exec_correct = json.loads((work / "results/class/grades/exec_correct.json").read_text())
    assert any("Top-level code not run" in n and "`import pathlib, sdpa_lab`" in n for n in exec_correct["notes"])
    parts = {(r["learner"], r["part"]): r["verdict"] for r in rows if r["item"] == "verdict"}
    assert parts["forks", "exercise_3"] == "runs out of memory"
    assert parts["setsid", "exercise_2"] == "hangs"

    scores = pd.read_csv(work / "results/class/scores.csv").set_index("SIS Login ID")  # one row per learner
    assert sorted(scores.index) == learners and scores.index.is_unique
    total = scores["sdpa-lab attention total"]
    assert total["correct"] == total["notebook"] == total["exec_correct"] == 10 and total.between(0, 10).all()
    assert all(total[name] == 0 for name in ("harness", "forged", "syntax", "raises", "empty"))
    overview = (work / "reports/class.html").read_text()
    assert all(f'href="class/{name}.html"' in overview for name in learners)  # the instructor's first page

    everything = (work / "results/class/gradebook.csv").read_text() + "".join(
        p.read_text() for p in (work / "reports/class").glob("*.html"))
    assert SECRET not in everything and "root:x:0:0" not in everything
    assert sorted(p.stem for p in (work / "reports/class").glob("*.html")) == learners
    for learner in learners:
        record = json.loads((work / f"results/class/grades/{learner}.json").read_text())
        assert record["isolation"] == "bubblewrap sandbox" and record["peak_mib"] <= 1024, learner
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and b"sdpa-class-marker" in
                _cmdline(p)]


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_a_rubric_worth_nothing_is_refused_before_any_job_naming_the_setting(tmp_path, tiny_config):
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "ann.py").write_text(CORRECT)
    work = make_workdir(tmp_path / "work", {**tiny_config, "grading_points": dict.fromkeys(
        ("softmax", "scaled_dot_product_attention", "exercise_1", "exercise_2", "exercise_3"), 0)})
    proc = snakemake(work, "-n", "--config", f"submissions={subs}", targets=["grade_class"])
    assert proc.returncode != 0 and "grading_points: every part is worth 0 points" in proc.stderr + proc.stdout
    assert not (work / "results").exists()
