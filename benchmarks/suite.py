"""The test suite's time: the fast lane (`python -m pytest -m "not pipeline"`) and the whole suite (`python -m pytest`),
each run as a contributor runs it (pyproject's addopts: a pytest-xdist worker per core, one more
where the SLURM tests run), one after another.

Per run: wall time, the CPU time of pytest and every process it waited for (workers, Snakemake, the sandbox), the
tests passed, skipped and failed, and the 1-minute load before it. Writes benchmarks/suite.csv and prints each row;
for a run that failed, the failed tests and a file holding pytest's output.
Measure on an idle machine: the workers and Snakemake's jobs take every core.

    python benchmarks/suite.py [--repeats 1] [--lane fast --lane whole]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LANES = {"fast": ["-m", "not pipeline"], "whole": []}


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def counts(summary: str) -> dict[str, int]:
    """passed, skipped, failed (errors included) from pytest's last line, e.g. "1101 passed, 3 skipped in 250.1s"."""
    found = {word: int(n) for n, word in re.findall(r"(\d+) (passed|skipped|failed|errors?|xfailed|xpassed)", summary)}
    return {"passed": found.get("passed", 0), "skipped": found.get("skipped", 0),
            "failed": found.get("failed", 0) + found.get("error", 0) + found.get("errors", 0)}


def run_lane(lane: str) -> dict:
    """One run of `lane`'s pytest command in the checkout, with a fresh --basetemp."""
    with tempfile.TemporaryDirectory(prefix="sdpa-suite-") as basetemp:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={basetemp}/t",
               *LANES[lane]]
        load = os.getloadavg()[0]
        cpu, wall = children_cpu(), time.monotonic()
        # as .ci/run runs it: with Python's bytecode cache, whatever this environment says
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
        wall, cpu = time.monotonic() - wall, children_cpu() - cpu
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    for line in proc.stdout.splitlines():  # which tests failed (addopts' -ra summary): a failed run is no timing
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"  {line}", flush=True)
    if proc.returncode != 0:  # and why: pytest's whole output, kept outside the deleted basetemp
        fd, kept = tempfile.mkstemp(prefix=f"sdpa-suite-{lane}-", suffix=".log")
        with os.fdopen(fd, "w") as f:
            f.write(proc.stdout + proc.stderr)
        print(f"  pytest's output: {kept}", flush=True)
    return {"lane": lane, "command": "python -m pytest" + "".join(f' {a if " " not in a else repr(a)}'
                                                                   for a in LANES[lane]),
            "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), **counts(last), "exit_code": proc.returncode,
            "load_before": round(load, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--lane", action="append", choices=list(LANES), help="default: fast, then whole")
    parser.add_argument("--out", default=str(HERE / "suite.csv"))
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=REPO).stdout.strip()
    rows = []
    for repeat in range(args.repeats):
        for lane in args.lane or list(LANES):
            row = {**run_lane(lane), "repeat": repeat, "machine": platform.node(), "cpus": os.cpu_count(),
                   "commit": commit, "date": time.strftime("%Y-%m-%d")}
            rows.append(row)
            print(f"{row['command']:<38} {row['wall_s']:7.1f} s wall {row['cpu_s']:7.1f} s CPU  {row['passed']} passed "
                  f"{row['skipped']} skipped {row['failed']} failed  (load {row['load_before']} before)", flush=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
