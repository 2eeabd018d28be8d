"""Every experiment, declared once: its outputs and their columns, the settings it records, the code it runs.

The workflow (workflow/rules/common.smk), the result reader (sdpa_lab.results), the
stale-config check, the config check and the job runner (sdpa_lab.pipeline) all read
this table. Standard library only: the Snakefile imports it when it is parsed, on every
snakemake call, so it names each experiment's function as "module:function" and the
job imports it.

Adding an experiment: see CONTRIBUTING.md.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

RESULTS_DIR = "results"


@dataclass(frozen=True)
class Output:
    """One CSV an experiment writes.

    columns: column -> kind, as sdpa_lab.results reads them back: "int", "float"
    (finite), "num" (a number or empty) or "str".
    records: setting of the experiment's config section (or "seed") -> the column that
    records it, or the tuple of columns an entry of a list-of-tuples setting spreads
    over; the stale-config check compares every one of them with the config.
    """

    file: str
    columns: Mapping[str, str]
    records: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return f"{RESULTS_DIR}/{self.file}"


@dataclass(frozen=True)
class Experiment:
    """An experiment: rule `name` runs `function` ("module:function") and writes `outputs`.

    function(settings, trial_scores) returns {output key: rows}. settings is {"seed": ...,
    **config[section]} (nothing for the lesson replications, which have no section);
    trial_scores is {d_k: .npy path} of the shared trial scores, when `shares_trial_scores`.
    A function that measures the attention takes it as a keyword `attention` (an
    sdpa_lab.attention.Attention, SHIPPED by default): `takes_attention` reads its signature.
    row_counts(settings) ("module:function", beside `function`) returns {output key: the
    number of rows `function` makes}: the checker refuses a CSV far larger than that.
    """

    name: str
    function: str
    outputs: Mapping[str, Output]
    claims: tuple[str, ...]
    section: str | None = None
    shares_trial_scores: bool = False
    row_counts: str = field(kw_only=True)

    @property
    def module(self) -> str:
        return self.function.partition(":")[0]

    def load(self) -> Callable:
        """`function`, imported (the job's import: not when the Snakefile is parsed)."""
        module, _, function = self.function.partition(":")
        return getattr(importlib.import_module(module), function)

    @property
    def takes_attention(self) -> bool:
        """Whether `function` takes the attention it measures (a keyword `attention`): from its signature."""
        return "attention" in inspect.signature(self.load()).parameters


_SWEEP = {"seed": "int", "d_k": "int", "T": "int", "trials": "int"}
_SWEEP_RECORDS = {"seed": "seed", "d_k": "d_k", "T": "T", "trials": "trials"}

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment(
        "variance", "sdpa_lab.experiments.variance:variance_tables",
        {"table": Output("variance.csv",
                         {"seed": "int", "d_k": "int", "n_pairs": "int", "scale": "str", "statistic": "str",
                          "value": "float"},
                         {"seed": "seed", "d_k": "d_k", "n_pairs": "n_pairs"})},
        claims=("B1", "B2", "B3", "B4", "B8"), section="variance",
        row_counts="sdpa_lab.experiments.variance:variance_row_counts"),
    Experiment(
        "entropy_sweep", "sdpa_lab.experiments.entropy_sweep:entropy_sweep_tables",
        {"table": Output("entropy_sweep.csv",
                         {**_SWEEP, "scale": "str", "quantity": "str", "statistic": "str", "value": "float"},
                         _SWEEP_RECORDS),
         "single_draw": Output("entropy_single_draw.csv",
                               {"d_k": "int", "T": "int", "scale": "str", "entropy": "float"}),
         "exercise2": Output("entropy_exercise2.csv",
                             {"seed": "int", "T": "int", "trials": "int", "quantity": "str", "count": "int",
                              "fraction": "float"},
                             {"seed": "seed", "trials": "trials"})},
        claims=("B5", "B8"), section="entropy_sweep", shares_trial_scores=True,
        row_counts="sdpa_lab.experiments.entropy_sweep:entropy_sweep_row_counts"),
    Experiment(
        "ranking_invariance", "sdpa_lab.experiments.ranking_invariance:ranking_invariance_tables",
        {"table": Output("ranking_invariance.csv",
                         {**_SWEEP, "dtype": "str", "quantity": "str", "count": "int", "fraction": "float"},
                         _SWEEP_RECORDS)},
        claims=("B6",), section="ranking_invariance", shares_trial_scores=True,
        row_counts="sdpa_lab.experiments.ranking_invariance:ranking_invariance_row_counts"),
    Experiment(
        "forward_shape", "sdpa_lab.experiments.forward_shape:forward_shape_tables",
        {"table": Output("forward_shape.csv",
                         {"seed": "int", "B": "int", "T": "int", "d_k": "int", "T_k": "int", "d_v": "int",
                          "dtype": "str", "quantity": "str", "value": "float"},
                         {"seed": "seed", "shapes": ("B", "T", "d_k")})},
        claims=("B9",), section="forward_shape",
        row_counts="sdpa_lab.experiments.forward_shape:forward_shape_row_counts"),
    Experiment(
        "gradient", "sdpa_lab.experiments.gradient:gradient_tables",
        {"table": Output("gradient.csv",
                         {**_SWEEP, "scale": "str", "quantity": "str", "statistic": "str", "value": "float"},
                         _SWEEP_RECORDS)},
        claims=("B7",), section="gradient", shares_trial_scores=True,
        row_counts="sdpa_lab.experiments.gradient:gradient_row_counts"),
    Experiment(
        "learning", "sdpa_lab.experiments.learning:learning_tables",
        {"table": Output("learning.csv",
                         {"seed": "int", "d_k": "int", "T": "int", "runs": "int", "steps": "int",
                          "loss_threshold": "float", "scale": "str", "lr": "float", "best_lr": "int",
                          "statistic": "str", "value": "float"},
                         {"seed": "seed", "d_k": "d_k", "T": "T", "runs": "runs", "steps": "steps",
                          "learning_rates": "lr", "loss_threshold": "loss_threshold"}),
         "curves": Output("learning_curves.csv",
                          {"seed": "int", "d_k": "int", "T": "int", "runs": "int", "scale": "str", "lr": "float",
                           "step": "int", "mean_relative_loss": "float"},
                          {"seed": "seed", "d_k": "d_k", "T": "T", "runs": "runs"})},
        claims=("B10",), section="learning",
        row_counts="sdpa_lab.experiments.learning:learning_row_counts"),
    Experiment(
        "lesson_variance", "sdpa_lab.experiments.replication:lesson_variance_tables",
        {"table": Output("lesson_variance.csv",
                         {"d_k": "int", "n_samples": "int", "quantity": "str", "value": "float"})},
        claims=("A1", "B4"),
        row_counts="sdpa_lab.experiments.replication:lesson_variance_row_counts"),
    Experiment(
        "lesson_softmax_collapse", "sdpa_lab.experiments.replication:lesson_softmax_collapse_tables",
        {"table": Output("lesson_softmax_collapse.csv",
                         {"d_k": "int", "T": "int", "quantity": "str", "key": "num", "value": "float"})},
        claims=("A2", "B6"),
        row_counts="sdpa_lab.experiments.replication:lesson_softmax_collapse_row_counts"),
    Experiment(
        "lesson_forward", "sdpa_lab.experiments.replication:lesson_forward_tables",
        {"table": Output("lesson_forward.csv",
                         {"B": "int", "T": "int", "d_k": "int", "quantity": "str", "row": "num", "col": "num",
                          "value": "float"})},
        claims=("A3",),
        row_counts="sdpa_lab.experiments.replication:lesson_forward_row_counts"),
)}

