"""Where a calibration batch's CPU goes: a profile of one batch, in this process, split by kind of work.

    OPENBLAS_NUM_THREADS=1 python benchmarks/calibration_profile.py smallest --runs 300 --fixed-dir results

Makes batch `--batch` of `--runs` runs of a study's arm (`runner.batch_cells`, the study's batch size set to
--runs; a one-sweep study's expectations computed first, as its expectations job does), each run's rows written
as CSV text as `runner.batch_job` writes them, in one process, and gives its CPU per run (process time):

* experiments: the seeded experiments (runner.stacked_tables);
* expectations: a space study's, computed per sweep in its batch (on its unit-variance means, made once for the
  study as its expectations job makes them, and shown apart, per run of the study);
* deciding: the claims decided on each run's tables and the run's rows made; the rows written: their CSV text;
* rest: the batch's bookkeeping (grouping, the lesson tables read).

Unless --quick, the experiments are split further, in two more passes of the same batch: one with every stream
metered (every module's `sdpa_lab.seeding.stream` wrapped while it runs) into

* draws: the Generators' draw calls (standard_normal ...): the runs' own values, which no layout can share;
* seeding: the streams made and spawned;

and one under cProfile, whose split of the rest gives

* NumPy calls: reductions, einsum, sorts, array creation (C functions NumPy's Python calls);
* array operators and Python: the experiments' functions' own time, in which cProfile counts the arithmetic
  operators on arrays (x * y) as well as the Python.

The draws' floor is the same number of standard normals drawn from one SFC64 stream in large blocks: no call or
stream overhead.
Prints a table; nothing is written or asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import os
import pstats
import sys
import time
from pathlib import Path

import numpy as np

from sdpa_lab import seeding
from sdpa_lab.calibration import runner
from sdpa_lab.calibration.check_table import check_text
from sdpa_lab.calibration.studies import CORRECT_ARM, load_study
from sdpa_lab.claims.expectation_table import sweep_expectations, unit_variance_means

DRAW_METHODS = ("standard_normal", "normal", "random", "integers", "uniform", "choice", "permutation", "shuffle",
                "standard_exponential", "gamma", "exponential")


class Meter:
    """The values drawn and the CPU seconds spent drawing them and making streams, over every stream."""

    def __init__(self):
        self.values, self.draws, self.seeding = 0, 0.0, 0.0


class MeteredStream:
    """A Generator's stand-in that meters its draw methods (and its spawns, and theirs) into a Meter."""

    def __init__(self, rng, meter: Meter):
        self._rng, self._meter = rng, meter

    def spawn(self, n: int):
        start = time.process_time()
        children = self._rng.spawn(n)
        self._meter.seeding += time.process_time() - start
        return [MeteredStream(child, self._meter) for child in children]

    def __getattr__(self, name):
        method = getattr(self._rng, name)
        if name not in DRAW_METHODS:
            return method

        def metered_draw(*args, **kwargs):
            start = time.process_time()
            out = method(*args, **kwargs)
            self._meter.draws += time.process_time() - start
            self._meter.values += np.size(out)
            return out
        return metered_draw


class metered_streams:
    """While entered, every module's `stream` (sdpa_lab.seeding.stream) returns a MeteredStream, its making timed."""

    def __init__(self, meter: Meter):
        self.meter, self.original, self.patched = meter, seeding.stream, []

    def __enter__(self):
        original, meter = self.original, self.meter

        def metered_stream(*args, **kwargs):
            start = time.process_time()
            rng = original(*args, **kwargs)
            meter.seeding += time.process_time() - start
            return MeteredStream(rng, meter)

        self.patched = [m for m in list(sys.modules.values()) if getattr(m, "stream", None) is original]
        for module in self.patched:
            module.stream = metered_stream
        return meter

    def __exit__(self, *exc):
        for module in self.patched:
            module.stream = self.original


