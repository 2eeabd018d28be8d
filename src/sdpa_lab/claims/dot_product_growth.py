"""B1-B4: why a dot product grows with dimension, and how dividing by sqrt(d_k) undoes it (section "Why a
Dot Product Grows With Dimension", and Exercise 1 which extends it to d_k = 1024).
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np

from sdpa_lab.claims.model import Check, derived, missing, statistical
from sdpa_lab.claims.standard_errors import (
    exp_shape,
    log_std_cumulants,
    variance_excess_kurtosis,
    variance_se,
    variance_skewness,
)
from sdpa_lab.results import Results


def variance_points(R: Results) -> list[tuple[int, int]]:
    """(d_k, n_pairs) of each d_k of variance.csv, in increasing d_k (n_pairs is one setting of the sweep)."""
    n = int(R.first("variance.csv", "n_pairs"))
    return [(int(d), n) for d in R.levels("variance.csv", "d_k")]


def variance_shape(d: int, n: int) -> dict[str, float]:
    """The skewness and excess kurtosis of a sample variance of n scores, for its Cornish-Fisher tolerance."""
    return {"skewness": variance_skewness(d, n), "excess_kurtosis": variance_excess_kurtosis(d, n)}


def decide_b1(R: Results) -> list[Check]:
    src = "variance.csv"
    out = []
    for d, n in variance_points(R):
        out.append(statistical("B1", "mean of raw scores", f"d_k={d}, n={n}",
                               R.value(src, d_k=d, scale="none", statistic="mean"), 0.0, math.sqrt(d / n),
                               "within", src, excess_kurtosis=6.0 / d / n))  # the mean of n scores: kurtosis 6/d / n
        out.append(statistical("B1", "variance of raw scores", f"d_k={d}, n={n}",
                               R.value(src, d_k=d, scale="none", statistic="variance"), d, variance_se(d, n),
                               "within", src, **variance_shape(d, n)))
    return out


def raw_variance_check(d: int, n: int) -> str:
    """How a derived check names the B1 check it repeats."""
    return f"B1 variance of raw scores [d_k={d}, n={n}]"


def decide_b2(R: Results) -> list[Check]:
    # variance.csv's scaled variance is the raw one times 1/d_k: B1's evidence again, not new evidence.
    src = "variance.csv"
    return [
        derived("B2", "variance of scores / sqrt(d_k)", f"d_k={d}, n={n}",
                R.value(src, d_k=d, scale="inv_sqrt_dk", statistic="variance"), 1.0, variance_se(d, n) / d,
                "within", src, of=raw_variance_check(d, n), **variance_shape(d, n))
        for d, n in variance_points(R)
    ]


def decide_b3(R: Results) -> list[Check]:
    src = "variance.csv"
    points = variance_points(R)
    if len(points) < 2:
        return [missing("B3", "slope of log std vs log d_k", "", src, "needs at least two d_k values")]
    d = np.array([p[0] for p in points], dtype=float)
    cumulants = {p: log_std_cumulants(*p) for p in points}  # of each log std
    var_log, k3, k4 = (np.array(column) for column in zip(*(cumulants[p] for p in points), strict=True))
    stds = [R.value(src, d_k=int(di), scale="none", statistic="std") for di in d]
    x, y = np.log(d), np.log(stds)
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)  # OLS slope = sum c_i y_i
    # the slope's cumulants are sums of the log stds', weighted by c^2, c^3, c^4
    se_slope = math.sqrt(float(c**2 @ var_log))
    out = [statistical("B3", "slope of log std vs log d_k", f"d_k={int(d[0])}..{int(d[-1])}",
                       float(c @ y), 0.5, se_slope, "within", src, cell=stds[-1].cell,
                       skewness=float(c**3 @ k3) / se_slope**3, excess_kurtosis=float(c**4 @ k4) / se_slope**4)]
    pairs = list(pairwise(points))  # each step of the sweep, plus the lesson's 16 -> 256
    n_of = dict(points)
    if {16, 256} <= set(n_of) and (16, 256) not in {(a[0], b[0]) for a, b in pairs}:
        pairs.append(((16, n_of[16]), (256, n_of[256])))
    for a, b in pairs:
        da, db = a[0], b[0]
        std_b = R.value(src, d_k=db, scale="none", statistic="std")
        ratio = std_b / R.value(src, d_k=da, scale="none", statistic="std")
        expected = math.sqrt(db / da)
        # log ratio = log std_b - log std_a, independent: its cumulants add, the odd ones with b's sign
        (var_a, k3_a, k4_a), (var_b, k3_b, k4_b) = cumulants[a], cumulants[b]
        var_log_ratio, k3_log_ratio, k4_log_ratio = var_a + var_b, k3_b - k3_a, k4_a + k4_b
        se = expected * math.sqrt(var_log_ratio)
        # the ratio is exp(log ratio)
        skew, kurt = exp_shape(math.sqrt(var_log_ratio), k3_log_ratio / var_log_ratio**1.5,
                               k4_log_ratio / var_log_ratio**2)
        out.append(statistical("B3", "std ratio", f"d_k={da}->{db}", ratio, expected, se, "within", src,
                               cell=std_b.cell, skewness=skew, excess_kurtosis=kurt))
    return out


def decide_b4(R: Results) -> list[Check]:
    # Exercise 1 as written: the lesson's seed-42 stream continued with d_k = 1024 (lesson_variance.csv), always
    src, d = "lesson_variance.csv", 1024
    n = int(R.value(src, "n_samples", d_k=d, quantity="raw_variance"))
    raw = R.value(src, d_k=d, quantity="raw_variance")
    exercise = f"d_k={d}, n={n}, lesson seed"
    out = [
        statistical("B4", "raw variance at d_k = 1024 (Exercise 1)", exercise, raw, d, variance_se(d, n), "within",
                    src, note="the lesson's np.random.seed(42) stream continued past d_k = 256",
                    **variance_shape(d, n)),
        derived("B4", "scaled variance at d_k = 1024 (Exercise 1)", exercise,
                R.value(src, d_k=d, quantity="scaled_variance"), 1.0, variance_se(d, n) / d, "within", src,
                of=f"B4 raw variance at d_k = 1024 (Exercise 1) [{exercise}]", **variance_shape(d, n)),
    ]
    points = dict(variance_points(R))
    if d in points:  # the configured sweep's d_k = 1024 point too: B1's evidence again
        n = points[d]
        src = "variance.csv"
        out += [
            derived("B4", "raw variance at d_k = 1024", f"d_k={d}, n={n}",
                    R.value(src, d_k=d, scale="none", statistic="variance"), d, variance_se(d, n),
                    "within", src, of=raw_variance_check(d, n), **variance_shape(d, n)),
            derived("B4", "scaled variance at d_k = 1024", f"d_k={d}, n={n}",
                    R.value(src, d_k=d, scale="inv_sqrt_dk", statistic="variance"), 1.0,
                    variance_se(d, n) / d, "within", src, of=raw_variance_check(d, n), **variance_shape(d, n)),
        ]
    return out
