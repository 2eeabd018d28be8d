"""Regrading one learner of a graded class: `sdpa-lab regrade LEARNER --submissions DIR`, on their stored seed."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sdpa_lab.grading import sandbox

from tests.pipeline.conftest import make_workdir, snakemake

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "solutions"
TIMING = ("seconds", "peak_mib", "learner_cpu_seconds")  # how long it took: the only fields a regrade may change


def _record(work: Path, learner: str) -> dict:
    return json.loads((work / "results" / "class" / "grades" / f"{learner}.json").read_text())


def _totals(work: Path) -> dict[str, str]:
    rows = csv.DictReader(io.StringIO((work / "results" / "class" / "gradebook.csv").read_text()))
    return {r["learner"]: r["points"] for r in rows if r["part"] == "total"}


def _regrade(work: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sdpa_lab.cli", "regrade", *args], cwd=work, capture_output=True,
                          text=True, timeout=600, env=dict(os.environ))


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
def test_a_regrade_reuses_the_stored_seed_grades_only_that_learner_and_updates_the_class(tmp_path, tiny_config):
    subs = tmp_path / "class"
    subs.mkdir()
    for name in ("correct", "no_scale"):
        shutil.copy(EXAMPLES / f"{name}.py", subs / f"{name}.py")
    work = make_workdir(tmp_path / "work", tiny_config)
    # no grading_seed: each grade draws a fresh seed, which the regrade must reuse
    proc = snakemake(work, "--config", f"submissions={subs}", "grading_n_samples=2000", targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    before, other = _record(work, "no_scale"), work / "results" / "class" / "grades" / "correct.json"
    other_stat = other.stat().st_mtime_ns
    overview = work / "reports" / "class.html"
    overview_stat = overview.stat().st_mtime_ns

    proc = _regrade(work, "no_scale", "--submissions", str(subs))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    after = _record(work, "no_scale")
    assert {k: v for k, v in after.items() if k not in TIMING} == {k: v for k, v in before.items() if k not in TIMING}
    assert after["seed"] == before["seed"] and after["n_samples"] == 2000
    assert other.stat().st_mtime_ns == other_stat  # the other learner was not graded again
    assert overview.stat().st_mtime_ns > overview_stat  # the class's outputs were rebuilt from the new record

    # The learner fixes their file: the regrade grades it on the same inputs, and the gradebook shows it.
    shutil.copy(EXAMPLES / "correct.py", subs / "no_scale.py")
    assert _totals(work)["no_scale"] != "10.0"
    proc = _regrade(work, "no_scale", "--submissions", str(subs))
    assert proc.returncode == 0, proc.stderr[-3000:]
    fixed = _record(work, "no_scale")
    assert fixed["seed"] == before["seed"] and fixed["exit_status"] == 0
    assert _totals(work) == {"correct": "10.0", "no_scale": "10.0"}
    assert other.stat().st_mtime_ns == other_stat


def test_a_regrade_without_a_record_says_so_and_exits_2(tmp_path):
    proc = _regrade(tmp_path, "nobody", "--submissions", str(tmp_path), "--no-update")
    assert proc.returncode == 2 and "no grade record" in proc.stderr and "grade the class first" in proc.stderr


PROGRESS = (EXAMPLES / "correct.py").read_text().replace("import numpy as np\n",
                                                        "import numpy as np\nfrom tqdm import tqdm\n", 1)


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
def test_a_module_added_regrades_only_the_learners_who_name_it_and_a_regrade_honours_it(tmp_path, tiny_config):
    subs = tmp_path / "class"
    subs.mkdir()
    shutil.copy(EXAMPLES / "correct.py", subs / "correct.py")
    (subs / "progress.py").write_text(PROGRESS.replace(
        "    for d in [x for x in [4, 16, 64, 256] if x < d_k] + [d_k]:",
        "    for d in tqdm([x for x in [4, 16, 64, 256] if x < d_k] + [d_k]):  # a progress bar"))
    work = make_workdir(tmp_path / "work", tiny_config)
    settings = ("--config", f"submissions={subs}", "grading_n_samples=2000", "grading_seed=9")
    proc = snakemake(work, *settings, targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _record(work, "progress")["exit_status"] == 2  # tqdm is not among the course's modules
    other = work / "results" / "class" / "grades" / "correct.json"
    other_stat = other.stat().st_mtime_ns

    config = tmp_path / "with_tqdm.yaml"
    config.write_text("grading_modules: [numpy, matplotlib, tqdm]\n")
    proc = snakemake(work, "--configfile", str(config), *settings, targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _record(work, "progress")["exit_status"] == 0 and "tqdm" in _record(work, "progress")["modules"]
    assert other.stat().st_mtime_ns == other_stat  # correct.py names no tqdm: its grade cannot change

    (work / "results" / "class" / "grades" / "progress.json").write_text(json.dumps(
        {**_record(work, "progress"), "modules": ["numpy", "matplotlib"]}))  # as graded before tqdm was added
    proc = _regrade(work, "progress", "--submissions", str(subs), "--configfile", str(config), "--no-update")
    assert proc.returncode == 0 and _record(work, "progress")["exit_status"] == 0, proc.stdout + proc.stderr
