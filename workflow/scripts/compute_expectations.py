"""Thin Snakemake entry point: the finite-d_k expectations the claims ask for at a sweep
(sdpa_lab.claims.expectation_table), for rule `expectations` (the run's; a study's: calibrate_expectations.py)."""

from sdpa_lab.claims.expectation_table import expectations_job

expectations_job(
    snakemake.params.sweep,  # noqa: F821 (injected by Snakemake)
    snakemake.output[0],  # noqa: F821
    snakemake.log[0],  # noqa: F821
    rule=snakemake.rule,  # noqa: F821
)
