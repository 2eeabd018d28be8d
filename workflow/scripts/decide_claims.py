"""Thin Snakemake entry point: decide every claim from the result CSVs into results/claims.csv."""

from pathlib import Path

from sdpa_lab.claims.deciding import write_claims
from sdpa_lab.claims.expectation_table import read_expectations
from sdpa_lab.claims.verdicts import summary
from sdpa_lab.joblog import job_log

with job_log("claims", snakemake.log[0]) as logger:  # noqa: F821 (injected by Snakemake)
    claims = snakemake.output.claims  # noqa: F821
    decision = write_claims(
        Path(claims).parent,
        claims,
        snakemake.params.config,  # noqa: F821
        expectations=read_expectations(snakemake.input.expectations),  # noqa: F821
    )
    logger.info("\n%s", summary(decision))
