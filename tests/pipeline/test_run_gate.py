"""Before any job, a run prints its estimated cost and refuses what it cannot or should not start
unannounced; and its start sweeps what a hard kill left behind."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import TINY_CONFIG
from tests.pipeline.conftest import files_under, make_workdir, snakemake

CHEAP = ["results/forward_shape.csv"]  # one short job: enough to reach the start of a run


def long_config() -> dict:
    config = copy.deepcopy(TINY_CONFIG)
    config["variance"] = {"d_k": [4, 1024], "n_pairs": 10**9}  # about 4.6 h of CPU at the benchmarked rate
    return config


@pytest.mark.pipeline
def test_a_run_above_an_hour_starts_only_when_confirmed(tmp_path):
    work = make_workdir(tmp_path / "work", long_config())
    proc = snakemake(work, targets=CHEAP)
    assert proc.returncode != 0
    assert "sdpa-lab: estimated cost of the main run" in proc.stderr and " h of CPU" in proc.stderr, proc.stderr[-2000:]
    assert "refused before any job: this run is estimated at" in proc.stderr
    assert "add --config confirm_long_run=true" in proc.stderr
    assert files_under(work) == {}  # no job ran

    proc = snakemake(work, "--config", "confirm_long_run=true", targets=CHEAP)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert list(files_under(work)) == CHEAP
    # The switch is not an experiment's setting: without it the result is up to date, nothing reruns.
    proc = snakemake(work, "-n", targets=CHEAP)
    assert proc.returncode == 0 and "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-2000:]


@pytest.mark.pipeline
def test_a_run_larger_than_the_free_space_is_refused(tmp_path):
    config = copy.deepcopy(TINY_CONFIG)
    # 64 files of 10**8 trials x 4097 floats: about 200 TB, more than any disk this runs on has free.
    config["entropy_sweep"] = {"d_k": list(range(1, 65)), "T": 4096, "trials": 10**8}
    work = make_workdir(tmp_path / "work", config)
    proc = snakemake(work, "--config", "confirm_long_run=true", targets=CHEAP)
    assert proc.returncode != 0
    assert "refused before any job: this run would write about" in proc.stderr and "is free here" in proc.stderr, \
        proc.stderr[-2000:]
    assert files_under(work) == {}


@pytest.mark.pipeline
def test_a_dry_run_is_never_refused_for_its_cost(tmp_path):
    work = make_workdir(tmp_path / "work", long_config())
    proc = snakemake(work, "-n", targets=CHEAP)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.pipeline
def test_the_start_of_a_run_sweeps_a_killed_draws_temporaries(tmp_path):
    work = make_workdir(tmp_path / "work", TINY_CONFIG)
    scores = work / "results" / "trial_scores"
    scores.mkdir(parents=True)
    # What a kill -9 of rule trial_scores leaves, under the name of settings no longer in the config.
    killed = scores / ".seed7_T8_trials100000000_dk64.npy.k2j3x9.tmp"
    killed.write_bytes(b"\0" * 4096)
    unrelated = scores / "notes.txt"
    unrelated.write_text("mine\n")
    proc = snakemake(work, targets=CHEAP)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not killed.exists() and unrelated.exists()
