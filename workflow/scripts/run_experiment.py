"""Thin Snakemake entry point: run the experiment the rule is named after, with its settings, and write its CSVs.

It imports the experiment's own module alone (the rule's `module` param), not the registry of every experiment.
"""

from sdpa_lab.experiments.declaration import declared_in
from sdpa_lab.pipeline import run_job

rule, params = snakemake.rule, snakemake.params  # noqa: F821 (injected by Snakemake)
run_job(
    rule,  # each experiment rule is named after its experiment
    params.settings,
    dict(snakemake.output.items()),  # noqa: F821
    snakemake.log[0],  # noqa: F821
    trial_scores=declared_in(params.module, rule).trial_scores_files(params.settings),  # the rule's `scores` inputs
    module=params.module,
)
