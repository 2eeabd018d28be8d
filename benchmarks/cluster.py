"""Expected wall time of a run on a SLURM cluster of C cores, from the per-job benchmark files of a run.

    snakemake --cores 4 calibration          # or any target; leaves logs/benchmarks/**.tsv
    python benchmarks/cluster.py --under logs/benchmarks/calibration --local-seconds 600

Each job of the run left a Snakemake benchmark file (its wall time t_j, column `s`). On a
cluster where each job is a one-CPU SLURM job, C cores run the N jobs in ceil(N / C) waves:

    T(C) = max(sum_j t_j / C, max_j t_j) + ceil(N / C) * L

L is the latency each wave adds: the job's two nested Snakemake start-ups (the batch step
and the `srun` step), submission, and the wait for the plugin's next status check.
--latency defaults to what the one-node test cluster showed (docs/cluster.md); on a busy
cluster add the queue wait. The printed table gives T(C) for each C next
to the measured local time (--local-seconds). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

# Seconds per wave, measured on the one-node test cluster (tests/pipeline/slurm/cluster.sh, 2 CPUs,
# load about 8 from other work): single-rule jobs spent 8-12 s in SLURM for 2-5 s of their
# own benchmark time (the two Snakemake start-ups), and the plugin's status check saw each
# end 1-6 s later; submission about 1 s.
DEFAULT_LATENCY = 12.0


def job_seconds(root: Path) -> list[float]:
    """The wall time (`s`) of every benchmark file under `root`, one per job."""
    seconds = []
    for tsv in sorted(root.rglob("*.tsv")):
        with tsv.open() as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        if rows:
            seconds.append(float(rows[-1]["s"]))
    return seconds


def expected_wall(seconds: list[float], cores: int, latency: float) -> float:
    """T(C) above."""
    waves = math.ceil(len(seconds) / cores)
    return max(sum(seconds) / cores, max(seconds)) + waves * latency


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--under", type=Path, default=Path("logs/benchmarks"),
                        help="folder of the run's benchmark files (default: logs/benchmarks)")
    parser.add_argument("--cores", type=int, nargs="+", default=[2, 8, 32, 128])
    parser.add_argument("--latency", type=float, default=DEFAULT_LATENCY, help="seconds each wave of jobs adds")
    parser.add_argument("--local-seconds", type=float, help="the measured local wall time of the same run")
    args = parser.parse_args(argv)
    seconds = job_seconds(args.under)
    if not seconds:
        parser.error(f"no benchmark files under {args.under}: run the target first")
    print(f"{len(seconds)} jobs under {args.under}: {sum(seconds):.1f} s in all, longest {max(seconds):.1f} s; "
          f"latency {args.latency:.0f} s per wave")
    if args.local_seconds is not None:
        print(f"measured locally: {args.local_seconds:.1f} s")
    print("cores  expected wall (s)")
    for cores in args.cores:
        print(f"{cores:5d}  {expected_wall(seconds, cores, args.latency):10.1f}")


if __name__ == "__main__":
    main()
