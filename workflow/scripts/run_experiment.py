"""Thin Snakemake entry point: run the experiment named by the rule and write its CSVs."""

from sdpa_lab.pipeline import run_job

run_job(
    snakemake.params.experiment,  # noqa: F821 (injected by Snakemake)
    snakemake.config,  # noqa: F821
    dict(snakemake.output.items()),  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
