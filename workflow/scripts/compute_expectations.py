"""Thin Snakemake entry point: the finite-d_k expectations the run's claims ask for
(sdpa_lab.claims.expectation_table), computed beside the experiments rather than after them."""

from sdpa_lab.claims.expectation_table import expectations_job

expectations_job(
    snakemake.params.config,  # noqa: F821 (injected by Snakemake)
    snakemake.output[0],  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
