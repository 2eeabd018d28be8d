"""A few mutations of the default config, and an alias bomb, refused by `snakemake -n` before any job, from
config/config.yaml or a --configfile, leaving results/ as it was (every mutation, without Snakemake:
tests/test_config.py)."""

from __future__ import annotations

import copy
import hashlib
import os
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
    shutil.copy(REPO / "environment.yml", dest / "environment.yml")  # every rule's conda:
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
    # Snakemake reads a --configfile itself (aliases and all); the workflow reads it again, strictly, and refuses
    # its first alias with its place, without spelling it out.
    work = workdir(tmp_path / "work")
    bomb = billion_laughs().replace("seed: *a9", "seed: 7\nvariance: {d_k: *a9, n_pairs: 2000}")
    (work / "bomb.yaml").write_text(bomb)
    before = tree(work / "results")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", "bomb.yaml"],
                          cwd=work, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert (f"config file {work / 'bomb.yaml'}: YAML alias *'a0' at line 2, column 10: aliases are not allowed"
            in said), said[-3000:]
    assert "lol" not in said and tree(work / "results") == before


def refused_by_snakemake(work: Path, *args: str) -> list[str]:
    """The lines of the error `snakemake -n` (with `args`) stops on in `work`, having changed nothing there:
    the ConfigError's own lines, without Snakemake's "File ..., line ..." frames."""
    before = tree(work)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", *args], cwd=work,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    said = next(out for out in (proc.stdout, proc.stderr) if "ConfigError in file" in out).splitlines()
    start = next(i for i, line in enumerate(said) if line.startswith("ConfigError in file"))
    lines = [line for line in said[start + 1:] if not line.lstrip().startswith("File ")]
    assert tree(work) == before and "Traceback" not in proc.stdout + proc.stderr, said
    return lines


@pytest.mark.pipeline
def test_snakemake_refuses_a_fifo_as_its_config_at_once(tmp_path):
    # Opening a FIFO for reading waits for a writer: the workflow's own read must not open it.
    work = workdir(tmp_path / "work")
    (work / "config" / "config.yaml").unlink()
    os.mkfifo(work / "config" / "config.yaml")
    lines = refused_by_snakemake(work)  # within the timeout: it used to hang
    assert lines == ["config file config/config.yaml: is a FIFO (named pipe), not a regular file; "
                     "a config is a plain file"], lines


@pytest.mark.pipeline
def test_snakemake_refuses_a_duplicate_key_in_a_configfile(tmp_path):
    # Snakemake's own loader keeps the last of a duplicate key; the workflow re-reads each --configfile strictly.
    work = workdir(tmp_path / "work")
    text = (work / "config" / "config.yaml").read_text() + "seed: 8\n"
    (work / "other.yaml").write_text(text)
    lines = refused_by_snakemake(work, "--configfile", "other.yaml")
    where = f"line {len(text.splitlines())}, column 1"
    assert lines == [f"config file {work / 'other.yaml'}: not valid YAML at {where}: duplicate key seed "
                     f"(first given at line {text.splitlines().index('seed: 20241129') + 1}, column 1); "
                     "give each setting once"], lines


@pytest.mark.pipeline
@pytest.mark.parametrize("setting, line", [
    ("seed=" + "9" * 5000, "config setting seed: --config seed=<an integer of 5,000 digits>: too many digits; "
                           "at most 100 are read (a seed has at most 20)"),
    ("s\u0435ed=7", "config setting s\u0435ed: unknown setting (a typo?); its name is not plain ASCII: "
                    "U+0435 CYRILLIC SMALL LETTER IE at character 2; allowed here: "),
], ids=["5000 digits", "look-alike"])
def test_snakemake_says_what_is_wrong_with_a_command_line_setting(tmp_path, setting, line):
    lines = refused_by_snakemake(workdir(tmp_path / "work"), "--config", setting)
    assert lines[0] == "invalid configuration:" and len(lines) == 2 and lines[1].strip().startswith(line), lines
    assert "inf" not in lines[1] and "9" * 20 not in lines[1]
