"""Where a calibration batch's CPU goes: a profile of one batch, in this process, split by kind of work.

    OPENBLAS_NUM_THREADS=1 python benchmarks/calibration_profile.py smallest --runs 300 --fixed-dir results

Runs `--runs` runs of a study's arm (its first runs, as its batch 0 makes them: `runner.batch_runs`, the
study's batch size set to --runs) twice: once with the process CPU clock only (the run's CPU, as a batch
job's log gives it: experiments, deciding, total), once under cProfile, whose time is split into

* draws: the Generators' draw methods (standard_normal ...): the runs' own normals, which no layout can share;
* seeding: making the runs' seeded streams (sdpa_lab.seeding.stream, calibration_seed), their spawns included;
* numpy: every other NumPy call (reductions, ufuncs, einsum, argsort, array creation) in the experiments;
* python (experiments): the experiments' own Python, outside those calls;
* deciding: the claims decided on each run's tables (the Results built, the checks, the rows written out);
* rest: the batch's bookkeeping (expectations per sweep in a space study, grouping, the lesson tables read).

cProfile slows Python calls more than NumPy's work, so its shares overstate the Python; the unprofiled
total is the run's CPU. The normals each run draws are counted too (a proxy around every stream), and
their floor measured: the same number of normals drawn from one SFC64 stream in large blocks.
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
from sdpa_lab.calibration.studies import CORRECT_ARM, load_study
from sdpa_lab.claims.expectation_table import sweep_expectations

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
    parser.add_argument("--arm", default=CORRECT_ARM)
    parser.add_argument("--fixed-dir", default=None, help="the pipeline's results/ (the lesson tables), else made")
    parser.add_argument("--studies-dir", default="config/calibration")
    args = parser.parse_args(argv)
    study = load_study(Path(args.studies_dir) / f"{args.study}.yaml")
    # a one-sweep study's expectations are its expectations job's (outside the batch); a space study's, per sweep
    expectations = None if study.space else sweep_expectations(study.sweeps()[0])
    batch = dataclasses.replace(study, batch=args.runs)

    def run(timing=None):
        return runner.run_batch(batch, args.arm, args.batch, timing, args.fixed_dir, expectations)

    if not study.space:  # imports and first calls made; a space study's are few beside its runs (and its sweeps'
        # expectations, cached in the process once computed, must be computed in the measured batch)
        runner.run_batch(dataclasses.replace(study, batch=1), args.arm, 0, None, args.fixed_dir, expectations)
    plain: dict = {}
    start = time.process_time()
    run(plain)
    cpu = time.process_time() - start
    metered: dict = {}
    with metered_streams(Meter()) as meter:
        run(metered)
    with metered_streams(Meter()):
        share = numpy_share(run)
    n = args.runs
    other = metered["experiments"] - meter.draws - meter.seeding
    floor = floor_seconds(meter.values // n)
    rows = [("total (process CPU of the batch)", cpu), ("  experiments", plain["experiments"]),
            ("  expectations (a space study's, per sweep)", plain["expectations"]),
            ("  deciding (and the rows)", plain["decide"]),
            ("  rest (grouping, the lesson tables)", cpu - sum(plain[k] for k in ("experiments", "expectations",
                                                                                  "decide"))),
            ("experiments, metered:", metered["experiments"]), ("  draws (the Generators' draw calls)", meter.draws),
            ("  seeding (streams made, spawned)", meter.seeding),
            ("  NumPy calls (reductions, einsum, sorts ...)", other * share),
            ("  array operators and Python (the functions' own time)", other * (1 - share)),
            (f"the draws' floor: {meter.values / n:,.0f} values per run from one stream", floor * n)]
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    print(f"{args.study}, arm {args.arm}, batch {args.batch} of {n} runs, OPENBLAS_NUM_THREADS={threads}; "
          "ms of process CPU per run:")
    for what, seconds in rows:
        print(f"  {what:60s} {1e3 * seconds / n:10.3f}")


if __name__ == "__main__":
    main()
