"""The cost model (sdpa_lab.workflow_support.cost) against measured CPU, at the configs it has to hold for.

    python benchmarks/cost.py                 # the config-space study's configs and the large ones -> cost.csv
    python benchmarks/cost.py --fit           # the fit points instead -> cost_fit.csv, and the constants per term
                                              # (every experiment that declares its work: registry.EXPERIMENTS)
    python benchmarks/cost.py --step-repeats 3  # the learning step past the cache, again and again -> cost_step.csv

Each config runs in a fresh process, as a job would, with BLAS on one thread (ONE_THREAD): every
trial-score file is drawn (write_trial_scores, rule trial_scores' function) and every experiment's
own function (registry.EXPERIMENTS[...].load(), what its rule runs) is called, each timed with the
process's CPU clock (time.process_time). Imports and the interpreter's
start-up are not counted: the model's fixed part holds them. Written to benchmarks/cost.csv, one
row per (config, part) and one per config's total, with the model's estimate and measured / model.
Nothing is asserted: the figures and their reading are in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import copy
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))

from sdpa_lab.calibration.space import draw_configs  # noqa: E402
from sdpa_lab.config import check_config, load_schema, resolve  # noqa: E402
from sdpa_lab.config_file import read_config_file as load_config_file  # noqa: E402
from sdpa_lab.experiments.declaration import Experiment  # noqa: E402
from sdpa_lab.experiments.registry import EXPERIMENTS  # noqa: E402
from sdpa_lab.workflow_support import cost  # noqa: E402

SPACE_CONFIGS = 12  # the first this many configs the config-space study draws
CHILD = """
import json, sys, tempfile, time
from pathlib import Path
from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of, trial_scores_files
from sdpa_lab.experiments.trial_scores import write_trial_scores
from sdpa_lab.workflow_support.cost import trial_score_files
config = json.loads(sys.stdin.read())
cpu = {}
with tempfile.TemporaryDirectory() as tmp:
    def local(path):
        return str(Path(tmp) / Path(path).name)
    start = time.process_time()
    for path, (T, trials, d_k) in trial_score_files(config).items():
        write_trial_scores(config["seed"], d_k, T, trials, local(path))
    cpu["trial_scores"] = time.process_time() - start
    for name, e in EXPERIMENTS.items():
        if e.section is None or name not in sys.argv[1:]:
            continue
        settings = settings_of(config, name)
        files = {d_k: local(p) for d_k, p in trial_scores_files(name, settings).items()}
        function = e.load()
        start = time.process_time()
        function(settings, files)
        cpu[name] = time.process_time() - start
print(json.dumps(cpu))
"""


# BLAS on one thread: on a shared machine a second BLAS thread waits for a core by spinning, and its process CPU
# grows with the machine's load, not with the work (a (86, 391) forward: 0.005 s of CPU on one thread, 0.19 s on two
# at load 7); the model counts the work.
ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def with_defaults(config: dict) -> dict:
    """`config` as the workflow holds it: the schema's defaults filled in, checked."""
    return check_config(copy.deepcopy(config))


# The parts measured at a large config that changes only some sections (None: every part).
LARGE_PARTS = {"gradient T 1024": ["trial_scores", "gradient"], "learning T 1024": ["learning"],
               "learning T 4096": ["learning"], "learning T 4096 d_k 2048": ["learning"],
               "learning 755 steps": ["learning"]}
# The learning section of the config-space study's config that the model undercounted 2x before its
# many-step terms (config_space #6 of that draw): 755 steps of tiny arrays, learning rates from 5e-324 to 1e6.
MANY_STEPS = {"d_k": [21], "T": 2, "runs": 11, "steps": 755, "loss_threshold": 1.0122562141178477e-06,
              "learning_rates": [40.936273705857396, 852531.7621546661, 1578.5512008007343, 113248.87656997563,
                                 1e6, 5e-324, 0.09839732001571778, 3.6970370705204902e-06, 11792.444882129586,
                                 6.509992230042674e-06, 233738.80663705582, 0.004490767340489638,
                                 6.0615423775200615e-06]}


