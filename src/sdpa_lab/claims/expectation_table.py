"""The finite-d_k expectations a sweep's claims ask for, as a table: computed once by a job of their own (the
workflow's `expectations` rule, a calibration study's `calibration_expectations`) and read back, the same
floats, by the jobs that decide the claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sdpa_lab.expectation_inputs import expectation_sweep
from sdpa_lab.joblog import job_log
from sdpa_lab.tables import Rows

# The columns of an expectations table: one row per expectation the claims ask for.
EXPECTATION_COLUMNS = {"kind": "str", "statistic": "str", "d_k": "int", "T": "int", "mean": "float", "se": "float"}


def sweep_expectations(sweep: Mapping) -> dict:
    """The finite-d_k expectations the claims ask for on the tables of `sweep`
    (softmax_saturation.expectations_asked), computed: key -> (mean, Monte Carlo SE), as Results takes them.
    Asked of the settings declared as read (expectation_inputs), so the workflow reruns them when those change."""
    from sdpa_lab.claims.expectations import expectations
    from sdpa_lab.claims.softmax_saturation import expectations_asked

    return expectations(expectations_asked(expectation_sweep(sweep)))


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


def expectations_job(sweep: Mapping, out: str | Path, log_path: str | None = None,
                     rule: str = "expectations") -> None:
    """What rule `rule` runs: the expectations the claims ask for at `sweep` (sweep_expectations), written to
    `out` (CSV, EXPECTATION_COLUMNS). Logs the process's CPU seconds (benchmarks/calibration.py reads a study's)."""
    import resource

    from sdpa_lab.io import write_csv

    with job_log(rule, log_path) as logger:
        rows = expectation_rows(sweep_expectations(sweep))
        write_csv(rows, out)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        logger.info("%d expectations written to %s; CPU s: process %.2f", len(rows), out,
                    usage.ru_utime + usage.ru_stime)
