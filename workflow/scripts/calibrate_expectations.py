"""Thin Snakemake entry point: a study's finite-d_k expectations (sdpa_lab.claims.expectation_table)."""

from sdpa_lab.claims.expectation_table import expectations_job

expectations_job(
    snakemake.params.sweep,  # noqa: F821 (injected by Snakemake)
    snakemake.output[0],  # noqa: F821
    snakemake.log[0],  # noqa: F821
    rule="calibration_expectations",
)
