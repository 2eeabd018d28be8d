"""Grades per CPU-minute: a class's submissions graded one after another as a class job grades them.

Each grade runs in its bubblewrap sandbox at the class's limits and sizes
(sdpa_lab.grading.classroom), in this process: its CPU is this process's (the grader:
probes, references, diagnoses) plus its cgroup's (bwrap and all the learner's processes,
cpuacct). The peak memory of each grade is its cgroup's (all the learner's processes
together). Writes benchmarks/grading.csv and prints the figure benchmarks/README.md quotes.

    python benchmarks/grading.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import resource
import subprocess
import time
from pathlib import Path

from sdpa_lab.grading import classroom, sandbox

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples" / "solutions"
# The shipped correct solution, four mistakes, and the correct files off the grader's own draw (float32 and ddof=1;
# default_rng and the keys first, decided over many small calls) and a faked Exercise 1: the costliest grades.
SUBMISSIONS = ("correct", "no_scale", "wrong_axis", "divides_by_dk", "swapped_outputs", "exercise_1_float32_ddof1",
               "exercise_1_default_rng", "keys_before_query", "exercise_1_faked")
CLASS = 30  # learners in the class whose time is estimated: this mix, on the machine's cores


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="times each example submission is graded")
    parser.add_argument("--out", default=str(HERE / "grading.csv"))
    args = parser.parse_args()
    why = sandbox.unavailable()
    if why is not None:
        raise SystemExit(f"benchmarks/grading.py: {why}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    load = os.getloadavg()[0]
    rows = []
    wall0 = time.monotonic()
    for r in range(args.rounds):
        for name in SUBMISSIONS:
            c, w = cpu_seconds(), time.monotonic()
            record = classroom.grade_submission(EXAMPLES / f"{name}.py", name)
            grader = cpu_seconds() - c
            rows.append({"submission": name, "round": r, "passed": record["passed"], "seed": record["seed"],
                         "cpu_s": round(grader + record["learner_cpu_seconds"], 3), "grader_cpu_s": round(grader, 3),
                         "learner_cpu_s": record["learner_cpu_seconds"], "wall_s": round(time.monotonic() - w, 3),
                         "peak_mib": record["peak_mib"], "memory_limit_mib": record["memory_mib"],
                         "n_samples": classroom.CLASS_N_SAMPLES, "machine": platform.node(), "cpus": os.cpu_count(),
                         "load_before": round(load, 2), "commit": commit, "date": time.strftime("%Y-%m-%d")})
            print(f"{name:<16} {rows[-1]['cpu_s']:6.2f} s CPU {rows[-1]['wall_s']:6.2f} s wall "
                  f"{rows[-1]['peak_mib']:6.0f} MiB peak")
    cpu, wall = sum(r["cpu_s"] for r in rows), time.monotonic() - wall0
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} grades in {cpu:.1f} s CPU ({wall:.1f} s wall, 1-minute load {load:.1f} before): "
          f"{60 * len(rows) / cpu:.1f} grades per CPU-minute; largest {max(r['cpu_s'] for r in rows):.1f} s CPU, "
          f"largest peak {max(r['peak_mib'] for r in rows):.0f} MiB of {classroom.CLASS_MEMORY_MIB} MiB; a class of "
          f"{CLASS} of this mix: {CLASS * cpu / len(rows) / os.cpu_count() / 60:.1f} min on {os.cpu_count()} cores "
          f"if idle; wrote {args.out}")


if __name__ == "__main__":
    main()
