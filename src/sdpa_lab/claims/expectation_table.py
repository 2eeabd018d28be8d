"""The finite-d_k expectations a sweep's claims ask for, as a table: computed once by a job of their own (the
workflow's `expectations` rule, a calibration study's `calibration_expectations`) and read back, the same
floats, by the jobs that decide the claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sdpa_lab.joblog import job_log
from sdpa_lab.tables import Rows

# The columns of an expectations table: one row per expectation the claims ask for.
EXPECTATION_COLUMNS = {"kind": "str", "statistic": "str", "d_k": "int", "T": "int", "mean": "float", "se": "float"}


def sweep_expectations(sweep: Mapping, unit_means: Mapping | None = None) -> dict:
    """The finite-d_k expectations the claims ask for on the tables of `sweep`
    (registry.expectations_asked: each claim's own), computed: key -> (mean, Monte Carlo SE), as Results takes them.
    Asked of the settings declared as read (registry.expectation_sweep), so the workflow reruns them when those change.
    `unit_means`: the unit-variance means they are built on, if computed already (read_unit_variance_means)."""
    from sdpa_lab.claims.expectation_kinds import expectations
    from sdpa_lab.claims.registry import expectation_sweep, expectations_asked

    return expectations(expectations_asked(expectation_sweep(sweep)), unit_means)


# A space study's unit-variance means (expectations.unit_variance_mean, which depend on the statistic and T only),
# made once for all its batches, are written as an expectations table of this kind, at d_k 0.
UNIT_VARIANCE = "unit_variance"


def unit_variance_means(sweeps: list[Mapping]) -> dict:
    """The unit-variance means the expectations of any of `sweeps` are built on: (statistic, T) -> (mean, SE)."""
    from sdpa_lab.claims.expectation_kinds import unit_variance_asked
    from sdpa_lab.claims.expectations import unit_variance_mean
    from sdpa_lab.claims.registry import expectation_sweep, expectations_asked

    asked = set().union(*(unit_variance_asked(expectations_asked(expectation_sweep(s))) for s in sweeps))
    return {(name, T): unit_variance_mean(name, T) for name, T in sorted(asked)}


def read_unit_variance_means(path: str | Path) -> dict:
    """The unit-variance means written by unit_variance_job, back as unit_variance_means gives them."""
    table = read_expectations(path)
    if any(kind != UNIT_VARIANCE or d_k != 0 for kind, _, d_k, _ in table):
        raise ValueError(f"{path}: not a table of unit-variance means (kind {UNIT_VARIANCE!r}, d_k 0 in every row)")
    return {(name, T): value for (_, name, _, T), value in table.items()}


def expectation_rows(expectations: Mapping) -> Rows:
    """The expectations (sweep_expectations) as rows (EXPECTATION_COLUMNS)."""
    return [dict(zip(EXPECTATION_COLUMNS, (*key, mean, se), strict=True))
            for key, (mean, se) in expectations.items()]


def read_expectations(path: str | Path) -> dict:
    """The expectations table at `path` (expectation_rows, written as CSV) back as sweep_expectations gives them:
    the same floats (written in shortest round-trip form)."""
    from sdpa_lab.results import read_table

    table = read_table(Path(path).parent, Path(path).name, EXPECTATION_COLUMNS)
    columns = (table[c].tolist() for c in EXPECTATION_COLUMNS)
    return {(kind, statistic, d_k, T): (mean, se) for kind, statistic, d_k, T, mean, se in zip(*columns, strict=True)}


def expectations_job(sweep: Mapping | None, out: str | Path, log_path: str | None = None,
                     rule: str = "expectations", sweeps: list[Mapping] | None = None) -> None:
    """What rule `rule` runs: the expectations the claims ask for at `sweep` (sweep_expectations), or, given a
    space study's `sweeps`, the unit-variance means theirs are built on (unit_variance_means, kind UNIT_VARIANCE),
    written to `out` (CSV, EXPECTATION_COLUMNS). Logs the process's CPU seconds (benchmarks/calibration.py reads a
    study's)."""
    import resource

    from sdpa_lab.io import write_csv

    with job_log(rule, log_path) as logger:
        made = (sweep_expectations(sweep) if sweeps is None else
                {(UNIT_VARIANCE, name, 0, T): value for (name, T), value in unit_variance_means(sweeps).items()})
        rows = expectation_rows(made)
        write_csv(rows, out)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        logger.info("%d expectations written to %s; CPU s: process %.2f", len(rows), out,
                    usage.ru_utime + usage.ru_stime)
