"""B10: without the scale, a wide head stops learning (the lesson's opening, "Welcome to Scaled Dot-Product
Attention").
"""

from __future__ import annotations

import math

import numpy as np

from sdpa_lab.claims.model import Check, missing, statistical
from sdpa_lab.claims.standard_errors import paired_proportion_se
from sdpa_lab.results import Results, ResultsError


def _success(R: Results, d: int, scale: str):
    """Success fraction at the best learning rate of (d_k, scale), and that learning rate."""
    t = R["learning.csv"]
    best = t[(t.d_k == d) & (t.scale == scale) & (t.best_lr == 1) & (t.statistic == "success_fraction")]
    if len(best) != 1:
        raise ResultsError(f"{R.dir / 'learning.csv'}: expected one best learning rate for d_k={d}, scale={scale}")
    lr = float(best.lr.iloc[0])
    return R.value("learning.csv", d_k=d, scale=scale, lr=lr, statistic="success_fraction"), lr


def _trend(ds: list[int], fractions: list[float], runs: int) -> tuple[float, float, float]:
    """OLS slope of success fraction vs log d_k, its SE (worst-case binomial p = 1/2, independent d_k), and the
    largest fall (or rise) the slope can show at all: sum of the positive OLS weights."""
    x = np.log(ds)
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)  # slope = sum c_i p_i
    return float(c @ np.array(fractions)), math.sqrt(float(c @ c) * 0.25 / runs), float(np.sum(np.maximum(c, 0)))


def decide_b10(R: Results) -> list[Check]:
    src = "learning.csv"
    t = R[src]
    ds = [int(d) for d in sorted(t.d_k.unique())]
    runs = int(t.runs.iloc[0])
    lrs = sorted(t.lr.unique())
    success = {(d, sc): _success(R, d, sc) for d in ds for sc in ("none", "inv_sqrt_dk")}
    edge = [f"{sc} at d_k={d}" for (d, sc), (_, lr) in success.items() if lr in (lrs[0], lrs[-1])]
    note = ("best learning rate at the edge of the grid for " + ", ".join(edge)) if edge else ""
    span = f"d_k={ds[0]}..{ds[-1]}, runs={runs}"
    out = []
    if len(ds) < 2:
        out.append(missing("B10", "slope of unscaled success fraction vs log d_k", span, src,
                           "needs at least two d_k values"))
    else:  # the trend over the whole sweep, not only its end points
        for scale, check, relation in (("none", "slope of unscaled success fraction vs log d_k", "below"),
                                       ("inv_sqrt_dk", "slope of scaled success fraction vs log d_k", "not below")):
            fractions = [success[d, scale][0] for d in ds]
            slope, se, reach = _trend(ds, fractions, runs)
            out.append(statistical("B10", check + " (best learning rate each)", span, slope, 0.0, se, relation,
                                   src, cell=fractions[-1].cell, reach=reach, note=note if scale == "none" else ""))
    (u1, lr_u), (s1, lr_s) = success[ds[-1], "none"], success[ds[-1], "inv_sqrt_dk"]
    # the same runs under both scales: the paired SE, from the runs only one of the two heads learns
    only_s, only_u = (int(R.value(src, d_k=ds[-1], scale="inv_sqrt_dk_minus_none", statistic=f"only_{sc}_succeeds"))
                      for sc in ("scaled", "unscaled"))
    on_target = R.value(src, d_k=ds[-1], scale="none", lr=lr_u, statistic="starts_on_target")
    out.append(statistical("B10", "scaled minus unscaled success fraction at the widest head",
                           f"d_k={ds[-1]}, runs={runs}, lr={lr_s:g} vs {lr_u:g}", s1 - u1, 0.0,
                           paired_proportion_se(only_s, only_u, runs), "above", src, cell=s1.cell, reach=1.0,
                           note=f"paired: {only_s} runs only the scaled head learns, {only_u} only the unscaled; "
                                f"{round(float(on_target) * runs)} unscaled runs start on their target (loss 0: a "
                                "success at step 0)"))
    return out