def large_configs() -> dict[str, dict]:
    """config/large.yaml, and configs at the schema's far ends the audit of issue 38 ran: T = 1024 in the gradient
    sweep and up to 4096 in the learning sweep (there also at the widest head the config checks allow), d_k 65,536,
    10^7 pairs and 10^6 trials at small heads; and MANY_STEPS. Sizes the model is linear in (runs, steps, trials)
    are cut so that each runs in about a minute."""
    large = load_config_file(REPO / "config" / "large.yaml")
    small = {"entropy_sweep": {"d_k": [1, 2], "trials": 1_000_000},
             "ranking_invariance": {"d_k": [1, 2], "trials": 1_000_000},
             "gradient": {"d_k": [1, 2], "trials": 200_000}, "variance": {"d_k": [1, 4], "n_pairs": 10_000_000},
             "learning": {"d_k": [1], "runs": 20_000, "steps": 20}}
    return {
        "large.yaml": large,
        "small heads, 10^7 pairs, 10^6 trials": small,
        "d_k 65536": {"variance": {"d_k": [65536], "n_pairs": 2000}, "entropy_sweep": {"d_k": [65536], "trials": 1000},
                      "ranking_invariance": {"d_k": [65536], "trials": 1000},
                      "gradient": {"d_k": [65536], "trials": 1000},
                      "learning": {"d_k": [65536], "runs": 10, "steps": 20}},
        "gradient T 1024": {"gradient": {"d_k": [1, 64], "T": 1024, "trials": 100}},
        "learning T 1024": {"learning": {"d_k": [64], "T": 1024, "runs": 10, "steps": 10}},
        "learning T 4096": {"learning": {"d_k": [16], "T": 4096, "runs": 10, "steps": 1}},
        "learning T 4096 d_k 2048": {"learning": {"d_k": [2048], "T": 4096, "runs": 10, "steps": 2}},
        "learning 755 steps": {"learning": MANY_STEPS},
    }


SHARING = tuple(e.section for e in EXPERIMENTS.values() if e.shares_trial_scores)
# The sections a fit point does not measure, at small sizes: their trial scores are drawn (and measured) anyway.
QUIET = {**{name: {"d_k": [4], "T": 8, "trials": 100} for name in SHARING}}


def _sweep(d_k, T, trials) -> dict:
    """The three trial-score experiments at one (d_k, T, trials): they share the trial-score files."""
    return {name: {"d_k": d_k, "T": T, "trials": trials} for name in SHARING}


def _learning(d_k, T, runs, steps, rates) -> dict:
    return {"learning": {"d_k": d_k, "T": T, "runs": runs, "steps": steps,
                         "learning_rates": [10.0 ** (i / 4 - 3) for i in range(rates)]}}


