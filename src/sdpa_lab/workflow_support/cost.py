"""What a sweep will cost before it runs: CPU time and disk, from a model of measured constants.

Memory is bounded by the config checks (sdpa_lab.validation); time and disk grow with
the sweep's sizes, so a run prints this estimate before any job, refuses a run whose
disk estimate exceeds the free space, and asks for confirmation above an hour.

Each experiment's time is a sum of terms, each a count of the work its code does (`work`: the
elements of the arrays it draws and computes, the steps it loops over, the calls whose overhead
does not shrink with small arrays) times a constant fitted to measurements on the 2-core
reference machine (benchmarks/cost.py). A machine twice as fast halves the times; the disk
estimate is exact up to the CSVs, logs and figures (LEFTOVER_BYTES).
Standard library only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from sdpa_lab.experiments.registry import EXPERIMENTS, TRIAL_SCORES

# ns of CPU per unit of each term of the trial scores' work (trial_scores_work), fitted by least squares on relative
# error to the process CPU of write_trial_scores at the points of benchmarks/cost.py's fit (--fit, 2026-12-03, on the
# 2-core reference machine, BLAS on one thread: a second one, waiting for a core on a loaded machine, spins and adds
# CPU that grows with the load, not with the work; benchmarks/cost.csv: measured against modelled). Each
# experiment's own are in its declaration (`Experiment.ns_per`, beside its `work`), fitted the same way.
TRIAL_SCORES_NS_PER = {"normal": 9.04, "trial_key": 18.6, "file": 0.0, "first_file": 7.97e+06}
# ns per unit of each term of each part (part -> term -> ns): the trial scores' and every experiment's that
# declares its work, gathered from the registry.
NS_PER: dict[str, Mapping[str, float]] = {
    "trial_scores": TRIAL_SCORES_NS_PER, **{e.name: e.ns_per for e in EXPERIMENTS.values() if e.work}}
# Everything that does not grow with the config: Snakemake's start-up, each job's, the lesson
# replications (Exercise 1's legacy stream continued to d_k = 1024 among them), the claims and their
# expectations, the figures and the report (benchmarks/results.csv, pipeline_clean on config/config.yaml:
# 24.2 s of CPU, of which the parts above model 5.5 s).
FIXED_CPU_S = 18.7
# solutions: grading a learner's complete file at the grader's default sizes (Exercise 1: 10,000 pairs per call;
# sdpa-lab grade examples/solutions/correct.py, 3 seeds back to back on the loaded 2-core machine: 3.6, 4.6
# and 5.6 s of CPU, its process and the learner's together; the lesson's 100,000 pairs, drawn only where the
# small draw is not the grader's, would add about 25 s).
GRADE_CPU_S = 4.6
# The CSVs, figures, report, logs and benchmark files: a few MiB whatever the sweep.
LEFTOVER_BYTES = 16 << 20
NPY_HEADER_BYTES = 128

NS = 1e-9

# A run estimated above this much CPU time starts only with this top-level switch set (it is
# not an experiment's setting: it changes no result and reruns nothing).
LONG_RUN_S = 3600
CONFIRM = "confirm_long_run"


@dataclass
class Cost:
    """The estimated CPU seconds of each part of a run and the bytes it writes."""

    cpu_s: dict[str, float] = field(default_factory=dict)
    disk_bytes: int = 0
    reused: int = 0  # trial-score files already drawn, not counted

    @property
    def total_cpu_s(self) -> float:
        return sum(self.cpu_s.values())


def trial_score_files(config: Mapping) -> dict[str, tuple[int, int, int]]:
    """The trial-score files the sweep reads (shared between experiments): path -> (T, trials, d_k)."""
    sharing = [e.section for e in EXPERIMENTS.values() if e.shares_trial_scores]
    return {TRIAL_SCORES.format(seed=config["seed"], T=config[s]["T"], trials=config[s]["trials"], d_k=d_k):
            (config[s]["T"], config[s]["trials"], d_k) for s in sharing for d_k in config[s]["d_k"]}


def trial_scores_work(files: Collection[tuple[int, int, int]]) -> dict[str, float]:
    """The trial scores' work, drawing `files` ((T, trials, d_k) each): term -> count."""
    return {"normal": sum(n * (T + 1) * d_k for T, n, d_k in files),
            "trial_key": sum(n * (T + 1) for T, n, _ in files), "file": len(files),
            "first_file": int(bool(files))}  # the writer's first call: imports, warm-up


