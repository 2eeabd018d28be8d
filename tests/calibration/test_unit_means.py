"""A space study's unit-variance means made once for all its batches (expectation_table.unit_variance_means): the
expectations its batches compute on them, and the rows they write, are those computed without them."""

from __future__ import annotations

import json

import pytest

from sdpa_lab.calibration.runner import batch_job, run_batch
from sdpa_lab.calibration.studies import CORRECT_ARM, check_study
from sdpa_lab.claims import expectations as E
from sdpa_lab.claims.expectation_kinds import unit_variance_asked
from sdpa_lab.claims.expectation_table import (
    expectations_job,
    read_unit_variance_means,
    sweep_expectations,
    unit_variance_means,
)
from sdpa_lab.io import write_csv
from sdpa_lab.tables import csv_text

from tests.calibration.sizes import SMALLEST, SPACE_STUDY_BUDGET
from tests.claims.tables import lesson_csvs

pytestmark = pytest.mark.xdist_group("calibration_space")


@pytest.fixture(scope="module")
def study():
    """Two drawn configs of a space seed whose first two are quick, one run each."""
    return check_study({"space": {"seed": 2, "configs": 2, "max_cpu_s": SPACE_STUDY_BUDGET}, "seeds": 1,
                        "broken_seeds": 0, "batch": 2}, "cs")


def test_the_unit_variance_means_round_trip_through_their_file_to_the_bit(study, tmp_path):
    sweeps = study.sweeps()
    means = unit_variance_means(sweeps)
    assert means and all(isinstance(T, int) for _, T in means)
    out = tmp_path / "unit.csv"
    expectations_job(None, out, sweeps=sweeps)
    assert read_unit_variance_means(out) == means  # the same floats (shortest round-trip text)


def test_a_sweep_s_expectations_on_given_unit_means_are_those_it_computes(study, monkeypatch):
    sweeps = study.sweeps()
    means = unit_variance_means(sweeps)
    computed = [sweep_expectations(sweep) for sweep in sweeps]

    def not_computed(name, T):
        raise AssertionError(f"unit-variance mean of {name}, T = {T} computed, not taken from those given")

    monkeypatch.setattr(E, "unit_variance_mean", not_computed)
    assert [sweep_expectations(sweep, means) for sweep in sweeps] == computed
    # the given means are what the scaled expectations are built on: a different one moves those, and only those
    (name, T), (mean, se) = next(iter(means.items()))
    changed = set()
    for sweep, theirs in zip(sweeps, computed, strict=True):
        moved = sweep_expectations(sweep, {**means, (name, T): (mean + 1.0, se)})
        changed |= {key for key in theirs if moved[key] != theirs[key]}
    # (the scaled means, and the entropy's gap from 1/d_k to the scaled one: those unit_variance_asked names)
    assert changed and all(unit_variance_asked([key]) == {(name, T)} for key in changed)


def test_a_space_batch_on_the_study_s_unit_means_writes_the_rows_it_makes_without(study, tmp_path):
    sweeps = study.sweeps()
    lesson = tmp_path / "lesson"
    for name, table in lesson_csvs().items():
        write_csv(table, lesson / name)
    sweeps_file, unit_file, out = tmp_path / "sweeps.json", tmp_path / "unit.csv", tmp_path / "batch.csv"
    sweeps_file.write_text(json.dumps(sweeps), encoding="utf-8")
    expectations_job(None, unit_file, sweeps=sweeps)
    batch_job("cs", study.settings(), CORRECT_ARM, 0, out, unit_file, fixed_dir=lesson, sweeps_file=sweeps_file)
    assert out.read_text(encoding="utf-8") == csv_text(run_batch(study, CORRECT_ARM, 0, fixed_dir=lesson,
                                                                 sweeps=sweeps))


def test_a_table_of_other_expectations_is_not_read_as_unit_variance_means(tmp_path):
    out = tmp_path / "expectations.csv"
    expectations_job(SMALLEST, out)
    with pytest.raises(ValueError, match="not a table of unit-variance means"):
        read_unit_variance_means(out)