# The fit's points made by hand for the shipped experiments, apart from the configs the model is held to: each
# part's sizes varied one at a time and together, small heads and wide, short sequences and long, from the schema's
# low edges up (name -> (parts, config)). An experiment none of them measures gets its own (generated_points).
FIT_POINTS: dict[str, tuple[list[str], dict]] = {
    **{f"variance {d} x {n}": (["variance"], QUIET | {"variance": {"d_k": d, "n_pairs": n}})
       for d, n in [([1], 3_000_000), ([4], 1_000_000), ([64], 100_000), ([1024], 10_000), ([65536], 1000),
                    ([1, 2, 3, 4, 5, 6, 7, 8], 300_000), ([16], 1000), ([1, 2], 1000), ([256, 4096], 5000)]},
    **{f"sweep {d} T {T} x {n}": (["entropy_sweep", "ranking_invariance", "gradient"], _sweep(d, T, n))
       for d, T, n in [([1], 2, 100_000), ([1, 2], 8, 50_000), ([64], 8, 20_000), ([4096], 8, 2000),
                       ([1], 64, 5000), ([16], 256, 500), ([1], 1024, 100), ([4, 16, 64, 256], 16, 5000),
                       ([1], 2, 100), ([65536], 2, 100), ([2], 512, 300), ([8], 32, 30_000)]},
    **{f"learning {d} T {T} runs {r} steps {st} lr {k}": (["learning"], QUIET | _learning(d, T, r, st, k))
       for d, T, r, st, k in [([1], 2, 10, 1, 1), ([1], 2, 1000, 50, 11), ([64], 8, 64, 50, 11),
                              ([1024], 8, 64, 20, 11), ([1], 64, 50, 20, 11), ([256], 64, 20, 10, 5),
                              ([1], 512, 10, 5, 11), ([64], 512, 10, 2, 3), ([1, 4, 16], 8, 200, 100, 2),
                              ([8192], 2, 200, 5, 11), ([1], 1024, 10, 1, 20), ([16], 128, 30, 30, 11),
                              ([4], 16, 10, 400, 11), ([2048], 256, 10, 1, 1), ([1], 8, 10000, 5, 11),
                              ([1], 512, 10, 20, 11), ([1], 256, 10, 60, 11), ([16], 1024, 10, 3, 11),
                              ([4], 128, 100, 40, 11), ([1], 2048, 10, 2, 11), ([16], 4096, 10, 1, 3),
                              ([1], 4096, 10, 20, 11), ([512], 3000, 10, 3, 11), ([8], 2, 20, 500, 13),
                              ([32], 3, 10, 1000, 5), ([2], 4, 300, 200, 7)]},
    **{f"forward_shape {shapes}": (["forward_shape"], QUIET | {"forward_shape": {"shapes": shapes}})
       for shapes in [[[1, 1, 1]], [[4096, 2, 16]], [[1, 1024, 2048]], [[8, 1024, 64]], [[2, 8, 32]] * 8,
                      [[64, 64, 64], [1, 300, 7]], [[1, 2048, 1]], [[512, 16, 512]], [[3, 1, 8], [1, 6, 16]]]},
}


def generated_points(e: Experiment, root: dict) -> dict[str, tuple[list[str], dict]]:
    """Fit points of an experiment no hand-made point measures: its section at its defaults, and each integer setting
    at a quarter and at four times its default (within its bounds), and each list of sizes (d_k) as its smallest and
    its largest entry alone, one at a time."""
    points = {f"{e.name} at its defaults": ([e.name], QUIET | {e.section: {}})}
    for key, prop in root["properties"][e.section]["properties"].items():
        prop = resolve(prop, root) | {k: v for k, v in prop.items() if k != "$ref"}  # its own default, beside a $ref
        default = prop.get("default")
        if prop.get("type") == "array" and isinstance(default, list) and len(set(default)) > 1 \
                and all(isinstance(v, int) for v in default):  # a list of sizes (d_k): its ends alone, one entry
            for value in (min(default), max(default)):
                points[f"{e.name} {key} [{value}]"] = ([e.name], QUIET | {e.section: {key: [value]}})
            continue
        if prop.get("type") != "integer" or "default" not in prop:
            continue
        for factor in (0.25, 4):
            value = min(prop["maximum"], max(prop["minimum"], round(prop["default"] * factor)))
            if value != prop["default"]:
                points[f"{e.name} {key} {value}"] = ([e.name], QUIET | {e.section: {key: value}})
    return points


def fit_points() -> dict[str, tuple[list[str], dict]]:
    """Every fit point: FIT_POINTS, and generated_points for each experiment of the registry that declares its work
    and none of FIT_POINTS measures."""
    measured = {part for parts, _ in FIT_POINTS.values() for part in parts}
    root = load_schema()
    return FIT_POINTS | {name: point for e in EXPERIMENTS.values() if e.work and e.name not in measured
                         for name, point in generated_points(e, root).items()}


