"""What each Snakemake rule runs: an experiment's tables from the config, written atomically.

Rules stay thin: workflow/scripts/run_experiment.py hands the rule's name,
config and outputs to `run_job`. Everything here runs (and is tested)
without Snakemake.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from sdpa_lab.config import check_config
from sdpa_lab.experiments.entropy_sweep import entropy_single_draw_rows, entropy_sweep_rows
from sdpa_lab.experiments.forward_shape import forward_shape_rows
from sdpa_lab.experiments.gradient import gradient_rows
from sdpa_lab.experiments.learning import learning_rows
from sdpa_lab.experiments.ranking_invariance import ranking_invariance_rows
from sdpa_lab.experiments.replication import (
    replicate_forward_rows,
    replicate_softmax_collapse_rows,
    replicate_variance_rows,
)
from sdpa_lab.experiments.variance import variance_rows
from sdpa_lab.io import write_csv
from sdpa_lab.joblog import job_log
from sdpa_lab.layout import OUTPUTS, trial_scores_files  # noqa: F401 (OUTPUTS re-exported: where tables land)
from sdpa_lab.tables import Rows

# The tables of one experiment, by output name. Rows, not DataFrames: an
# experiment job then never imports pandas (a quarter of a second each).
Tables = dict[str, Rows]

# Experiment name -> function of the (checked) config and the trial-score files
# ({d_k: path}, see sdpa_lab.layout.trial_scores_files; empty: draw in process)
# returning {output name: table}. The output names are the keys of OUTPUTS
# (sdpa_lab.layout) and of each rule's `output:`.
EXPERIMENTS: dict[str, Callable[[Mapping, Mapping[int, str]], Tables]] = {
    "variance": lambda c, s: {"table": variance_rows(c["seed"], c["variance"]["d_k"], c["variance"]["n_pairs"])},
    "entropy_sweep": lambda c, s: {
        "table": entropy_sweep_rows(c["seed"], c["entropy_sweep"]["d_k"], c["entropy_sweep"]["T"],
                                    c["entropy_sweep"]["trials"], s),
        "single_draw": entropy_single_draw_rows(),
    },
    "ranking_invariance": lambda c, s: {
        "table": ranking_invariance_rows(c["seed"], c["ranking_invariance"]["d_k"], c["ranking_invariance"]["T"],
                                         c["ranking_invariance"]["trials"], s),
    },
    "forward_shape": lambda c, s: {"table": forward_shape_rows(c["seed"], c["forward_shape"]["shapes"])},
    "gradient": lambda c, s: {
        "table": gradient_rows(c["seed"], c["gradient"]["d_k"], c["gradient"]["T"], c["gradient"]["trials"], s),
    },
    "learning": lambda c, s: dict(zip(("table", "curves"), learning_rows(  # returns (table, curves)
        c["seed"], c["learning"]["d_k"], c["learning"]["T"], c["learning"]["runs"], c["learning"]["steps"],
        c["learning"]["learning_rates"], c["learning"]["loss_threshold"]))),
    "lesson_variance": lambda c, s: {"table": replicate_variance_rows()},
    "lesson_softmax_collapse": lambda c, s: {"table": replicate_softmax_collapse_rows()},
    "lesson_forward": lambda c, s: {"table": replicate_forward_rows()},
}


def run_experiment(name: str, config: Mapping, trial_scores: Mapping[int, str] | None = None,
                   inputs: Iterable[str] = (), checked: bool = False) -> Tables:
    """The tables of experiment `name` under `config` (checked first, unless `checked` says the caller did).

    The shared trial scores ({d_k: .npy path}) are read from `trial_scores`, and from
    those of `inputs` that are this experiment's trial-score files
    (sdpa_lab.layout.trial_scores_files); those not given are drawn in process,
    with the same numbers.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    if not checked:
        config = check_config(config)
    given = {Path(p).name: str(p) for p in inputs}  # by name: it says seed, T, trials and d_k
    scores = {d_k: given[Path(path).name] for d_k, path in trial_scores_files(config, name).items()
              if Path(path).name in given}
    return EXPERIMENTS[name](config, {**scores, **(trial_scores or {})})


def run_job(name: str, config: Mapping, outputs: Mapping[str, str], log_path: str | None = None,
            inputs: Iterable[str] = (), checked: bool = False) -> None:
    """Run experiment `name` and write each table to outputs[<its name>], logging to `log_path`.

    Of the rule's `inputs`, the trial-score files this experiment sweeps are read rather than drawn again.
    `checked`: the config was checked already, as the workflow does once, when it parses the
    Snakefile, before any job (workflow/rules/common.smk); the job then does not check it again
    (nor import jsonschema, a tenth of a second of CPU per job).
    """
    with job_log(name, log_path) as logger:
        tables = run_experiment(name, config, inputs=inputs, checked=checked)
        if set(tables) != set(outputs):
            raise ValueError(f"experiment {name!r} makes tables {sorted(tables)} but the rule names {sorted(outputs)}")
        for key, table in tables.items():
            write_csv(table, outputs[key])
            logger.info("%s: wrote %d rows to %s", name, len(table), outputs[key])
