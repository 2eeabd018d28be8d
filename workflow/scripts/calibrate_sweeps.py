"""Thin Snakemake entry point: a study's sweep configs (sdpa_lab.calibration.runner.sweeps_job)."""

from sdpa_lab.calibration.runner import sweeps_job

sweeps_job(
    snakemake.params.settings,  # noqa: F821 (injected by Snakemake)
    snakemake.wildcards.study,  # noqa: F821
    snakemake.output[0],  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
