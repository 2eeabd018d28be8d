"""Thin Snakemake entry point: draw the report's figures (sdpa_lab.report.figures)."""

from pathlib import Path

from sdpa_lab.report.jobs import figures_job

pngs = [Path(p) for p in snakemake.output if p.endswith(".png")]  # noqa: F821 (injected by Snakemake)
figures_job(
    Path(snakemake.input.results[0]).parent,  # noqa: F821
    pngs[0].parent,
    snakemake.log[0],  # noqa: F821
    names=[p.stem for p in pngs],
)
