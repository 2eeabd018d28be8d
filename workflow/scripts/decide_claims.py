"""Thin Snakemake entry point: decide every claim from the result CSVs into results/claims.csv."""

import logging
from pathlib import Path

from sdpa_lab.claims.model import write_claims
from sdpa_lab.claims.verdicts import summary
from sdpa_lab.shutdown import skip_final_collection

skip_final_collection()  # a job's process: no last garbage collection at exit (sdpa_lab.shutdown)

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO)  # noqa: F821
decision = write_claims(Path(snakemake.output.claims).parent, snakemake.output.claims, snakemake.config)  # noqa: F821
logging.info("\n%s", summary(decision))
