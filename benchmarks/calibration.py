"""The calibration study's cost, from the files `snakemake --cores 4 calibration` leaves behind.

    snakemake --cores 4 calibration && python benchmarks/calibration.py

Per study and arm, from each batch job's Snakemake benchmark file
(logs/benchmarks/calibration/<study>/<arm>/batch<b>.tsv: the job's peak RSS and wall time) and
its log (logs/calibration/<study>/<arm>/batch<b>.log: the CPU seconds the batch spent inside the
experiments, in deciding the claims, and in the whole job process since it started, and the process's
peak RSS, as sdpa_lab.calibration.runner measures them with the process's own clocks; Snakemake's
sampled cpu_time and max_rss are the fallback for logs without them):

Each study's expectations job (logs/calibration/<study>/expectations.log: the finite-d_k expectations
its batches read, computed once) is shared among its arms in proportion to their runs, and counted
outside the kernels; so are its draws jobs (logs/calibration/<study>/draws<b>.log: what every arm of a batch
makes the same, made once, sdpa_lab.calibration.draws), counted inside the experiments.

* seeds_per_cpu_minute: runs per minute of the jobs' CPU time (start-up included);
* outside_kernels: the share of the jobs' CPU time spent outside the experiments (interpreter and
  imports, the lesson tables read once per job, a space study's expectations computed per sweep, deciding the
  claims, writing the rows);
* decide_share: the part of it spent deciding the claims;
* max_rss_mb: the largest peak RSS of a job, in MiB: the job's own count (getrusage, in its log) where
  given, else Snakemake's sampled max_rss (MB), which misses the end of a short job.

Written to benchmarks/calibration.csv (--out) with the machine's load, and printed. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
from collections import defaultdict
from pathlib import Path

LOG_LINE = re.compile(r"calibration (\S+), arm (\S+), batch (\d+): (\d+) runs, \d+ checks; "
                      r"CPU s: experiments ([\d.]+), decide ([\d.]+), total ([\d.]+)(?:, process ([\d.]+))?"
                      r"(?:; peak RSS (\d+) MiB)?")


def read_jobs(root: Path) -> list[dict]:
    """One record per batch job that has both a benchmark file and a log."""
    jobs = []
    for tsv in sorted((root / "logs" / "benchmarks" / "calibration").glob("*/*/batch*.tsv")):
        study, arm, batch = tsv.parts[-3], tsv.parts[-2], tsv.stem
        log = root / "logs" / "calibration" / study / arm / f"{batch}.log"
        match = LOG_LINE.search(log.read_text()) if log.is_file() else None
        if not match:
            continue
        with tsv.open() as fh:
            bench = next(csv.DictReader(fh, delimiter="\t"))
        jobs.append({"study": study, "arm": arm, "runs": int(match[4]), "experiments": float(match[5]),
                     "decide": float(match[6]), "cpu": float(match[8] or bench["cpu_time"]), "wall": float(bench["s"]),
                     "max_rss": float(match[9] or bench["max_rss"]), "load": float(bench["mean_load"])})
    return jobs


EXPECTATIONS_LINE = re.compile(r"expectations written to \S+; CPU s: process ([\d.]+)")
DRAWS_LINE = re.compile(r"the draws of \d+ runs written to \S+; CPU s: process ([\d.]+)")


def read_study_jobs(root: Path, pattern: str, line: re.Pattern) -> dict[str, float]:
    """The CPU seconds of each study's jobs whose logs match `pattern` (logs/calibration/<study>/<pattern>), summed,
    by study."""
    cpu: dict[str, float] = defaultdict(float)
    for log in sorted((root / "logs" / "calibration").glob(f"*/{pattern}")):
        match = line.search(log.read_text())
        if match:
            cpu[log.parts[-2]] += float(match[1])
    return cpu


def summarise(jobs: list[dict], expectations: dict[str, float], draws: dict[str, float] | None = None) -> list[dict]:
    draws = draws or {}
    groups = defaultdict(list)
    study_runs = defaultdict(int)
    for job in jobs:
        groups[job["study"], job["arm"]].append(job)
        study_runs[job["study"]] += job["runs"]
    rows = []
    for (study, arm), js in sorted(groups.items()):
        runs = sum(j["runs"] for j in js)
        # the arm's share of the study's expectations and draws, each made once for all its runs
        share = runs / study_runs[study]
        drawn = draws.get(study, 0.0) * share
        cpu = sum(j["cpu"] for j in js) + expectations.get(study, 0.0) * share + drawn
        experiments, decide = sum(j["experiments"] for j in js) + drawn, sum(j["decide"] for j in js)
        rows.append({"study": study, "arm": arm, "jobs": len(js), "runs": runs, "cpu_s": round(cpu, 2),
                     "cpu_s_per_run": round(cpu / runs, 4), "seeds_per_cpu_minute": round(60 * runs / cpu, 1),
                     "outside_kernels": round(1 - experiments / cpu, 3), "decide_share": round(decide / cpu, 3),
                     "max_rss_mb": max(j["max_rss"] for j in js), "wall_s": round(sum(j["wall"] for j in js), 1),
                     "mean_load": round(sum(j["load"] for j in js) / len(js), 2)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".", help="the working directory of the calibration run")
    parser.add_argument("--out", default="benchmarks/calibration.csv")
    args = parser.parse_args()
    root = Path(args.root)
    rows = summarise(read_jobs(root), read_study_jobs(root, "expectations.log", EXPECTATIONS_LINE),
                     read_study_jobs(root, "draws*.log", DRAWS_LINE))
    if not rows:
        raise SystemExit("no calibration jobs found: run `snakemake --cores 4 calibration` first")
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    total_cpu = sum(r["cpu_s"] for r in rows)
    for r in rows:
        print(", ".join(f"{k} {v}" for k, v in r.items()))
    print(f"all jobs: {sum(r['runs'] for r in rows)} runs, {total_cpu:.0f} CPU s "
          f"({total_cpu / (os.cpu_count() or 1) / 60:.1f} min on {os.cpu_count()} CPUs if nothing else runs)")


if __name__ == "__main__":
    main()
