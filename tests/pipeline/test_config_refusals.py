"""A few mutations of the default config, and an alias bomb, refused by `snakemake -n` before any job, from
config/config.yaml or a --configfile, leaving results/ as it was (every mutation, without Snakemake:
tests/test_config.py)."""

from __future__ import annotations

import copy
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.test_config import DEFAULT, billion_laughs, mutate

SNAKEMAKE_CASES = [  # each costs a Snakemake start: a few
    ("nan threshold", ("set", ("learning", "loss_threshold"), float("nan")), "learning.loss_threshold",
     "config/config.yaml"),
    ("nan threshold", ("set", ("learning", "loss_threshold"), float("nan")), "learning.loss_threshold",
     "--configfile"),
    ("huge list", ("set", ("learning", "learning_rates"), list(range(1, 5000)) + ["x"]), "learning.learning_rates",
     "--configfile"),
    ("deep", ("wrap", ("entropy_sweep", "T"), "deep"), "entropy_sweep.T", "config/config.yaml"),
    ("unknown key", ("add", ("gradient",), ("trails", float("inf"))), "gradient.trails", "--configfile"),
]


def workdir(dest: Path) -> Path:
    """A copy of the workflow with a results/ folder to watch."""
    dest.mkdir()
    shutil.copy(REPO / "Snakefile", dest / "Snakefile")
    for folder in ("workflow", "profiles", "config"):
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "results").mkdir()
    (dest / "results" / "variance.csv").write_text("seed,d_k\n1,4\n")
    return dest


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.pipeline
@pytest.mark.parametrize("mutation, setting, how", [c[1:] for c in SNAKEMAKE_CASES],
                         ids=[f"{c[0]}, {c[3]}" for c in SNAKEMAKE_CASES])
def test_snakemake_refuses_a_mutated_config_before_any_job(tmp_path, mutation, setting, how):
    work = workdir(tmp_path / "work")
    config = copy.deepcopy(DEFAULT)
    mutate(config, mutation)
    text = yaml.safe_dump(config)
    if how == "--configfile":
        (work / "other.yaml").write_text(text)
        extra = ["--configfile", "other.yaml"]
    else:
        (work / "config" / "config.yaml").write_text(text)
        extra = []
    before = tree(work / "results")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", *extra], cwd=work,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr  # under -n, Snakemake prints the error on stdout
    assert f"config setting {setting}" in said, said[-3000:]
    assert tree(work / "results") == before


@pytest.mark.pipeline
def test_snakemake_refuses_an_alias_bomb_configfile_before_any_job(tmp_path):
    # Snakemake reads a --configfile itself (aliases and all); the workflow's check must not spell it out.
    work = workdir(tmp_path / "work")
    bomb = billion_laughs().replace("seed: *a9", "seed: 7\nvariance: {d_k: *a9, n_pairs: 2000}")
    (work / "bomb.yaml").write_text(bomb)
    before = tree(work / "results")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", "bomb.yaml"],
                          cwd=work, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert "config setting variance: holds more than 10,000 values" in said, said[-3000:]
    assert tree(work / "results") == before
