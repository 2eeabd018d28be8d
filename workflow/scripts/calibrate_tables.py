"""Thin Snakemake entry point: the calibration batches' shares into tidy tables (sdpa_lab.calibration.tables_jobs)."""

from pathlib import Path

from sdpa_lab.calibration.runner import read_sweeps
from sdpa_lab.calibration.studies import load_studies
from sdpa_lab.calibration.tables_jobs import tables_job

tables_job(
    snakemake.input.batches,  # noqa: F821 (injected by Snakemake)
    Path(snakemake.output.runs).parent,  # noqa: F821
    snakemake.log[0],  # noqa: F821
    {Path(p).stem: read_sweeps(p) for p in snakemake.input.sweeps},  # noqa: F821
    [name for name, study in load_studies().items() if study.preregistered],  # the promise is theirs to show
    snakemake.input.shares,  # noqa: F821 (each batch's share, in the batches' order)
)