def floor_seconds(normals: int, repeats: int = 3) -> float:
    """The CPU seconds of drawing `normals` standard normals from one SFC64 stream in blocks of 2**16 (best of
    `repeats`): the drawing alone, no call or stream overhead."""
    rng, block, best = np.random.Generator(np.random.SFC64(0)), 1 << 16, float("inf")
    out = np.empty(block)
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(normals // block):
            rng.standard_normal(out=out)
        rng.standard_normal(normals % block)
        best = min(best, time.process_time() - start)
    return best


def numpy_share(run) -> float:
    """The share of the experiments' CPU outside draws and seeding spent in NumPy's C calls, by cProfile of `run`
    (under metered_streams, so draws and seeding are the metering wrappers' own, left out)."""
    profile = cProfile.Profile()
    original = runner.stacked_tables
    runner.stacked_tables = lambda *args: profile.runcall(original, *args)
    try:
        run()
    finally:
        runner.stacked_tables = original
    stats = pstats.Stats(profile).stats
    metering = {"metered_draw", "metered_stream", "spawn"}
    skipped = {f for f in stats if f[2] in metering and f[0].endswith("calibration_profile.py")}
    under = set()  # everything called only from within the metering wrappers
    for func in stats:
        if _only_under(stats, func, skipped):
            under.add(func)
    numpy = python = 0.0
    for func, (_, _, tottime, _, _) in stats.items():
        if func in skipped or func in under:
            continue
        if func[0] == "~" or "/numpy/" in func[0]:
            numpy += tottime
        else:
            python += tottime
    return numpy / (numpy + python)


def _only_under(stats, func, roots, seen=None) -> bool:
    seen = set() if seen is None else seen
    if func in roots:
        return True
    if func in seen:
        return False
    seen.add(func)
    callers = stats[func][4]
    return bool(callers) and all(_only_under(stats, caller, roots, seen) for caller in callers)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", help="a study file's stem in config/calibration/")
    parser.add_argument("--runs", type=int, default=200, help="runs of the batch (the study's batch size set to it)")
    parser.add_argument("--batch", type=int, default=0, help="which batch of that size (runs batch * runs ...)")
    parser.add_argument("--quick", action="store_true", help="the unprofiled split only (one pass)")
    parser.add_argument("--arm", default=CORRECT_ARM)
    parser.add_argument("--fixed-dir", default=None, help="the pipeline's results/ (the lesson tables), else made")
    parser.add_argument("--studies-dir", default="config/calibration")
    args = parser.parse_args(argv)
    study = load_study(Path(args.studies_dir) / f"{args.study}.yaml")
    # a one-sweep study's expectations are its expectations job's (outside the batch); a space study's, per sweep
    expectations = None if study.space else sweep_expectations(study.sweeps()[0])
    batch = dataclasses.replace(study, batch=args.runs)
    sweeps = study.sweeps()  # a space study's drawn once, as its job reads them from rule calibration_sweeps' file
    # a space study's unit-variance means: its expectations job's, made once for all its batches (outside the batch)
    start = time.process_time()
    unit_means = unit_variance_means(sweeps) if study.space else None
    unit_cpu = time.process_time() - start

    def run(timing=None):
        """The batch as its job makes it: each run's rows written as CSV text (runner.batch_job)."""
        written = 0.0
        for i, rows in enumerate(runner.batch_cells(batch, args.arm, args.batch, timing, args.fixed_dir,
                                                    expectations, sweeps, unit_means)):
            start = time.process_time()
            check_text(rows, header=i == 0)
            written += time.process_time() - start
        if timing is not None:
            timing["written"] = written

    if not study.space:  # imports and first calls made; a space study's are few beside its runs (and its sweeps'
        # expectations, cached in the process once computed, must be computed in the measured batch)
        runner.run_batch(dataclasses.replace(study, batch=1), args.arm, 0, None, args.fixed_dir, expectations, sweeps)
    plain: dict = {}
    start = time.process_time()
    run(plain)
    cpu = time.process_time() - start
    n = args.runs
    plain.setdefault("expectations", 0.0)  # a runner that does not time them apart: in its experiments
    rows = [("total (process CPU of the batch)", cpu), ("  experiments", plain["experiments"]),
            ("  expectations (a space study's, per sweep)", plain["expectations"]),
            ("  deciding (and the rows)", plain["decide"]), ("  the rows written (CSV text)", plain["written"]),
            ("  rest (grouping, the lesson tables)", cpu - sum(plain[k] for k in ("experiments", "expectations",
                                                                                  "decide", "written")))]
    if study.space:  # not in the batch's total: its job's, shared by the study's runs
        rows.append(("the study's unit-variance means (its expectations job), per run of the study",
                     unit_cpu * n / study.runs(CORRECT_ARM)))
    if not args.quick:
        rows += split_experiments(run, n)
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    print(f"{args.study}, arm {args.arm}, batch {args.batch} of {n} runs, OPENBLAS_NUM_THREADS={threads}; "
          "ms of process CPU per run:")
    for what, seconds in rows:
        print(f"  {what:60s} {1e3 * seconds / n:10.3f}")


def split_experiments(run, n: int) -> list[tuple[str, float]]:
    """The experiments' CPU of `run` (n runs) by kind: metered (draws, seeding), then the rest split by cProfile."""
    metered: dict = {}
    with metered_streams(Meter()) as meter:
        run(metered)
    with metered_streams(Meter()):
        share = numpy_share(run)
    other = metered["experiments"] - meter.draws - meter.seeding
    floor = floor_seconds(meter.values // n)
    return [("experiments, metered:", metered["experiments"]), ("  draws (the Generators' draw calls)", meter.draws),
            ("  seeding (streams made, spawned)", meter.seeding),
            ("  NumPy calls (reductions, einsum, sorts ...)", other * share),
            ("  array operators and Python (the functions' own time)", other * (1 - share)),
            (f"the draws' floor: {meter.values / n:,.0f} values per run from one stream", floor * n)]


if __name__ == "__main__":
    main()
