"""The calibration study's last jobs: the tables from the batches' shares (rule calibration_tables) and checks.csv
from the batches' text (rule calibration_checks), beside each other (calibration.batched makes and merges the shares'
parts, calibration.shares writes and reads them)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import pandas as pd

from sdpa_lab.calibration import summary as s
from sdpa_lab.calibration.batched import batch_order, csv_shares, merge_shares, write_checks
from sdpa_lab.calibration.shares import paired_shares
from sdpa_lab.claims import ALPHA_FAMILY
from sdpa_lab.io import write_csv
from sdpa_lab.joblog import job_log


def aggregate(paths, out_dir, alpha_family: float = ALPHA_FAMILY, sweeps: dict[str, list] | None = None,
              preregistered: Collection[str] = (), shares: Sequence[str] | None = None,
              checks: bool = True) -> dict[str, pd.DataFrame]:
    """Write every summary table, and checks.csv unless not `checks`, to `out_dir` from the batches; return the
    summary tables (not the checks). `sweeps`: each study's sweep configs (Study.sweeps), for configs.csv and the
    false fails' configs; `preregistered`: the studies whose file fixed their size and stopping rule before they
    ran; `shares`: each batch's share (calibration.shares, in the order of `paths`), merged instead of reading the
    batches again."""
    paths = [str(p) for p in paths]
    ordered = batch_order(paths)
    parts = csv_shares(ordered) if shares is None else paired_shares(ordered, paths, shares)
    tables = merge_shares(parts, alpha_family, sweeps, preregistered)
    for stem, table in tables.items():
        write_csv(table, f"{out_dir}/{stem}.csv")
    if checks:
        write_checks(ordered, f"{out_dir}/checks.csv")
    return tables


def tables_job(batches, out_dir, log_path: str | None = None, sweeps: dict[str, list] | None = None,
               preregistered: Collection[str] = (), shares: Sequence[str] | None = None) -> None:
    """What rule calibration_tables runs: aggregate (of the batches' shares, given them) but checks.csv, logged."""
    with job_log("calibration_tables", log_path) as logger:
        tables = aggregate(batches, out_dir, sweeps=sweeps, preregistered=preregistered, shares=shares, checks=False)
        h = s.headline(tables)
        logger.info("calibration tables: %d batches, %d checks, %d correct runs, %d with a false fail; wrote %s",
                    len(batches), int(tables["runs"].n_checks.sum()), h["runs"], h["runs_with_fail"], out_dir)


def checks_job(batches, out: str | Path, log_path: str | None = None) -> None:
    """What rule calibration_checks runs: checks.csv from the batches (write_checks, in batch_order), logged; a job
    of its own, beside the tables job, so that the two run at once at the study's end."""
    with job_log("calibration_checks", log_path) as logger:
        write_checks(batch_order([str(p) for p in batches]), out)
        logger.info("calibration checks: %d batches into %s", len(batches), out)
