"""B10: without the scale, a wide head stops learning (the lesson's opening, "Welcome to Scaled Dot-Product
Attention").
"""

from __future__ import annotations

import math

from sdpa_lab.claims.model import Check, statistical
from sdpa_lab.results import Results, ResultsError


def _success(R: Results, d: int, scale: str):
    """Success fraction at the best learning rate of (d_k, scale), and that learning rate."""
    t = R["learning.csv"]
    best = t[(t.d_k == d) & (t.scale == scale) & (t.best_lr == 1) & (t.statistic == "success_fraction")]
    if len(best) != 1:
        raise ResultsError(f"{R.dir / 'learning.csv'}: expected one best learning rate for d_k={d}, scale={scale}")
    lr = float(best.lr.iloc[0])
    return R.value("learning.csv", d_k=d, scale=scale, lr=lr, statistic="success_fraction"), lr


def decide_b10(R: Results) -> list[Check]:
    src = "learning.csv"
    t = R[src]
    ds = [int(d) for d in sorted(t.d_k.unique())]
    runs = int(t.runs.iloc[0])
    lrs = sorted(t.lr.unique())
    se_diff = math.sqrt(0.25 / runs + 0.25 / runs)  # two success fractions, worst-case binomial p = 1/2
    (u0, _), (s0, _) = _success(R, ds[0], "none"), _success(R, ds[0], "inv_sqrt_dk")
    (u1, lr_u), (s1, lr_s) = _success(R, ds[-1], "none"), _success(R, ds[-1], "inv_sqrt_dk")
    edge = [f"{sc} at d_k={d}" for d in ds for sc in ("none", "inv_sqrt_dk")
            if _success(R, d, sc)[1] in (lrs[0], lrs[-1])]
    note = ("best learning rate at the edge of the grid for " + ", ".join(edge)) if edge else ""
    span = f"d_k={ds[0]}->{ds[-1]}, runs={runs}"
    return [
        statistical("B10", "fall of unscaled success fraction (best learning rate each)", span, u0 - u1, 0.0,
                    se_diff, "above", src, cell=u1.cell, note=note),
        statistical("B10", f"scaled success fraction minus its value at d_k={ds[0]}", span, s1 - s0, 0.0,
                    se_diff, "not below", src, cell=s1.cell),
        statistical("B10", "scaled minus unscaled success fraction at the widest head",
                    f"d_k={ds[-1]}, runs={runs}, lr={lr_s:g} vs {lr_u:g}", s1 - u1, 0.0, se_diff, "above", src,
                    cell=s1.cell),
    ]
