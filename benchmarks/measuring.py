"""What benchmarks/run.py measures with: a whole process timed (wall, CPU, peak RSS), the scratch copy a
pipeline runs in, a no-op run, each job's CPU from its log and Snakemake's benchmark files, the code's version
and the machine, and the CSV the figures go to."""

from __future__ import annotations

import csv
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
NOOP_WORKFLOW = HERE / "noop" / "Snakefile"  # Snakemake's own no-op: one rule, its output present
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--cores", "4"]


def run_measured(cmd: list[str], cwd: Path) -> dict:
    """Run cmd to completion: its wall time (s), CPU time (user + sys, s) and peak RSS (MiB) of
    its process tree, the 1-minute load average just before (other work on the machine), output."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen in step
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed with exit status {proc.returncode}:\n{stderr[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "load_before": load, "stdout": stdout, "stderr": stderr}


def make_workdir(parent: Path, configfile: Path) -> Path:
    """A scratch copy of the workflow (not of results/) with `configfile` as config/config.yaml, the
    default profile (profiles/, if any) and environment.yml (every rule's `conda:`), so Snakemake runs as it
    does in the repository."""
    work = Path(tempfile.mkdtemp(prefix="work-", dir=parent))
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(REPO / name, work / name)
    for folder in ("workflow", "profiles"):
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (work / "config").mkdir()
    shutil.copy(configfile, work / "config" / "config.yaml")
    return work


def noop_run(work: Path, attempts: int = 3) -> dict:
    """A measured `snakemake` rerun that had nothing to do. A rerun that did work (the
    sources, which some rules take as inputs, were edited meanwhile) is not a no-op: it
    is reported and discarded, and the measurement retried."""
    for _ in range(attempts):
        run = run_measured(SNAKEMAKE, work)
        if "Nothing to be done" in run["stdout"] + run["stderr"]:
            return run
        reasons = sorted({line.strip() for line in run["stderr"].splitlines() if "reason:" in line})
        print("  the rerun was not a no-op (discarded): " + "; ".join(reasons)[:500], flush=True)
    raise RuntimeError(f"no no-op rerun in {attempts} attempts: is someone editing the workflow or sources?")


def one_rule_workdir(parent: Path) -> Path:
    """A scratch copy of the one-rule workflow (benchmarks/noop/Snakefile), its output made: a no-op from then on."""
    work = Path(tempfile.mkdtemp(prefix="noop-", dir=parent))
    shutil.copy(NOOP_WORKFLOW, work / "Snakefile")
    run_measured(SNAKEMAKE, work)
    return work


# The last line of a job's log (sdpa_lab.joblog.job_log): its wall time and its process's CPU time.
DONE = re.compile(r": done in [\d.]+ s; CPU s: start-up ([\d.]+), work ([\d.]+)$", re.M)


def job_cpu(work: Path) -> dict[str, dict[str, float]]:
    """Per-job CPU seconds from the jobs' logs: {job: {startup_cpu_s, work_cpu_s}}, the job named as in
    job_benchmarks (logs/<rule>.log, logs/trial_scores/<stem>.log)."""
    jobs = {}
    root = work / "logs"
    for log in sorted(root.rglob("*.log")):
        found = DONE.findall(log.read_text(errors="replace"))
        if found and "benchmarks" not in log.relative_to(root).parts:
            startup, cpu = map(float, found[-1])
            jobs[log.relative_to(root).with_suffix("").as_posix()] = {"startup_cpu_s": startup, "work_cpu_s": cpu}
    return jobs


def job_benchmarks(work: Path) -> dict[str, dict[str, float]]:
    """Per-job figures from Snakemake's benchmark files: {job: {wall_s, max_rss_mib, cpu_s}}.

    A job is named after its rule, or for a rule with wildcards (trial_scores) as
    <rule>/<its benchmark file's stem>.
    """
    jobs = {}
    root = work / "logs" / "benchmarks"
    for tsv in sorted(root.rglob("*.tsv")):
        with open(tsv, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if rows:
            last = rows[-1]
            jobs[tsv.relative_to(root).with_suffix("").as_posix()] = {
                "wall_s": float(last["s"]),
                "max_rss_mib": float(last["max_rss"]) if last["max_rss"] != "NA" else float("nan"),
                "cpu_s": float(last["cpu_time"]) if last["cpu_time"] != "NA" else float("nan"),
            }
    return jobs


def code_version() -> str:
    """The commit measured, with '+dirty' when the working tree has uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def machine_info() -> dict:
    import numpy
    import snakemake

    return {
        "commit": code_version(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "snakemake": snakemake.__version__,
        "date": datetime.date.today().isoformat(),
    }


def summarize(name: str, runs: list[dict], config: str, **extra) -> dict:
    walls = [r["wall_s"] for r in runs]
    return {
        "benchmark": name,
        "config": config,
        "repeats": len(runs),
        "median_wall_s": statistics.median(walls),
        "min_wall_s": min(walls),
        "max_wall_s": max(walls),
        "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "peak_rss_mib": max(r["rss_mib"] for r in runs),
        **extra,
        "max_load_before": max(r["load_before"] for r in runs),
    }


def fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else ("" if v is None else str(v))


def write_csv(rows: list[dict], path: Path, machine: dict) -> None:
    fields = list(dict.fromkeys(k for row in rows for k in row)) + list(machine)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: fmt(v) for k, v in {**row, **machine}.items()})
    print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
