"""What a sweep will cost before it runs: CPU time and disk, from a model of measured constants.

Memory is bounded by the config checks (sdpa_lab.validation); time and disk grow with
the sweep's sizes, so a run prints this estimate before any job, refuses a run whose
disk estimate exceeds the free space, and asks for confirmation above an hour.

Every constant below is a benchmark measurement on the 2-core reference machine
(benchmarks/run.py; the files and rows named with each), divided by the work that
job did. A machine twice as fast halves the times; the disk estimate is exact up to
the CSVs, logs and figures (LEFTOVER_BYTES).
Standard library only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from sdpa_lab.experiments.registry import EXPERIMENTS, TRIAL_SCORES
from sdpa_lab.validation import other_dimensions

# variance: ns of CPU per (pair, dimension), two normals and their product
# (benchmarks/scaling.csv, fit of CPU seconds against n_pairs * d_k, R^2 = 0.9997).
NS_PER_PAIR_DIMENSION = 16.24
# trial_scores: ns of CPU per normal drawn, (T + 1) * d_k per trial
# (benchmarks/results_large.csv, job trial_scores dk4096: 10.03 s for 40000 * 9 * 4096 normals).
NS_PER_NORMAL = 6.8
# entropy_sweep, ranking_invariance: ns of CPU per (trial, key) read back and summarised
# (results_large.csv: 0.25 s and 0.50 s for 40000 trials * 8 keys * 6 d_k).
NS_PER_ENTROPY_SCORE = 130.0
# entropy_sweep's Exercise 2 (exercise2_rows): `trials` fresh sequences, each a query and EXERCISE2_T keys per d_k of
# EXERCISE2_D_K (restated from sdpa_lab.experiments.entropy_sweep: no NumPy here; a test holds them equal); ns of
# CPU per normal it draws, softmax and entropy included (1.03 s for 29,265 sequences, measured 2026-12-03).
EXERCISE2_D_K = (4, 16, 64, 256)
EXERCISE2_T = 8
NS_PER_EXERCISE2_NORMAL = 11.5
NS_PER_RANKING_SCORE = 260.0
# gradient: ns of CPU per (trial, Jacobian entry), besides its value and output-gradient normals
# ((T + 1) * d_v per trial at NS_PER_NORMAL) (results_large.csv: 1.50 s for 40000 trials * 6 d_k, T = 8,
# of which 0.68 s of normals).
NS_PER_JACOBIAN_ENTRY = 53.0
# learning: ns of CPU per (run, learning rate, scale, step, key, value dimension) of gradient descent
# (results_large.csv: 3.44 s for 256 runs * 11 rates * 2 scales * 200 steps * 8 keys * 212 value dims).
NS_PER_DESCENT_ELEMENT = 1.8
# learning, besides the descent: ns of CPU per (run, key or query, key dimension), (T + 1) * d_k per run, for
# drawing the keys and queries three times (a selection pass per scale and the scored pass), and per
# (run, T^2 d_k) for their four Gram matrices K K^T. Fitted to two measurements of learning_rows with 1000
# runs, 1 step, 1 learning rate: 1.19 s at T = 2, d_k = 8192 and 1.02 s at T = 16, d_k = 1024; they matter
# only for heads far wider than the value dimension (the descent term above, of d_v <= 64, misses them).
NS_PER_LEARNING_KEY = 47.0
NS_PER_LEARNING_GRAM = 0.73
# learning: ns of CPU per (d_k, step) whatever the arrays' sizes, the NumPy calls of a step on small arrays
# (learning_rows with 10 runs, T = 2, d_k = 1, 1 learning rate: 0.71 s for 2000 steps; on a loaded machine).
NS_PER_LEARNING_STEP = 3.5e5
# forward_shape (two forwards per shape, each in float64 and float32 and against a float64 reference: see
# forward_shape_work): ns of CPU per multiply-add of the score and output products, per weight, per normal drawn and
# per reference block of queries. Fitted to forward_shape_rows' process CPU (BLAS threads included) at 8 shapes from
# (4096, 2, 16) to (1, 2048, 4096) on the loaded 2-core machine (2026-12-03): every one within 1.5x (1.0-1.49).
NS_PER_FORWARD_FLOP = 0.11
NS_PER_WEIGHT = 34.0
NS_PER_FORWARD_NORMAL = 44.0
NS_PER_REFERENCE_BLOCK = 8200.0
# Everything that does not grow with the config: Snakemake's start-up, each job's, the lesson
# replications (Exercise 1's legacy stream continued to d_k = 1024 among them), the claims and their
# expectations, the figures and the report (benchmarks/results.csv, pipeline_clean on config/config.yaml:
# 24.2 s of CPU, of which the parts above model 5.0 s).
FIXED_CPU_S = 19.2
# solutions: grading a learner's complete file at the grader's default sizes (Exercise 1: 10,000 pairs per call;
# sdpa-lab grade examples/solutions/correct.py, 3 seeds back to back on the loaded 2-core machine: 3.6, 4.6
# and 5.6 s of CPU, its process and the learner's together; the lesson's 100,000 pairs, drawn only where the
# small draw is not the grader's, would add about 25 s).
GRADE_CPU_S = 4.6
# A value dimension is at most this wide (sdpa_lab.experiments.gradient and .learning: D_V_MAX).
D_V_MAX = 64
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


def _d_v(d_k: int) -> int:
    return min(d_k, D_V_MAX)


def trial_score_files(config: Mapping) -> dict[str, tuple[int, int, int]]:
    """The trial-score files the sweep reads (shared between experiments): path -> (T, trials, d_k)."""
    sharing = [e.section for e in EXPERIMENTS.values() if e.shares_trial_scores]
    return {TRIAL_SCORES.format(seed=config["seed"], T=config[s]["T"], trials=config[s]["trials"], d_k=d_k):
            (config[s]["T"], config[s]["trials"], d_k) for s in sharing for d_k in config[s]["d_k"]}


def forward_shape_work(B: int, T: int, d_k: int) -> float:
    """CPU seconds of forward_shape at one shape: the lesson-shaped forward and the one where every dimension differs
    (validation.other_dimensions)."""
    T_k, d_v = other_dimensions(T, d_k)
    flops = B * T * T * 2 * d_k + B * T * T_k * (d_k + d_v)
    weights = B * T * (T + T_k)
    normals = 3 * B * T * d_k + B * (T * d_k + T_k * (d_k + d_v))
    blocks = 2 * B * -(-T // 256)  # the reference's (256, T_k) blocks of queries, per forward
    return NS * (NS_PER_FORWARD_FLOP * flops + NS_PER_WEIGHT * weights + NS_PER_FORWARD_NORMAL * normals
                 + NS_PER_REFERENCE_BLOCK * blocks)


def estimate(config: Mapping, drawn: Collection[str] = ()) -> Cost:
    """The CPU time and disk use of a run of `config` (a config the schema accepts) in which every
    experiment runs, except the trial-score files in `drawn` (already on disk: named after their
    settings, they are reused)."""
    cost = Cost()
    v = config["variance"]
    cost.cpu_s["variance"] = NS_PER_PAIR_DIMENSION * NS * v["n_pairs"] * sum(v["d_k"])
    planned = trial_score_files(config)
    files = [key for path, key in planned.items() if path not in drawn]
    cost.reused = len(planned) - len(files)
    cost.cpu_s["trial_scores"] = NS_PER_NORMAL * NS * sum(trials * (T + 1) * d_k for T, trials, d_k in files)
    cost.disk_bytes = sum(trials * (T + 1) * 8 + NPY_HEADER_BYTES for T, trials, _ in files) + LEFTOVER_BYTES
    for name, ns in (("entropy_sweep", NS_PER_ENTROPY_SCORE), ("ranking_invariance", NS_PER_RANKING_SCORE)):
        s = config[name]
        cost.cpu_s[name] = ns * NS * s["trials"] * s["T"] * len(s["d_k"])
    cost.cpu_s["entropy_sweep"] += (NS_PER_EXERCISE2_NORMAL * NS * config["entropy_sweep"]["trials"]
                                    * sum(d_k * (EXERCISE2_T + 1) for d_k in EXERCISE2_D_K))
    g = config["gradient"]
    cost.cpu_s["gradient"] = NS * g["trials"] * sum(
        NS_PER_NORMAL * (g["T"] + 1) * _d_v(d_k) + NS_PER_JACOBIAN_ENTRY * g["T"] ** 2 for d_k in g["d_k"])
    learn = config["learning"]
    cost.cpu_s["learning"] = (NS_PER_DESCENT_ELEMENT * NS * learn["runs"] * len(learn["learning_rates"]) * 2
                              * learn["steps"] * learn["T"] * sum(_d_v(d_k) for d_k in learn["d_k"])
                              + NS * learn["runs"] * sum(d_k for d_k in learn["d_k"])
                              * (NS_PER_LEARNING_KEY * (learn["T"] + 1) + NS_PER_LEARNING_GRAM * learn["T"] ** 2)
                              + NS_PER_LEARNING_STEP * NS * len(learn["d_k"]) * learn["steps"])
    cost.cpu_s["forward_shape"] = sum(forward_shape_work(*shape) for shape in config["forward_shape"]["shapes"])
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
