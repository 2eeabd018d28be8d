"""Thin Snakemake entry point: decide every claim from the result CSVs into results/claims.csv."""

import logging
from pathlib import Path

from sdpa_lab.claims.deciding import write_claims
from sdpa_lab.claims.expectation_table import read_expectations
from sdpa_lab.claims.verdicts import summary

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO)  # noqa: F821
claims = snakemake.output.claims  # noqa: F821 (injected by Snakemake)
decision = write_claims(
    Path(claims).parent,
    claims,
    snakemake.params.config,  # noqa: F821
    expectations=read_expectations(snakemake.input.expectations),  # noqa: F821
)
logging.info("\n%s", summary(decision))
