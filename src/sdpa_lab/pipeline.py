"""What an experiment rule runs: the experiment's tables from its settings, written atomically.

workflow/scripts/run_experiment.py hands the rule's name, the module that declares it, its
settings (its `params`), outputs and trial-score inputs to `run_job`, which imports that module
alone (not the registry, which imports every experiment). Everything here runs (and is tested)
without Snakemake.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sdpa_lab.attention import SHIPPED, Attention
from sdpa_lab.experiments.declaration import Experiment, declared_in
from sdpa_lab.io import write_csv
from sdpa_lab.joblog import job_log
from sdpa_lab.tables import Rows

if TYPE_CHECKING:
    from sdpa_lab.experiments.trial_scores import TrialScores

# The tables of one experiment, by output key (sdpa_lab.experiments.registry).
Tables = dict[str, Rows]


def run_experiment(name: str, settings: Mapping, trial_scores: Mapping[int, TrialScores] | None = None,
                   attention: Attention = SHIPPED) -> Tables:
    """The tables of registered experiment `name` (registry.EXPERIMENTS): `run_declared`."""
    from sdpa_lab.experiments.registry import EXPERIMENTS  # every experiment: not in a job, which runs one

    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return run_declared(EXPERIMENTS[name], settings, trial_scores, attention)


def run_declared(experiment: Experiment, settings: Mapping, trial_scores: Mapping[int, TrialScores] | None = None,
                 attention: Attention = SHIPPED) -> Tables:
    """The tables of `experiment` with `settings` (registry.settings_of), measuring `attention` if it
    takes the attention (Experiment.takes_attention; the pipeline's: the shipped one).

    The shared trial scores are read from `trial_scores` ({d_k: .npy path or held array,
    experiments.trial_scores}); those not given are drawn in process, with the same numbers.
    """
    given = {"attention": attention} if experiment.takes_attention else {}
    return experiment.load()(settings, dict(trial_scores or {}), **given)


def run_job(name: str, settings: Mapping, outputs: Mapping[str, str], log_path: str | None = None,
            trial_scores: Mapping[int, str] | None = None, *, module: str) -> None:
    """Run experiment `name`, declared in `module` (its Experiment.module), and write each table to
    outputs[<its key>], logging to `log_path`. Imports `module` and what it imports, no other experiment."""
    with job_log(name, log_path) as logger:
        tables = run_declared(declared_in(module, name), settings, trial_scores)
        if set(tables) != set(outputs):
            raise ValueError(f"experiment {name!r} makes tables {sorted(tables)} but the rule names {sorted(outputs)}")
        for key, table in tables.items():
            write_csv(table, outputs[key])
            logger.info("%s: wrote %d rows to %s", name, len(table), outputs[key])
