"""How an experiment declares itself: its outputs and their columns, the settings it records, the code it runs.

Each experiment module ends with `DECLARED`, the `Experiment`s it declares (replication.py declares three);
`sdpa_lab.experiments.registry` gathers them. A job reads only its own module's declaration
(`declared_in`), so it imports that experiment's code and no other's. Standard library only.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

RESULTS_DIR = "results"

# The trial scores (query against T keys) that the experiments with shares_trial_scores read:
# drawn once per (seed, d_k, T, trials) by their own job (rule trial_scores).
TRIAL_SCORES_JOB = "seed{seed}_T{T}_trials{trials}_dk{d_k}"  # names the file, and its job's log and benchmark
TRIAL_SCORES = f"{RESULTS_DIR}/trial_scores/{TRIAL_SCORES_JOB}.npy"
TRIAL_SCORES_MODULE = "sdpa_lab.experiments.trial_scores"


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
    """An experiment: rule `name` runs `function` ("module:function", in the declaring module) and writes
    `outputs`.

    function(settings, trial_scores) returns {output key: rows}. settings is {"seed": ...,
    **config[section]} (nothing for the lesson replications, which have no section);
    trial_scores is {d_k: .npy path} of the shared trial scores, when `shares_trial_scores`.
    A function that measures the attention takes it as a keyword `attention` (an
    sdpa_lab.attention.Attention, SHIPPED by default): `takes_attention` reads its signature.
    row_counts(settings) ("module:function", beside `function`) returns {output key: the
    number of rows `function` makes}: the checker refuses a CSV far larger than that.
    Its line in the cost model (sdpa_lab.workflow_support.cost): work(settings) ("module:function",
    beside `function`) returns {term: count of the work it does}, and ns_per {term: ns of CPU per unit},
    fitted by benchmarks/cost.py --fit (0.0: not fitted yet). Without `work` the model leaves it out: it
    counts as free, and the calibration keeps its sizes at their defaults.
    """

    name: str
    function: str
    outputs: Mapping[str, Output]
    claims: tuple[str, ...]
    section: str | None = None
    shares_trial_scores: bool = False
    row_counts: str = field(kw_only=True)
    work: str | None = field(default=None, kw_only=True)
    ns_per: Mapping[str, float] = field(default_factory=dict, kw_only=True)

    @property
    def module(self) -> str:
        return self.function.partition(":")[0]

    def load(self) -> Callable:
        """`function`, imported."""
        return _load(self.function)

    def work_of(self, settings: Mapping) -> dict[str, float]:
        """The cost model's work of a run of this experiment with its section's `settings`: term -> count."""
        return _load(self.work)(settings) if self.work else {}

    @property
    def takes_attention(self) -> bool:
        """Whether `function` takes the attention it measures (a keyword `attention`): from its signature."""
        return "attention" in inspect.signature(self.load()).parameters

    def trial_scores_files(self, settings: Mapping) -> dict[int, str]:
        """The trial-score file of each d_k this experiment sweeps with `settings` (none if it shares none)."""
        if not self.shares_trial_scores:
            return {}
        return {d_k: TRIAL_SCORES.format(seed=settings["seed"], T=settings["T"], trials=settings["trials"],
                                         d_k=d_k) for d_k in settings["d_k"]}


def _load(path: str) -> Callable:
    """The function "module:function" names, imported."""
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)


# The columns and recorded settings of a sweep over d_k with T keys and a number of trials.
SWEEP_COLUMNS = {"seed": "int", "d_k": "int", "T": "int", "trials": "int"}
SWEEP_RECORDS = {"seed": "seed", "d_k": "d_k", "T": "T", "trials": "trials"}


def declared_in(module: str, name: str) -> Experiment:
    """Experiment `name` as module `module` declares it (its `DECLARED`): imports that module alone, not the
    registry, which is what a job does. ValueError if the module does not declare it."""
    found = {e.name: e for e in getattr(importlib.import_module(module), "DECLARED", ())}
    if name not in found:
        raise ValueError(f"unknown experiment {name!r}: module {module} declares {', '.join(found) or 'none'}")
    return found[name]
