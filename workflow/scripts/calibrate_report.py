"""Thin Snakemake entry point: reports/calibration.html from the calibration tables (sdpa_lab.calibration.report)."""

from pathlib import Path

from sdpa_lab.calibration.report import report_job

report_job(
    Path(snakemake.input.runs).parent,  # noqa: F821 (injected by Snakemake)
    snakemake.output[0],  # noqa: F821
    snakemake.log[0],  # noqa: F821
    snakemake.input.shares,  # noqa: F821 (the batches' shares: the z's the QQ figure plots)
)
