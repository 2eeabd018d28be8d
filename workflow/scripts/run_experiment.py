"""Thin Snakemake entry point: run the experiment the rule is named after and write its CSVs."""

from sdpa_lab.pipeline import run_job
from sdpa_lab.shutdown import skip_final_collection

skip_final_collection()  # a job's process: no last garbage collection at exit (sdpa_lab.shutdown)

run_job(
    snakemake.rule,  # noqa: F821 (injected by Snakemake): each experiment rule is named after its experiment
    snakemake.config,  # noqa: F821
    dict(snakemake.output.items()),  # noqa: F821
    snakemake.log[0],  # noqa: F821
    inputs=list(snakemake.input),  # noqa: F821 (the trial-score files, for the experiments that share them)
    checked=True,  # common.smk checked this config before any job ran
)
