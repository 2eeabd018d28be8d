"""Thin Snakemake entry point: draw one figure of the report (sdpa_lab.report.figures) from the result CSVs."""

from pathlib import Path

from sdpa_lab.report.jobs import figure_job

figure_job(
    snakemake.params.figure,  # noqa: F821 (injected by Snakemake)
    Path(snakemake.input.results[0]).parent,  # noqa: F821
    snakemake.output.png,  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
