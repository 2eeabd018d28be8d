"""What a calibration study is: its file (config/calibration/<name>.yaml), its arms and its batches.

A study file holds a sweep config (`sweep:`, checked against the project's schema like
config/config.yaml, naming only what differs from the defaults; none: the defaults), how many
runs each arm makes (`seeds`, `broken_seeds`), how many runs one job makes (`batch`) and the
measured CPU seconds one run takes (`seconds_per_run`, optional, for the jobs' runtime
resource). A space study has `space:` instead of `sweep:` (its `seed`, how many `configs` and the
cost model's `max_cpu_s` per run): its sweeps are drawn from the schema
(sdpa_lab.calibration.space), and `seeds` and `broken_seeds` are runs per drawn config.
Standard library and the config check only: the Snakefile imports this when it is parsed.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from sdpa_lab.config import ConfigError, check_config
from sdpa_lab.config_file import read_config_file
from sdpa_lab.experiments.registry import EXPERIMENTS

# The arms: the package's attention as it ships, then deliberately broken ones, each the shipped attention
# (sdpa_lab.attention.SHIPPED) broken in one place and handed to every experiment that takes the attention
# (calibration.runner.BREAKS says how): its scale made 1 or 1/d_k, or the softmax's Jacobian without its -p p^T term.
CORRECT_ARM = "inv_sqrt_dk"
BROKEN_ARMS = ("none", "inv_dk", "no_pp_term")
ARMS = (CORRECT_ARM, *BROKEN_ARMS)
ARM_WORDS = {"inv_sqrt_dk": "correct (1/sqrt(d_k))", "none": "broken: no scale", "inv_dk": "broken: 1/d_k",
             "no_pp_term": "broken: Jacobian without -p p^T"}

# The settings of a study file besides the sweep, each a positive integer.
STUDY_COUNTS = {
    "seeds": "runs of the correct arm (seed indices 0 .. seeds - 1), per config",
    "broken_seeds": "runs of each broken arm (seed indices 0 .. broken_seeds - 1: the correct arm's first draws), "
                    "per config",
    "batch": "runs per job",
}
# The settings of a space study's `space:`: name -> (minimum, maximum, what).
SPACE_SETTINGS = {
    "seed": (0, 2**64 - 1, "the seed of the configs' draw (an integer)"),
    "configs": (0, 100_000, "how many configs to draw (an integer; 0 only beside a stratum: a band's study alone)"),
    "max_cpu_s": (1e-3, 3600, "the cost model's CPU seconds of one run, at most (a number)"),
}
# The settings of a stratum of a space study (space.strata.<band>): its configs' count and budget.
STRATUM_SETTINGS = {"configs": (1, 100_000, "how many configs to draw in the band (an integer)"),
                    "max_cpu_s": SPACE_SETTINGS["max_cpu_s"]}
MAX_RUNS = 10_000_000

# One row per (run, check): the columns of the study's CSVs, in order.
# `run` numbers an arm's runs; run `run` is seed index `seed_index` of the study's sweep number `sweep`
# (always 0 in a study of one sweep, where run and seed index are the same). `law` names the statistic's own law
# where the check names one (claims.exact_laws.law_text; empty where it has none: normal or Cornish-Fisher).
COLUMNS = ("config", "arm", "run", "sweep", "seed_index", "seed", "claim", "check", "parameters", "relation", "basis",
           "literal", "expected", "measured", "se", "tolerance", "k_check", "deviation", "z", "margin", "verdict", "k",
           "n_statistical", "law")


@dataclass(frozen=True)
class Space:
    """Where a space study's sweeps come from: `configs` configs drawn from the schema with `seed`, each
    estimated at most `max_cpu_s` CPU seconds per run by the cost model (sdpa_lab.calibration.space)."""

    seed: int
    configs: int
    max_cpu_s: float
    # strata drawn after the main configs, each (band name of space.BANDS, configs, max_cpu_s): a band of the
    # space a uniform draw rarely reaches, sampled on purpose and shown apart
    strata: tuple[tuple[str, int, float], ...] = ()

    @property
    def n_configs(self) -> int:
        return self.configs + sum(n for _, n, _ in self.strata)

    def draw(self) -> list[dict]:
        from sdpa_lab.calibration.space import draw_configs

        return draw_configs(self.seed, self.configs, self.max_cpu_s, self.strata)

    def settings(self) -> dict:
        """As a study file says it (check_study reads it back)."""
        strata = {"strata": {name: {"configs": n, "max_cpu_s": cpu} for name, n, cpu in self.strata}}
        return {"seed": self.seed, "configs": self.configs, "max_cpu_s": self.max_cpu_s,
                **(strata if self.strata else {})}


@dataclass(frozen=True)
class Study:
    """A calibration study: its name (the file's stem), run counts and the (checked) sweep config, or the
    space its sweeps are drawn from."""

    name: str
    seeds: int
    broken_seeds: int
    batch: int
    seconds_per_run: float | None  # measured CPU seconds of one run (every shipped study states it)
    sweep: Mapping | None
    space: Space | None = None
    # The study's registration: its size and stopping rule as fixed in its file before it ran, on a seed root never
    # used before (a study that says none does not show the 1e-4 promise, whatever its count: summary.false_fails)
    preregistered: str = ""
    # seconds of one run of each of its space's strata, in their order, where the file says (None: seconds_per_run);
    # like seconds_per_run, a resource, not a setting
    stratum_seconds: tuple[float | None, ...] = ()

    @property
    def n_sweeps(self) -> int:
        return self.space.n_configs if self.space else 1

    def per_sweep(self, arm: str) -> int:
        """How many runs arm `arm` makes of each sweep."""
        if arm not in ARMS:
            raise ValueError(f"unknown arm {arm!r}; expected one of {ARMS}")
        return self.seeds if arm == CORRECT_ARM else self.broken_seeds

    def runs(self, arm: str) -> int:
        """How many runs arm `arm` makes."""
        return self.per_sweep(arm) * self.n_sweeps

    def run_key(self, arm: str, run: int) -> tuple[int, int]:
        """Run `run` of arm `arm` as (sweep number, seed index): each sweep's seeds in turn."""
        return divmod(run, self.per_sweep(arm))

    def batches(self, arm: str) -> range:
        """The batch numbers of arm `arm`: batch b makes runs b * batch ... (b + 1) * batch - 1."""
        return range(-(-self.runs(arm) // self.batch))

    def indices(self, arm: str, batch: int) -> range:
        """The seed indices batch `batch` of arm `arm` runs."""
        if batch not in self.batches(arm):
            raise ValueError(f"study {self.name}: arm {arm} has batches 0 .. {len(self.batches(arm)) - 1}, "
                             f"not {batch!r}")
        return range(batch * self.batch, min((batch + 1) * self.batch, self.runs(arm)))

    def draws_batches(self) -> range:
        """The batches whose runs' parts that do not depend on the attention (calibration.draws) are made once for
        every arm: those the broken arms run too, in a study of one sweep, where a broken arm's batch b holds the
        first runs of the correct arm's batch b (both number each arm's runs by seed index)."""
        return range(0) if self.space or not self.broken_seeds else self.batches(BROKEN_ARMS[0])

    def batch_seconds(self, arm: str, batch: int) -> float:
        """The CPU seconds batch `batch` of arm `arm` is expected to take (its runs times the measured
        seconds_per_run; 0 if the study does not say): its jobs' order, the longest first."""
        return sum(self.run_seconds(arm, run) for run in self.indices(arm, batch))

    def run_seconds(self, arm: str, run: int) -> float:
        """The CPU seconds run `run` of arm `arm` is expected to take: its stratum's where the file says, else
        seconds_per_run (0 if the study does not say)."""
        sweep = self.run_key(arm, run)[0]
        if self.space and sweep >= self.space.configs:
            ends = list(accumulate((n for _, n, _ in self.space.strata), initial=self.space.configs))[1:]
            own = self.stratum_seconds[bisect_right(ends, sweep)]
            if own is not None:
                return own
        return self.seconds_per_run or 0.0

    def runtime_minutes(self) -> int:
        """The runtime to ask for one job: twice the measured time of its longest batch, at least 2 minutes
        (an hour if the study does not say how long a run takes)."""
        if self.seconds_per_run is None:
            return 60
        longest = max(self.batch_seconds(arm, b) for arm in ARMS for b in self.batches(arm))
        return max(2, math.ceil(2 * longest / 60))

    def settings(self) -> dict:
        """Everything a batch's rows depend on: the batch rule's params, so that a change reruns the
        study and nothing else in the file does (check_study reads them back)."""
        where = {"space": self.space.settings()} if self.space else {"sweep": dict(self.sweep)}
        registered = {"preregistered": self.preregistered} if self.preregistered else {}
        return {"seeds": self.seeds, "broken_seeds": self.broken_seeds, "batch": self.batch, **where, **registered}

    def sweeps(self) -> list[dict]:
        """The study's sweep configs, in sweep-number order: its one sweep, or those drawn from its space."""
        return self.space.draw() if self.space else [dict(self.sweep)]


def check_study(raw, name: str) -> Study:
    """`raw` (a study file's mapping) as a Study; ConfigError naming each bad setting otherwise."""
    where = f"calibration study {name}"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: must be a mapping of settings, got {raw!r}")
    allowed = (*STUDY_COUNTS, "seconds_per_run", "sweep", "space", "preregistered")
    errors = [f"{where}: unknown setting {key!r} (a typo?); allowed: {', '.join(allowed)}"
              for key in raw if key not in allowed]
    for key, what in STUDY_COUNTS.items():
        value = raw.get(key)
        low = 0 if key == "broken_seeds" else 1  # a study may leave the broken arms to the others
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_RUNS:
            errors.append(f"{where}: setting {key}: got {value!r}; expected an integer from {low} to {MAX_RUNS} "
                          f"({what})")
    seconds = raw.get("seconds_per_run")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not 0 < seconds <= 1e6):
        errors.append(f"{where}: setting seconds_per_run: got {seconds!r}; expected a number of seconds above 0 "
                      "and at most 1e6 (the measured CPU time of one run, for the jobs' runtime)")
    registered = raw.get("preregistered", "")
    if not isinstance(registered, str) or ("preregistered" in raw and not registered.strip()):
        errors.append(f"{where}: setting preregistered: got {registered!r}; expected the study's size and stopping "
                      "rule in words, as fixed before it ran")
    if "sweep" in raw and "space" in raw:
        errors.append(f"{where}: settings sweep, space: at most one (a config as config/config.yaml, "
                      "or the space its configs are drawn from)")
    space = raw.get("space")
    if space is not None:
        errors += _space_errors(space, where)
    if errors:
        raise ConfigError("\n  ".join(["invalid calibration study:", *errors]))
    seconds = None if seconds is None else float(seconds)
    if space is not None:
        drawn = space.get("strata", {})
        strata = tuple((name, s["configs"], float(s["max_cpu_s"])) for name, s in drawn.items())
        own = tuple(None if s.get("seconds_per_run") is None else float(s["seconds_per_run"]) for s in drawn.values())
        space = Space(space["seed"], space["configs"], float(space["max_cpu_s"]), strata)
        return Study(name, raw["seeds"], raw["broken_seeds"], raw["batch"], seconds, None, space, registered, own)
    try:
        # A config as config/config.yaml, naming only what it changes (a study without one: the defaults).
        sweep = check_config(raw.get("sweep", {}))
    except ConfigError as exc:
        raise ConfigError(f"{where}, setting sweep: {exc}") from None
    return Study(name, raw["seeds"], raw["broken_seeds"], raw["batch"], seconds, sweep, None, registered)


def _space_errors(space, where: str) -> list[str]:
    if not isinstance(space, Mapping):
        return [f"{where}: setting space: got {space!r}; expected a mapping of {', '.join(SPACE_SETTINGS)}"]
    allowed = (*SPACE_SETTINGS, "strata")
    errors = [f"{where}: unknown setting space.{key} (a typo?); allowed: {', '.join(allowed)}"
              for key in space if key not in allowed]
    errors += _settings_errors(space, SPACE_SETTINGS, f"{where}: setting space.")
    strata = space.get("strata", {})
    if not isinstance(strata, Mapping):
        return [*errors, f"{where}: setting space.strata: got {strata!r}; expected a mapping of band names to "
                         f"{', '.join(STRATUM_SETTINGS)}"]
    if space.get("configs") == 0 and not strata:
        errors.append(f"{where}: setting space.configs: got 0 and no stratum; expected at least 1 config, or a "
                      "stratum (space.strata) for the study to draw")
    from sdpa_lab.calibration.space import BANDS

    for name, stratum in strata.items():
        if name not in BANDS:
            errors.append(f"{where}: setting space.strata.{name}: unknown band; expected one of {', '.join(BANDS)}")
        elif not isinstance(stratum, Mapping) or not set(STRATUM_SETTINGS) <= set(stratum) <= {*STRATUM_SETTINGS,
                                                                                                "seconds_per_run"}:
            errors.append(f"{where}: setting space.strata.{name}: got {stratum!r}; expected a mapping of "
                          f"{', '.join(STRATUM_SETTINGS)} (and seconds_per_run, optional)")
        else:
            errors += _settings_errors(stratum, STRATUM_SETTINGS, f"{where}: setting space.strata.{name}.")
            if "seconds_per_run" in stratum:
                errors += _settings_errors(stratum, {"seconds_per_run": SPACE_SETTINGS["max_cpu_s"]},
                                           f"{where}: setting space.strata.{name}.")
    return errors


def _settings_errors(values: Mapping, settings: Mapping, prefix: str) -> list[str]:
    """A line for each of `settings` (name -> (minimum, maximum, what)) that `values` lacks or has out of range."""
    errors = []
    for key, (low, high, what) in settings.items():
        value = values.get(key)
        kinds = (int, float) if isinstance(low, float) else (int,)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            errors.append(f"{prefix}{key}: got {value!r}; expected {what} from {low} to {high}")
    return errors


def load_study(path: str | Path) -> Study:
    """The study in YAML file `path` (safe loader), checked; named after the file's stem."""
    return check_study(read_config_file(path), Path(path).stem)




# Where the study lives: study files in, batches and tables out.
STUDIES_DIR = "config/calibration"
CALIBRATION_DIR = "results/calibration"
BATCH = CALIBRATION_DIR + "/batches/{study}/{arm}/batch{batch}.csv"
SHARE = BATCH.removesuffix(".csv") + ".share.json"  # a batch's share of the tables (calibration.shares), beside it
SHARE_SUFFIX = SHARE.removeprefix(BATCH.removesuffix(".csv"))
SWEEPS = CALIBRATION_DIR + "/sweeps/{study}.json"  # a space study's drawn sweep configs, for its batches
EXPECTATIONS = CALIBRATION_DIR + "/expectations/{study}.csv"  # the claims' finite-d_k expectations, for every batch
DRAWS = CALIBRATION_DIR + "/draws/{study}/batch{batch}.npz"  # what every arm of a batch makes the same (draws_input)
TABLES = ("checks", "runs", "z_summary", "z_by_point", "false_fails", "directional", "power", "configs",
          "false_fail_checks", "tails")
SUMMARIES = TABLES[1:]  # every table but checks.csv: what calibration_tables makes, from the batches' shares
CALIBRATION_REPORT = "reports/calibration.html"


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


def draws_input(name: str, study: Study, batch: int) -> list[str]:
    """The draws batch `batch` of study `name` reads, in every arm (DRAWS: calibration.draws), if its arms share
    them (Study.draws_batches); else none."""
    return [DRAWS.format(study=name, batch=batch)] if batch in study.draws_batches() else []


def share_path(batch: str | Path) -> str:
    """The share file beside batch CSV `batch` (SHARE beside BATCH): batch3.csv -> batch3.share.json."""
    batch = str(batch)
    if not batch.endswith(".csv"):
        raise ValueError(f"calibration batch {batch}: not a .csv file")
    return batch.removesuffix(".csv") + SHARE_SUFFIX


def _batch_of(path: str) -> str:
    """The batch CSV whose share `path` is (share_path's inverse); `path` itself if it is no share."""
    return path.removesuffix(SHARE_SUFFIX) + ".csv" if path.endswith(SHARE_SUFFIX) else path


def share_files(studies: Mapping[str, Study]) -> list[str]:
    """The share beside each batch CSV of batch_files, in the same order."""
    return [share_path(batch) for batch in batch_files(studies)]


def is_seeded(experiment: str) -> bool:
    """Whether an experiment's tables depend on the config (its seed and sweep): those with a config
    section (sdpa_lab.experiments.registry). The lesson replications have none: they use the lesson's
    own fixed seeds, and their tables are the same in every run of a study."""
    return EXPERIMENTS[experiment].section is not None


def fixed_tables_files() -> list[str]:
    """The pipeline's result CSVs that are the same in every run (the lesson replications'):
    the batches read them rather than remaking them."""
    return [out.path for name, e in EXPERIMENTS.items() if not is_seeded(name) for out in e.outputs.values()]


# CPU seconds of a batch job besides its runs (the interpreter, imports, the lesson tables read), and of drawing
# a space study's sweeps (10.8 s for config_space's 300 configs; logs/benchmarks/calibration/, a loaded machine).
SECONDS_PER_JOB = 3.0
SECONDS_PER_DRAWN_CONFIG = 0.04


def is_calibration_target(target: str) -> bool:
    """Whether a snakemake target asks for the calibration study (its rule, report or a file of its results)."""
    return target == "calibration" or target == CALIBRATION_REPORT or target.startswith(CALIBRATION_DIR + "/")


def _batch_pattern() -> re.Pattern:
    """BATCH as a regular expression naming its study, arm and batch."""
    out = re.escape(BATCH)
    for name, value in (("study", "[^/]+"), ("arm", "[^/]+"), ("batch", r"\d+")):
        out = out.replace(re.escape("{" + name + "}"), f"(?P<{name}>{value})")
    return re.compile(out)


BATCH_PATTERN = _batch_pattern()


def targets_cpu_s(targets: Sequence[str], studies: Mapping[str, Study], done=lambda path: False) -> float:
    """The CPU seconds a run of calibration `targets` will take (estimated_cpu_s): where each names a batch (its CSV
    or its share), those batches not yet `done` and their studies' draws; otherwise every batch of `studies`."""
    named = [BATCH_PATTERN.fullmatch(_batch_of(str(t))) for t in targets]
    if not named or not all(named):
        return estimated_cpu_s(studies, done)
    wanted = {m.group(0) for m in named} | {SWEEPS.format(study=m["study"]) for m in named}
    return estimated_cpu_s({m["study"]: studies[m["study"]] for m in named if m["study"] in studies},
                           lambda path: path not in wanted or done(path))


def estimated_cpu_s(studies: Mapping[str, Study], done=lambda path: False) -> float:
    """The CPU seconds the batches of `studies` not yet `done` will take, by their studies' measured
    seconds_per_run (and their strata's, Study.batch_seconds; 1 s a run where a study does not say), with each job's
    start-up and a space study's draw."""
    total = 0.0
    for name, study in studies.items():
        for arm in ARMS:
            for b in study.batches(arm):
                if not done(BATCH.format(study=name, arm=arm, batch=b)):
                    total += SECONDS_PER_JOB + (study.batch_seconds(arm, b) if study.seconds_per_run
                                                else len(study.indices(arm, b)))
        if study.space and not done(SWEEPS.format(study=name)):
            total += SECONDS_PER_DRAWN_CONFIG * study.space.n_configs
    return total
