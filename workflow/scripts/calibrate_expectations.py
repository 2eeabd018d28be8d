"""Thin Snakemake entry point for rule calibration_expectations (sdpa_lab.claims.expectation_table): a study's
finite-d_k expectations at its sweep, or a space study's unit-variance means over its drawn sweeps."""

from sdpa_lab.calibration.runner import read_sweeps
from sdpa_lab.claims.expectation_table import expectations_job

expectations_job(
    snakemake.params.sweep,  # noqa: F821 (injected by Snakemake)
    snakemake.output[0],  # noqa: F821
    snakemake.log[0],  # noqa: F821
    rule=snakemake.rule,  # noqa: F821
    sweeps=read_sweeps(snakemake.input.sweeps) if snakemake.input.sweeps else None,  # noqa: F821
)
