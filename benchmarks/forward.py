"""Forward benchmark: sdpa_lab's attention against the lesson's, float32 and float64.

    python benchmarks/forward.py [--shape 8 1024 64] [--repeats 7] [--out benchmarks/forward.csv]

For each dtype and implementation: median (and min) wall time of one call over
--repeats calls after one warm-up call, the tracemalloc peak of one more call
(NumPy reports its array buffers to tracemalloc), and the output dtypes. Nothing
is asserted: the figures are printed and written to the CSV.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from sdpa_lab import scaled_dot_product_attention
from sdpa_lab.attention import scaled_dot_product_attention_chunked

HERE = Path(__file__).resolve().parent


# ---- the lesson's version, copied verbatim --------------------------------------------
def softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def lesson_scaled_dot_product_attention(Q, K, V):
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    weights = softmax(scores, axis=-1)
    out = weights @ V
    return out, weights
# ---------------------------------------------------------------------------------------


IMPLEMENTATIONS = {
    "lesson": lambda Q, K, V: lesson_scaled_dot_product_attention(Q, K, V),
    "sdpa_lab": lambda Q, K, V: scaled_dot_product_attention(Q, K, V),
    "sdpa_lab_chunked": lambda Q, K, V: (scaled_dot_product_attention_chunked(Q, K, V), None),
}


def time_call(fn, args, repeats: int) -> list[float]:
    """Wall times of `repeats` calls of fn(*args), after one warm-up call."""
    fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return times


def traced_peak(fn, args) -> int:
    """Peak bytes allocated (tracemalloc) during one call of fn(*args), results included."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = fn(*args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", type=int, nargs=3, default=[8, 1024, 64], metavar=("B", "T", "D_K"))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE / "forward.csv", help="CSV to write ('-' for none)")
    args = parser.parse_args(argv)
    B, T, d_k = args.shape
    rng = np.random.default_rng(args.seed)
    base = [rng.standard_normal((B, T, d_k)) for _ in range(3)]

    machine = {
        "load_before": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": datetime.date.today().isoformat(),
    }
    rows = []
    reference = {}
    print(f"forward on (B, T, d_k) = ({B}, {T}, {d_k}), median of {args.repeats} calls")
    print(f"{'dtype':<8} {'implementation':<17} {'median ms':>10} {'min ms':>8} {'peak MiB':>9} "
          f"{'out dtype':>9} {'weights':>8} {'max |out - lesson64|':>21}")
    for dtype in (np.float32, np.float64):
        Q, K, V = (a.astype(dtype) for a in base)
        for name, fn in IMPLEMENTATIONS.items():
            out, weights = fn(Q, K, V)
            if dtype is np.float64 and name == "lesson":
                reference["out"] = out
            times = time_call(fn, (Q, K, V), args.repeats)
            peak = traced_peak(fn, (Q, K, V))
            row = {
                "dtype": np.dtype(dtype).name,
                "implementation": name,
                "B": B, "T": T, "d_k": d_k,
                "repeats": args.repeats,
                "median_s": statistics.median(times),
                "min_s": min(times),
                "tracemalloc_peak_mib": peak / 2**20,
                "out_dtype": out.dtype.name,
                "weights_dtype": weights.dtype.name if weights is not None else "",
                "_out": out,
            }
            rows.append(row)
    for row in rows:
        diff = float(np.max(np.abs(row.pop("_out") - reference["out"])))
        row["max_abs_diff_vs_lesson_float64"] = diff
        row.update(machine)
        print(f"{row['dtype']:<8} {row['implementation']:<17} {row['median_s'] * 1e3:>10.1f} "
              f"{row['min_s'] * 1e3:>8.1f} {row['tracemalloc_peak_mib']:>9.1f} {row['out_dtype']:>9} "
              f"{row['weights_dtype'] or '-':>8} {diff:>21.2e}")
    by = {(r["dtype"], r["implementation"]): r for r in rows}
    for dtype in ("float32", "float64"):
        lesson = by[(dtype, "lesson")]["median_s"]
        for name in ("sdpa_lab", "sdpa_lab_chunked"):
            print(f"{dtype}: lesson / {name} time = {lesson / by[(dtype, name)]['median_s']:.2f}x")
    print(f"1-min load average before: {machine['load_before']:.2f}; "
          f"machine: {machine['cpu_count']} cpus, {machine['platform']}, Python {machine['python']}, "
          f"NumPy {machine['numpy']}")
    if str(args.out) != "-":
        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