def fit(rows: list[dict], points: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Per part, the ns per unit of each term of cost.work that best fit the measured CPU of `rows` (least squares
    on relative error, every constant at least 0: a term that would come out negative is dropped and the rest
    refitted)."""
    import numpy as np

    fitted = {}
    for part, terms in cost.NS_PER.items():
        obs = [(cost.work(with_defaults(points[r["config"]]), _files(points[r["config"]]))[part], r["measured_cpu_s"])
               for r in rows if r["part"] == part and r["measured_cpu_s"] > 0]  # relative error: a CPU to compare
        if not obs:
            continue
        names = list(dict.fromkeys([*terms, *(t for w, _ in obs for t in w)]))  # its declared terms, and its work's
        X = np.array([[w.get(t, 0) for t in names] for w, _ in obs]) * cost.NS
        y = np.array([m for _, m in obs])
        keep, coef = [j for j in range(len(names)) if X[:, j].any()], np.zeros(0)
        while keep:  # none left: every constant 0, the part measured but not modelled by its terms
            coef, *_ = np.linalg.lstsq(X[:, keep] / y[:, None], np.ones(len(y)), rcond=None)
            if (coef >= 0).all():
                break
            keep = [j for j, c in zip(keep, coef, strict=True) if c >= 0]
        coef = coef if keep else np.zeros(0)
        fitted[part] = {name: 0.0 for name in names} | {names[j]: float(f"{c:.3g}") for j, c in zip(keep, coef,
                                                                                                     strict=True)}
    return fitted


def _files(config: dict) -> list:
    return list(cost.trial_score_files(with_defaults(config)).values())


def step_repeats(repeats: int) -> list[dict]:
    """The learning step past the cache, measured alone: learning at T = 512, 768 and 1024 (steps 20, 10, 10),
    `repeats` times in turn, each run's CPU less the model's other learning terms, per element of
    descent_gram_uncached. Its spread is the machine's, run to run (the step is bound by memory bandwidth, which
    the machine's other work shares)."""
    rows = []
    for _ in range(repeats):
        for T, steps in ((512, 20), (1024, 10), (768, 10)):
            config = with_defaults(QUIET | _learning([16], T, 10, steps, 11))
            load = os.getloadavg()[0]
            measured = measure(config, ["learning"])["learning"]
            terms = cost.work(config, [])["learning"]
            other = cost.NS * sum(cost.NS_PER["learning"][t] * n for t, n in terms.items()
                                  if t != "descent_gram_uncached")
            rows.append({"group": "step", "config": f"learning [16] T {T} runs 10 steps {steps} lr 11",
                         "part": "descent_gram_uncached", "measured_cpu_s": round(measured, 4),
                         "model_cpu_s": round(other + cost.NS * cost.NS_PER["learning"]["descent_gram_uncached"]
                                              * terms["descent_gram_uncached"], 4),
                         "ratio": round((measured - other) / (cost.NS * terms["descent_gram_uncached"]), 3),
                         "load_before": round(load, 2)})
            print(rows[-1], flush=True)
    return rows


def space_configs() -> dict[str, dict]:
    """The first SPACE_CONFIGS configs config/calibration/config_space.yaml draws."""
    space = load_config_file(REPO / "config" / "calibration" / "config_space.yaml")["space"]
    return {f"config_space #{i}": c for i, c in enumerate(draw_configs(space["seed"], SPACE_CONFIGS,
                                                                       space["max_cpu_s"]))}


def measure(config: dict, parts: list[str]) -> dict[str, float]:
    """CPU seconds of each part of a run of `config` (the trial scores, and each experiment of `parts`), in a fresh
    process."""
    proc = subprocess.run([sys.executable, "-c", CHILD, *parts], input=json.dumps(config), capture_output=True,
                          text=True, check=True, env={**os.environ, "PYTHONPATH": str(REPO / "src"), **ONE_THREAD})
    return json.loads(proc.stdout)


def _ratio(measured: float, model: float) -> float | str:
    """measured / model, or "" where the model says 0 (an experiment whose constants are not fitted yet)."""
    return round(measured / model, 3) if model else ""


def rows_of(group: str, name: str, config: dict, only: list[str] | None) -> list[dict]:
    """Measured against modelled CPU per part of `config`, and their totals."""
    config = with_defaults(config)
    model = cost.estimate(config).cpu_s
    parts = [p for p in (only or model) if p not in ("fixed", "solutions", "trial_scores")]
    load = os.getloadavg()[0]
    measured = measure(config, parts)
    if only and "trial_scores" not in only:
        measured.pop("trial_scores")
    rows = [{"group": group, "config": name, "part": part, "measured_cpu_s": round(cpu, 4),
             "model_cpu_s": round(model[part], 4), "ratio": _ratio(cpu, model[part]),
             "load_before": round(load, 2)} for part, cpu in measured.items()]
    total_m, total_e = sum(measured.values()), sum(model[p] for p in measured)
    rows.append({"group": group, "config": name, "part": "total", "measured_cpu_s": round(total_m, 4),
                 "model_cpu_s": round(total_e, 4), "ratio": _ratio(total_m, total_e), "load_before": round(load, 2)})
    for row in rows:
        print(f"{row['config'][:38]:<38} {row['part']:<18} {row['measured_cpu_s']:>9.3f} {row['model_cpu_s']:>9.3f} "
              f"{row['ratio']}", flush=True)
    return rows


def kept_rows(path: Path, measured: set[str], current: set[str]) -> list[dict]:
    """The rows of the CSV at `path` (if any) whose config is not among `measured` but still among `current` (a
    point or config since removed is dropped), in their order."""
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return [row for row in csv.DictReader(fh) if row["config"] not in measured and row["config"] in current]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "cost.csv"))
    parser.add_argument("--only", help="run only the configs (with --fit: the fit points) whose name contains "
                        "this, e.g. an experiment's name")
    parser.add_argument("--fit", action="store_true", help="measure the fit points instead and print the fitted "
                        "constants of every experiment that declares its work")
    parser.add_argument("--step-repeats", type=int, default=0,
                        help="measure the learning step past the cache this many times -> cost_step.csv (its ratio "
                             "column: ns per element)")
    args = parser.parse_args(argv)
    if args.step_repeats:
        rows = step_repeats(args.step_repeats)
        args.out = str(HERE / "cost_step.csv")
    elif args.fit:  # the fit points alone, to benchmarks/cost_fit.csv; then paste each part's constants where it is
        current = set(fit_points())  # declared: an experiment's into its `ns_per`, the trial scores' into cost.py
        points = {name: point for name, point in fit_points().items() if not args.only or args.only in name}
        rows = [row for name, (parts, config) in points.items()
                for row in rows_of("fit", name, config, ["trial_scores", *parts])]
        asked = {part for parts, _ in points.values() for part in parts}  # the trial scores' only with them all
        for part, constants in fit(rows, {name: config for name, (_, config) in points.items()}).items():
            if not args.only or part in asked:
                print(f"{part}: ns_per={json.dumps(constants)}")
        args.out = str(HERE / "cost_fit.csv")
    else:
        configs = [("config_space", n, c) for n, c in space_configs().items()]
        configs += [("large", n, c) for n, c in large_configs().items()]
        current = {name for _, name, _ in configs}
        rows = [row for group, name, config in configs if not args.only or args.only in name
                for row in rows_of(group, name, config, LARGE_PARTS.get(name))]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                            check=False).stdout.strip()
    stamp = {"machine": platform.node() or "?", "cpus": os.cpu_count(), "commit": commit,
             "date": datetime.date.today().isoformat()}
    stamped = [row | stamp for row in rows]
    if args.only:  # a part measured again: the file's other rows kept, as they were measured
        stamped = kept_rows(Path(args.out), {row["config"] for row in rows}, current) + stamped
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*rows[0], *stamp])
        writer.writeheader()
        writer.writerows(stamped)
    within = [r for r in rows if r["part"] == "total" and r["ratio"] != ""]
    if not within:
        return 0
    worst = max(within, key=lambda r: max(r["ratio"], 1 / r["ratio"]))
    print(f"totals within 1.5x: {sum(1 / 1.5 <= r['ratio'] <= 1.5 for r in within)} of {len(within)}; "
          f"worst {worst['config']}: measured / model {worst['ratio']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
