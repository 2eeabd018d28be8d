"""Thin Snakemake entry point: run the experiment the rule is named after, with its settings, and write its CSVs."""

from sdpa_lab.experiments.registry import trial_scores_files
from sdpa_lab.pipeline import run_job

rule, settings = snakemake.rule, snakemake.params.settings  # noqa: F821 (injected by Snakemake)
run_job(
    rule,  # each experiment rule is named after its experiment
    settings,
    dict(snakemake.output.items()),  # noqa: F821
    snakemake.log[0],  # noqa: F821
    trial_scores=trial_scores_files(rule, settings),  # the rule's `scores` inputs, by d_k
)
