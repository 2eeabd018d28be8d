"""Thin Snakemake entry point: draw every figure of the report (sdpa_lab.report.figures) from the result CSVs."""

from pathlib import Path

from sdpa_lab.report.jobs import figures_job

figures_job(
    Path(snakemake.input.claims).parent,  # noqa: F821 (injected by Snakemake)
    Path(snakemake.output[0]).parent,  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
