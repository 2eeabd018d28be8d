"""The calibration target through Snakemake, on a tiny study: left out of the default target, a bad study
refused before any job, every batch, the expectations and the report made, and nothing to do the second time."""

from __future__ import annotations

import pandas as pd
import yaml

from sdpa_lab.calibration.studies import ARMS, BROKEN_ARMS, CORRECT_ARM, check_study
from sdpa_lab.claims.expectation_table import read_expectations, sweep_expectations

from tests.calibration.test_calibration import study
from tests.pipeline.conftest import copy_of, snakemake


# On a copy of the tiny run, whose lesson tables the batches read.
def test_snakemake_calibration_target_with_a_tiny_study(tmp_path, tiny_run):
    work = copy_of(tiny_run, tmp_path / "work")
    (work / "config" / "calibration").mkdir()
    (work / "config" / "calibration" / "tiny.yaml").write_text(yaml.safe_dump(study(4, 2, 2)))

    dry = snakemake(work, "-n", "--forceall")  # the default target, every job of it: none runs the study
    assert dry.returncode == 0, dry.stderr
    assert "rule report:" in dry.stdout
    assert "calibration_batch" not in dry.stdout and "results/calibration" not in dry.stdout

    bad_study = work / "config" / "calibration" / "bad.yaml"
    bad_study.write_text(yaml.safe_dump({**study(4, 2, 2), "batch": 0}))
    bad = snakemake(work, "-n", "calibration")  # a bad study stops the run before any job
    assert bad.returncode != 0 and "setting batch" in bad.stdout + bad.stderr
    bad_study.unlink()

    proc = snakemake(work, "calibration")
    assert proc.returncode == 0, proc.stderr
    # batch 0, which the broken arms run too, read its draws, made once: a temporary file, gone with the batches
    assert (proc.stdout + proc.stderr).count("rule calibration_draws:") == 1
    assert not list((work / "results" / "calibration").rglob("*.npz"))
    checks = pd.read_csv(work / "results" / "calibration" / "checks.csv")
    assert checks.groupby("arm").seed_index.nunique().to_dict() == {CORRECT_ARM: 4, **{a: 2 for a in BROKEN_ARMS}}
    assert (work / "reports" / "calibration.html").is_file()
    tiny = check_study(study(4, 2, 2), "tiny")  # its batch files, one more for a broken arm added
    assert len(list((work / "results" / "calibration" / "batches" / "tiny").glob("*/batch*.csv"))) == sum(
        len(tiny.batches(arm)) for arm in ARMS)
    assert read_expectations(work / "results" / "calibration" / "expectations" / "tiny.csv") == \
           sweep_expectations(study()["sweep"])

    again = snakemake(work, "-n", "calibration")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout, again.stdout
