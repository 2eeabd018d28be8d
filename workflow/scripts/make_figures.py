"""Thin Snakemake entry point: draw the report's figures (sdpa_lab.report.figures)."""

from pathlib import Path

from sdpa_lab.report.jobs import figures_job
from sdpa_lab.report.specs import FIGURE_JOBS

names = FIGURE_JOBS[snakemake.rule]  # noqa: F821 (injected by Snakemake)
figures_job(
    Path(snakemake.input.results[0]).parent,  # noqa: F821
    Path(getattr(snakemake.output, f"{names[0]}_png")).parent,  # noqa: F821
    snakemake.log[0],  # noqa: F821
    names=names,
)