# The config sections, one per sweep experiment (the lesson replications have none).
SECTIONS: tuple[str, ...] = tuple(e.section for e in EXPERIMENTS.values() if e.section)

# The trial scores (query against T keys) that the experiments with shares_trial_scores read:
# drawn once per (seed, d_k, T, trials) by their own job (rule trial_scores).
TRIAL_SCORES_JOB = "seed{seed}_T{T}_trials{trials}_dk{d_k}"  # names the file, and its job's log and benchmark
TRIAL_SCORES = f"{RESULTS_DIR}/trial_scores/{TRIAL_SCORES_JOB}.npy"
TRIAL_SCORES_MODULE = "sdpa_lab.experiments.trial_scores"


def settings_of(config: Mapping, name: str) -> dict:
    """The settings experiment `name` reads from `config`: the seed and its own section (none for the lessons)."""
    section = EXPERIMENTS[name].section
    return {"seed": config["seed"], **config[section]} if section else {}


def trial_scores_files(name: str, settings: Mapping) -> dict[int, str]:
    """The trial-score file of each d_k experiment `name` sweeps with `settings` (none if it shares none)."""
    if not EXPERIMENTS[name].shares_trial_scores:
        return {}
    return {d_k: TRIAL_SCORES.format(seed=settings["seed"], T=settings["T"], trials=settings["trials"], d_k=d_k)
            for d_k in settings["d_k"]}


def output_paths(name: str) -> dict[str, str]:
    """Experiment `name`'s outputs: {output key: path}."""
    return {key: out.path for key, out in EXPERIMENTS[name].outputs.items()}


def columns() -> dict[str, dict[str, str]]:
    """Every result CSV's columns and their kinds, by file name."""
    return {out.file: dict(out.columns) for e in EXPERIMENTS.values() for out in e.outputs.values()}
