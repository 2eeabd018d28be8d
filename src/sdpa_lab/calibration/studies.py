"""What a calibration study is: its file (config/calibration/<name>.yaml), its arms and its batches.

A study file holds a sweep config (`sweep:`, checked against the project's schema like
config/config.yaml, naming only what differs from the defaults; none: the defaults), how many
runs each arm makes (`seeds`, `broken_seeds`), how many runs one job makes (`batch`) and the
measured CPU seconds one run takes (`seconds_per_run`, optional, for the jobs' runtime
resource). Standard library and the config check only: the Snakefile imports this when it is
parsed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sdpa_lab.config import ConfigError, check_config, read_config_file
from sdpa_lab.experiments.registry import EXPERIMENTS

# The arms: the package's attention as it ships, then deliberately broken ones, each breaking one place of
# sdpa_lab.attention, which the forward and every experiment share (calibration.runner.BREAKS says how):
# its default scale made 1 or 1/d_k, or the softmax's Jacobian without its -p p^T term.
CORRECT_ARM = "inv_sqrt_dk"
BROKEN_ARMS = ("none", "inv_dk", "no_pp_term")
ARMS = (CORRECT_ARM, *BROKEN_ARMS)
ARM_WORDS = {"inv_sqrt_dk": "correct (1/sqrt(d_k))", "none": "broken: no scale", "inv_dk": "broken: 1/d_k",
             "no_pp_term": "broken: Jacobian without -p p^T"}

# The settings of a study file besides the sweep, each a positive integer.
STUDY_COUNTS = {
    "seeds": "runs of the correct arm (seed indices 0 .. seeds - 1)",
    "broken_seeds": "runs of each broken arm (seed indices 0 .. broken_seeds - 1: the correct arm's first draws)",
    "batch": "runs per job",
}
MAX_RUNS = 10_000_000

# One row per (run, check): the columns of the study's CSVs, in order.
COLUMNS = ("config", "arm", "seed_index", "seed", "claim", "check", "parameters", "relation", "basis", "literal",
           "expected", "measured", "se", "tolerance", "k_check", "deviation", "z", "margin", "verdict", "k",
           "n_statistical")


@dataclass(frozen=True)
class Study:
    """A calibration study: its name (the file's stem), run counts and the (checked) sweep config."""

    name: str
    seeds: int
    broken_seeds: int
    batch: int
    seconds_per_run: float | None  # measured CPU seconds of one run (every shipped study states it)
    sweep: Mapping

    def runs(self, arm: str) -> int:
        """How many runs arm `arm` makes."""
        if arm not in ARMS:
            raise ValueError(f"unknown arm {arm!r}; expected one of {ARMS}")
        return self.seeds if arm == CORRECT_ARM else self.broken_seeds

    def batches(self, arm: str) -> range:
        """The batch numbers of arm `arm`: batch b makes runs b * batch ... (b + 1) * batch - 1."""
        return range(-(-self.runs(arm) // self.batch))

    def indices(self, arm: str, batch: int) -> range:
        """The seed indices batch `batch` of arm `arm` runs."""
        if batch not in self.batches(arm):
            raise ValueError(f"study {self.name}: arm {arm} has batches 0 .. {len(self.batches(arm)) - 1}, "
                             f"not {batch!r}")
        return range(batch * self.batch, min((batch + 1) * self.batch, self.runs(arm)))

    def runtime_minutes(self) -> int:
        """The runtime to ask for one job: twice the measured time of a full batch, at least 2 minutes
        (an hour if the study does not say how long a run takes)."""
        if self.seconds_per_run is None:
            return 60
        return max(2, math.ceil(2 * self.batch * self.seconds_per_run / 60))

    def settings(self) -> dict:
        """Everything a batch's rows depend on: the batch rule's params, so that a change reruns the
        study and nothing else in the file does (check_study reads them back)."""
        return {"seeds": self.seeds, "broken_seeds": self.broken_seeds, "batch": self.batch,
                "sweep": dict(self.sweep)}


def check_study(raw, name: str) -> Study:
    """`raw` (a study file's mapping) as a Study; ConfigError naming each bad setting otherwise."""
    where = f"calibration study {name}"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: must be a mapping of settings, got {raw!r}")
    allowed = (*STUDY_COUNTS, "seconds_per_run", "sweep")
    errors = [f"{where}: unknown setting {key!r} (a typo?); allowed: {', '.join(allowed)}"
              for key in raw if key not in allowed]
    for key, what in STUDY_COUNTS.items():
        value = raw.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNS:
            errors.append(f"{where}: setting {key}: got {value!r}; expected an integer from 1 to {MAX_RUNS} ({what})")
    seconds = raw.get("seconds_per_run")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not 0 < seconds <= 1e6):
        errors.append(f"{where}: setting seconds_per_run: got {seconds!r}; expected a number of seconds above 0 "
                      "and at most 1e6 (the measured CPU time of one run, for the jobs' runtime)")
    if errors:
        raise ConfigError("\n  ".join(["invalid calibration study:", *errors]))
    try:
        # A config as config/config.yaml, naming only what it changes (a study without one: the defaults).
        sweep = check_config(raw.get("sweep", {}))
    except ConfigError as exc:
        raise ConfigError(f"{where}, setting sweep: {exc}") from None
    seconds = None if seconds is None else float(seconds)
    return Study(name, raw["seeds"], raw["broken_seeds"], raw["batch"], seconds, sweep)


def load_study(path: str | Path) -> Study:
    """The study in YAML file `path` (safe loader), checked; named after the file's stem."""
    return check_study(read_config_file(path), Path(path).stem)




# Where the study lives: study files in, batches and tables out.
STUDIES_DIR = "config/calibration"
RESULTS_DIR = "results/calibration"
BATCH = RESULTS_DIR + "/batches/{study}/{arm}/batch{batch}.csv"
EXPECTATIONS = RESULTS_DIR + "/expectations/{study}.csv"  # the claims' finite-d_k expectations, for every batch
TABLES = ("checks", "runs", "z_summary", "z_by_point", "false_fails", "directional", "power")
REPORT = "reports/calibration.html"


def study_files(studies_dir: str | Path = STUDIES_DIR) -> dict[str, Path]:
    """The study files in `studies_dir`, by name (file stem), in name order."""
    return {p.stem: p for p in sorted(Path(studies_dir).glob("*.yaml"))}


def load_studies(studies_dir: str | Path = STUDIES_DIR) -> dict[str, Study]:
    """Every study in `studies_dir`, checked; ConfigError if there is none or one is invalid."""
    files = study_files(studies_dir)
    if not files:
        raise ConfigError(f"no calibration study files (*.yaml) in {studies_dir}")
    return {name: load_study(path) for name, path in files.items()}


def batch_files(studies: Mapping[str, Study]) -> list[str]:
    """Every batch CSV of every arm of `studies`."""
    return [BATCH.format(study=name, arm=arm, batch=b)
            for name, study in studies.items() for arm in ARMS for b in study.batches(arm)]


def is_seeded(experiment: str) -> bool:
    """Whether an experiment's tables depend on the config (its seed and sweep): those with a config
    section (sdpa_lab.experiments.registry). The lesson replications have none: they use the lesson's
    own fixed seeds, and their tables are the same in every run of a study."""
    return EXPERIMENTS[experiment].section is not None


def fixed_tables_files() -> list[str]:
    """The pipeline's result CSVs that are the same in every run (the lesson replications'):
    the batches read them rather than remaking them."""
    return [out.path for name, e in EXPERIMENTS.items() if not is_seeded(name) for out in e.outputs.values()]
