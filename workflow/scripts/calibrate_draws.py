"""Thin Snakemake entry point: what every arm of a calibration batch makes the same (runner.draws_job)."""

from sdpa_lab.calibration.runner import draws_job

draws_job(
    snakemake.wildcards.study,  # noqa: F821 (injected by Snakemake)
    snakemake.params.settings,  # noqa: F821
    int(snakemake.wildcards.batch),  # noqa: F821
    snakemake.output[0],  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