def work(config: Mapping, files: Collection[tuple[int, int, int]]) -> dict[str, dict[str, float]]:
    """The work of each part of a run of `config` (part -> term -> count; NS_PER gives each term's ns), the
    trial-score files it draws being `files` ((T, trials, d_k) each): each experiment's as it declares it
    (`Experiment.work`), those that declare none left out."""
    return {"trial_scores": trial_scores_work(files),
            **{e.name: e.work_of(config[e.section]) for e in EXPERIMENTS.values() if e.work}}


def estimate(config: Mapping, drawn: Collection[str] = ()) -> Cost:
    """The CPU time and disk use of a run of `config` (a config the schema accepts) in which every
    experiment runs, except the trial-score files in `drawn` (already on disk: named after their
    settings, they are reused)."""
    cost = Cost()
    planned = trial_score_files(config)
    files = [key for path, key in planned.items() if path not in drawn]
    cost.reused = len(planned) - len(files)
    cost.disk_bytes = sum(trials * (T + 1) * 8 + NPY_HEADER_BYTES for T, trials, _ in files) + LEFTOVER_BYTES
    for part, terms in work(config, files).items():
        cost.cpu_s[part] = NS * sum(NS_PER[part][term] * count for term, count in terms.items())
    cost.cpu_s["fixed"] = FIXED_CPU_S
    if config.get("solutions"):  # --config solutions=FILE: the grading of the learner's file
        cost.cpu_s["solutions"] = GRADE_CPU_S
    return cost


def duration(seconds: float) -> str:
    """Seconds as a person reads them: 42 s, 3.5 min, 6.2 h, 3.1 days."""
    for unit, size, from_ in (("days", 86400, 2 * 86400), ("h", 3600, 3600), ("min", 60, 120)):
        if seconds >= from_:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def size(n_bytes: float) -> str:
    """Bytes in binary units: 16 MiB, 7.2 GiB."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} B"


def summary(cost: Cost) -> list[str]:
    """The estimate in a few lines: the total, then each part that costs more than a second."""
    reused = f", reusing the {cost.reused} trial-score files already drawn" if cost.reused else ""
    graded = " and the grading of your solutions" if "solutions" in cost.cpu_s else ""
    lines = [f"estimated cost of the main run (the default target): {duration(cost.total_cpu_s)} of CPU, "
             f"{size(cost.disk_bytes)} on disk (every experiment from scratch{graded}{reused})"
             + (f"; above {duration(LONG_RUN_S)}, snakemake asks for --config {CONFIRM}=true"
                if cost.total_cpu_s > LONG_RUN_S else "")]
    for part, seconds in sorted(cost.cpu_s.items(), key=lambda kv: -kv[1]):
        if seconds >= 1 and part not in ("fixed", "solutions"):
            lines.append(f"  {part:<20} {duration(seconds)} of CPU")
    if "solutions" in cost.cpu_s:
        lines.append(f"  {'solutions':<20} {duration(cost.cpu_s['solutions'])} of CPU (the lesson's 100,000 pairs "
                     "of Exercise 1, where drawn, add about 25 s)")
    unestimated = not_estimated(cost)
    if unestimated:
        lines.append(f"  not in the estimate (no line in sdpa_lab.workflow_support.cost.estimate): "
                     f"{', '.join(unestimated)}")
    return lines


def not_estimated(cost: Cost) -> list[str]:
    """The experiments with a config section (the lesson replications are the fixed part) the estimate leaves out."""
    return [name for name, e in EXPERIMENTS.items() if e.section is not None and name not in cost.cpu_s]


def run_problem(cost: Cost, config: Mapping, free_bytes: int) -> str | None:
    """Why a run of `config` with estimate `cost` must not start, `free_bytes` being free where it writes; or None."""
    if cost.disk_bytes > free_bytes:
        return (f"this run would write about {size(cost.disk_bytes)} and only {size(free_bytes)} is free here; "
                "free some space, or reduce trials (the trial scores take trials x (T + 1) x 8 bytes per d_k)")
    if cost.total_cpu_s > LONG_RUN_S and config.get(CONFIRM) not in (True, "true"):  # --config passes "true"
        return (f"this run is estimated at {duration(cost.total_cpu_s)} of CPU, more than {duration(LONG_RUN_S)}; "
                f"to start it anyway, add --config {CONFIRM}=true")
    return None
