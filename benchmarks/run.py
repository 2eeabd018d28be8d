"""Whole-process benchmarks: the lesson's variance script against the Snakemake pipeline.

    python benchmarks/run.py                     # lesson script, clean pipeline, no-op rerun
    python benchmarks/run.py --repeats 5 --configfile config/large.yaml --skip-lesson
    python benchmarks/run.py --scaling           # variance experiment time vs n * d_k

Default mode, in one run on this machine, each measured --repeats times as a whole process:

* `lesson`: benchmarks/lesson_variance_script.py, the lesson's own variance script with
  Exercise 1's d_k = 1024, run as a plain Python script;
* `pipeline_clean`: `snakemake --cores 4` from clean (no results/, no .snakemake/) in a
  fresh scratch copy of Snakefile, environment.yml, workflow/, profiles/ and the config (so results/ here is
  never touched);
* `pipeline_noop`: `snakemake --cores 4` again in that copy, everything up to date;
* `snakemake_noop`: Snakemake's own no-op, `snakemake --cores 4` on the one-rule workflow
  benchmarks/noop/Snakefile (its output made once first), each run paired with a `pipeline_noop` run
  (A B A B ...): what the pipeline's no-op costs beyond Snakemake's own is the median of the pairs'
  differences (`noop_over_snakemake_s`).

The lesson script and the clean pipeline also alternate (lesson, clean, lesson, clean ...), so a
machine whose speed drifts during the benchmark slows both alike.

Reported: median (min, max) wall time, median CPU time (user + sys), peak RSS of the process tree (ru_maxrss from
os.wait4: the maximum over the process and its waited-for descendants, so for Snakemake
the larger of Snakemake itself and its biggest job), the largest per-job max_rss from
Snakemake's benchmark files (logs/benchmarks/<rule>.tsv), each job's CPU time from the last line of
its log (sdpa_lab.joblog: the start-up before its work, and the work; Snakemake's benchmark files
sample the CPU too seldom for jobs this short), and the ratios to the lesson
script (also the CPU floor: the clean pipeline's CPU time divided by the number of CPUs, over
the lesson script's wall time, the best ratio any schedule of the same work could reach),
and the highest 1-minute load average seen just before a run (other work on the
machine slows the wall times; the CPU times are less sensitive to it). The figures go to
benchmarks/results.csv (--out). Nothing is asserted.

--scaling times `sdpa_lab.experiments.variance.variance_rows` (what the variance job runs) for one d_k at several
(n_pairs, d_k), each point in its own subprocess (its own ru_maxrss), and fits
time = a + b * n * d_k, for the wall time and for the CPU time of the call (the CPU time is
what to read on a busy machine); written to benchmarks/scaling.csv.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from measuring import (  # benchmarks/measuring.py, beside this script
    HERE,
    REPO,
    SNAKEMAKE,
    fmt,
    job_benchmarks,
    job_cpu,
    machine_info,
    make_workdir,
    noop_run,
    one_rule_workdir,
    run_measured,
    summarize,
    write_csv,
)

LESSON_SCRIPT = HERE / "lesson_variance_script.py"

# (n_pairs, d_k) of the --scaling points: n * d_k from 2**22 to 2**28, several d_k per size.
SCALING_POINTS = [
    (1 << 18, 16), (1 << 14, 256),
    (1 << 20, 16), (1 << 16, 256), (1 << 12, 4096),
    (1 << 22, 16), (1 << 18, 256), (1 << 14, 4096),
    (1 << 20, 256), (1 << 16, 4096),
]
SCALING_CHILD = """
import json, sys, time
from sdpa_lab.experiments.variance import variance_rows
n, d_k = int(sys.argv[1]), int(sys.argv[2])
start, cpu = time.perf_counter(), time.process_time()
variance_rows(20241129, [d_k], n)
print(json.dumps({"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu}))
"""


def bench_default(args) -> None:
    configfile = args.configfile.resolve()
    config_name = str(configfile.relative_to(REPO)) if configfile.is_relative_to(REPO) else str(configfile)
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="sdpa-bench-"))
    try:
        lesson, clean, noop, jobs_per_run = [], [], [], []
        for i in range(args.repeats):
            if not args.skip_lesson:
                print(f"lesson script {i + 1}/{args.repeats} ...", flush=True)
                lesson.append(run_measured([sys.executable, str(LESSON_SCRIPT)], scratch))
            print(f"pipeline clean {i + 1}/{args.repeats} ...", flush=True)
            work = make_workdir(scratch, configfile)
            clean.append(run_measured(SNAKEMAKE, work))
            cpu = job_cpu(work)
            jobs_per_run.append({job: {**figures, **cpu.get(job, {})} for job, figures in job_benchmarks(work).items()})
            if i == 0:
                print(f"pipeline no-op and Snakemake's own no-op (one rule), x{args.repeats} each ...", flush=True)
                one_rule = one_rule_workdir(scratch)
                pairs = [(noop_run(work), run_measured(SNAKEMAKE, one_rule)) for _ in range(args.repeats)]
                noop = [ours for ours, _ in pairs]
            shutil.rmtree(work)
        if lesson:
            rows.append(summarize("lesson", lesson, "lesson (hard-coded)"))
        max_job = max((j["max_rss_mib"], rule) for jobs in jobs_per_run for rule, j in jobs.items())
        # What the jobs' own processes took (their logs); the rest of the run's CPU is Snakemake's (its start-up,
        # parsing, scheduling, each job's shell and script file) and the jobs' exits after their logs' last line.
        jobs_cpu = statistics.median(sum(j.get("startup_cpu_s", 0) + j.get("work_cpu_s", 0) for j in jobs.values())
                                     for jobs in jobs_per_run)
        rows.append(summarize("pipeline_clean", clean, config_name, max_job_rss_mib=max_job[0],
                              max_job_rss_rule=max_job[1], jobs_cpu_s=jobs_cpu))
        rows.append(summarize("pipeline_noop", noop, config_name, noop_over_snakemake_s=statistics.median(
            ours["wall_s"] - theirs["wall_s"] for ours, theirs in pairs), noop_cpu_over_snakemake_s=statistics.median(
            ours["cpu_s"] - theirs["cpu_s"] for ours, theirs in pairs)))
        rows.append(summarize("snakemake_noop", [theirs for _, theirs in pairs], "benchmarks/noop/Snakefile"))
        # per-job figures: medians over the clean runs
        for rule in sorted(jobs_per_run[0]):
            rows.append({
                "benchmark": f"job:{rule}",
                "config": config_name,
                "repeats": len(jobs_per_run),
                "median_wall_s": statistics.median(j[rule]["wall_s"] for j in jobs_per_run),
                "min_wall_s": min(j[rule]["wall_s"] for j in jobs_per_run),
                "max_wall_s": max(j[rule]["wall_s"] for j in jobs_per_run),
                "max_job_rss_mib": max(j[rule]["max_rss_mib"] for j in jobs_per_run),
                "job_cpu_s": statistics.median(j[rule]["cpu_s"] for j in jobs_per_run),
                **{key: statistics.median(j[rule].get(key, math.nan) for j in jobs_per_run)
                   for key in ("startup_cpu_s", "work_cpu_s")},
            })
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    lesson = next((r for r in rows if r["benchmark"] == "lesson"), None)
    if lesson:
        for row in rows:
            if not row["benchmark"].startswith("job:"):
                row["wall_vs_lesson"] = row["median_wall_s"] / lesson["median_wall_s"]
                row["rss_vs_lesson"] = row["peak_rss_mib"] / lesson["peak_rss_mib"]
        # The best any schedule could do here: the pipeline's CPU time spread evenly over every CPU.
        pipeline = next(r for r in rows if r["benchmark"] == "pipeline_clean")
        pipeline["cpu_floor_vs_lesson"] = pipeline["median_cpu_s"] / os.cpu_count() / lesson["median_wall_s"]

    print(f"\n{'benchmark':<30} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7} {'start-up':>9} {'work':>7} "
          f"{'peak RSS MiB':>13} {'max job RSS MiB':>16} {'time/lesson':>12} {'RSS/lesson':>11}")
    for r in rows:
        # a job's CPU: its process's, from its log, where it has one (else Snakemake's sampled figure)
        own = r.get("startup_cpu_s", math.nan) + r.get("work_cpu_s", math.nan)
        cpu = r.get("median_cpu_s", own if math.isfinite(own) else r.get("job_cpu_s"))
        print(f"{r['benchmark']:<30} {r['median_wall_s']:>9.2f} {r['min_wall_s']:>7.2f} {r['max_wall_s']:>7.2f} "
              f"{cpu:>7.2f} {fmt(r.get('startup_cpu_s')):>9} {fmt(r.get('work_cpu_s')):>7} "
              f"{fmt(r.get('peak_rss_mib')):>13} {fmt(r.get('max_job_rss_mib')):>16} "
              f"{fmt(r.get('wall_vs_lesson')):>12} {fmt(r.get('rss_vs_lesson')):>11}")
    clean = next(r for r in rows if r["benchmark"] == "pipeline_clean")
    print(f"\nlargest job peak RSS (Snakemake benchmark files): {clean['max_job_rss_mib']:.1f} MiB "
          f"({clean['max_job_rss_rule']})")
    print_budget(rows)
    print(f"the jobs' own processes took {clean['jobs_cpu_s']:.1f} s of the clean run's {clean['median_cpu_s']:.1f} s "
          "of CPU (their logs); the rest is Snakemake's own (start-up, parsing, scheduling, each job's shell and "
          "script preamble file) and the jobs' exits")
    if "cpu_floor_vs_lesson" in clean:
        print(f"CPU floor: the clean pipeline's {clean['median_cpu_s']:.1f} s of CPU over {os.cpu_count()} CPUs is "
              f"{clean['median_cpu_s'] / os.cpu_count():.2f} s, {clean['cpu_floor_vs_lesson']:.2f}x the lesson "
              "script: no schedule of the same work finishes faster on this machine")
    print(f"highest 1-min load average before a run: {max(r.get('max_load_before', 0) for r in rows):.2f} "
          f"on {os.cpu_count()} cpus")
    machine = machine_info()
    print("machine: " + json.dumps(machine))
    write_csv(rows, args.out, machine)


def linear_fit(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Least squares y = a + b * x: (a, b, R^2)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return a, b, 1 - ss_res / ss_tot


def bench_scaling(args) -> None:
    points = [(n, d) for n, d in SCALING_POINTS if n * d <= args.max_elements]
    rows = []
    print(f"{'n_pairs':>9} {'d_k':>5} {'n*d_k':>12} {'wall s':>8} {'CPU s':>7} {'CPU ns per n*d_k':>17} "
          f"{'process RSS MiB':>16}")
    for n, d_k in points:
        run = run_measured([sys.executable, "-c", SCALING_CHILD, str(n), str(d_k)], REPO)
        timed = json.loads(run["stdout"].strip().splitlines()[-1])
        rows.append({"benchmark": "scaling:variance", "n_pairs": n, "d_k": d_k, "n_times_d_k": n * d_k,
                     "seconds": timed["seconds"], "cpu_seconds": timed["cpu_seconds"],
                     "cpu_ns_per_element": timed["cpu_seconds"] / (n * d_k) * 1e9,
                     "process_wall_s": run["wall_s"], "peak_rss_mib": run["rss_mib"],
                     "load_before": run["load_before"]})
        print(f"{n:>9} {d_k:>5} {n * d_k:>12} {timed['seconds']:>8.3f} {timed['cpu_seconds']:>7.3f} "
              f"{rows[-1]['cpu_ns_per_element']:>17.2f} {run['rss_mib']:>16.1f}", flush=True)
    xs = [r["n_times_d_k"] for r in rows]
    print()
    for label, key in (("wall", "seconds"), ("CPU", "cpu_seconds")) if len(set(xs)) > 1 else ():
        a, b, r2 = linear_fit(xs, [r[key] for r in rows])
        print(f"fit ({label}): seconds = {a:.3f} + {b * 1e9:.2f} ns * n * d_k  (R^2 = {r2:.4f})")
        for r in rows:
            r.update({f"fit_{key}_intercept": a, f"fit_{key}_ns_per_element": b * 1e9, f"fit_{key}_r2": r2})
    print(f"max peak RSS per point {max(r['peak_rss_mib'] for r in rows):.1f} MiB; "
          f"highest 1-min load average before a point {max(r['load_before'] for r in rows):.2f} "
          f"on {os.cpu_count()} cpus")
    write_csv(rows, args.scaling_out, machine_info())


# The speed budget, on a 2-core machine (benchmarks/README.md): every default run contains the lesson
# script's own work (Exercise 1), and its floor is that work on one core with everything else beside it on
# the other (1.0x), so a clean run may take up to 1.8x that script; a no-op rerun at most 0.3 s more than
# Snakemake's own no-op on a one-rule workflow.
BUDGET = {"clean_vs_lesson": 1.8, "noop_over_snakemake_s": 0.3, "job_rss_mib": 256}


def print_budget(rows: list[dict]) -> None:
    """The three figures of the speed budget, each against its target."""
    clean = next(r for r in rows if r["benchmark"] == "pipeline_clean")
    noop = next(r for r in rows if r["benchmark"] == "pipeline_noop")

    def verdict(ok: bool) -> str:
        return "met" if ok else "OVER"

    print("\nspeed budget (medians):")
    if "wall_vs_lesson" in clean:
        ratio = clean["wall_vs_lesson"]
        print(f"  clean run / lesson Exercise-1 script: {ratio:.2f}x "
              f"(target <= {BUDGET['clean_vs_lesson']}x: {verdict(ratio <= BUDGET['clean_vs_lesson'])})")
    over = noop["noop_over_snakemake_s"]
    print(f"  no-op rerun: {noop['median_wall_s']:.2f} s, {over:+.2f} s beside Snakemake's own no-op of one rule "
          f"({noop['noop_cpu_over_snakemake_s']:+.2f} s of CPU) "
          f"(target <= +{BUDGET['noop_over_snakemake_s']} s: {verdict(over <= BUDGET['noop_over_snakemake_s'])})")
    # Snakemake's benchmark files sample the memory of a job now and then, and miss the peak of short
    # jobs; the process tree's peak (Snakemake itself or its largest job, whichever is larger) bounds them all.
    job, tree = clean["max_job_rss_mib"], clean["peak_rss_mib"]
    print(f"  largest job's peak RSS: {job:.0f} MiB in Snakemake's benchmark files ({clean['max_job_rss_rule']}), "
          f"at most {tree:.0f} MiB (the run's process tree) "
          f"(target < {BUDGET['job_rss_mib']} MiB: {verdict(tree < BUDGET['job_rss_mib'])})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (default 3)")
    parser.add_argument("--configfile", type=Path, default=REPO / "config" / "config.yaml",
                        help="config the pipeline runs on (default config/config.yaml)")
    parser.add_argument("--skip-lesson", action="store_true", help="do not time the lesson script")
    parser.add_argument("--out", type=Path, default=HERE / "results.csv", help="CSV of the default mode")
    parser.add_argument("--scaling", action="store_true", help="time the variance experiment vs n * d_k instead")
    parser.add_argument("--max-elements", type=float, default=2**28, help="largest n * d_k in --scaling")
    parser.add_argument("--scaling-out", type=Path, default=HERE / "scaling.csv", help="CSV of --scaling")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.scaling:
        bench_scaling(args)
    else:
        bench_default(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
