"""B1-B4: why a dot product grows with dimension, and how dividing by sqrt(d_k) undoes it (section "Why a
Dot Product Grows With Dimension", and Exercise 1 which extends it to d_k = 1024).
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np

from sdpa_lab.claims.exact_laws import exact_law, exact_ratio_law
from sdpa_lab.claims.model import Check, Claim, derived, missing, statistical
from sdpa_lab.claims.standard_errors import (
    ALPHA_CLAIM,
    exp_shape,
    log_std_cumulants,
    variance_excess_kurtosis,
    variance_se,
    variance_skewness,
)
from sdpa_lab.results import Results

PAGE = "docs/claims/dot-product-growth.md"

# The checks, each named once: the name makes the check and keys the lesson's sentence it decides.
MEAN, VARIANCE = "mean of raw scores", "variance of raw scores"  # B1
SCALED_VARIANCE = "variance of scores / sqrt(d_k)"  # B2
SLOPE, RATIO = "slope of log std vs log d_k", "std ratio"  # B3
EXERCISE_RAW = "raw variance at d_k = 1024 (Exercise 1)"  # B4: the exercise as written
EXERCISE_SCALED = "scaled variance at d_k = 1024 (Exercise 1)"
SWEEP_RAW, SWEEP_SCALED = "raw variance at d_k = 1024", "scaled variance at d_k = 1024"  # the configured sweep's

# The lesson's sentences the checks decide, verbatim.
_MEAN = "Its expected value is 0, and its variance is 1"
_VARIANCE = "The score has variance $d_k$."
_SCALED_VARIANCE = "So dividing by $\\sqrt{d_k}$ keeps the score variance at roughly 1 no matter how wide the head is."
_SPREAD = ("Double the head size and the scores spread out by $\\sqrt{2}$; go from $d_k = 16$ to $d_k = 256$ and the "
           "typical score magnitude grows by a factor of four.")
_EXERCISE1 = ("Extend the sweep to $d_k = 1024$: draw random $Q$ and $K$, compute the raw dot-product variance and the "
              "scaled variance, and confirm the raw variance is near 1024 while the scaled variance stays near 1.")

# The tolerance of a sample variance of scores, which B2, B4 and B8 share with B1 (the report shows it once).
SE_VARIANCE = ("k standard errors of the sample variance of n independent scores: SE = d sqrt((2 + 6/d) / n), exact "
               "at every d_k. Its law is skewed at small n, so the tolerance is the wider Cornish-Fisher quantile from "
               "its exact skewness and kurtosis, which keeps each tail near its nominal rate; at d_k up to 4, where "
               "its tail is heavier than the series reaches, the wider quantile of its exact law (the n-fold "
               "convolution of the squared score's law)")


def variance_points(R: Results) -> list[tuple[int, int]]:
    """(d_k, n_pairs) of each d_k of variance.csv, in increasing d_k (n_pairs is one setting of the sweep)."""
    n = int(R.first("variance.csv", "n_pairs"))
    return [(int(d), n) for d in R.levels("variance.csv", "d_k")]


def variance_shape(d: int, n: int) -> dict:
    """The skewness and excess kurtosis of a sample variance of n scores, for its Cornish-Fisher tolerance; and, at
    small d_k, its exact law, which gives the tolerance in their place (claims.exact_laws)."""
    return {"skewness": variance_skewness(d, n), "excess_kurtosis": variance_excess_kurtosis(d, n),
            "law": exact_law(d, n)}


def decide_b1(R: Results) -> list[Check]:
    src = "variance.csv"
    out = []
    for d, n in variance_points(R):
        out.append(statistical("B1", MEAN, f"d_k={d}, n={n}",
                               R.value(src, d_k=d, scale="none", statistic="mean"), 0.0, math.sqrt(d / n),
                               "within", src, excess_kurtosis=6.0 / d / n))  # the mean of n scores: kurtosis 6/d / n
        out.append(statistical("B1", VARIANCE, f"d_k={d}, n={n}",
                               R.value(src, d_k=d, scale="none", statistic="variance"), d, variance_se(d, n),
                               "within", src, **variance_shape(d, n)))
    return out


def raw_variance_check(d: int, n: int) -> str:
    """How a derived check names the B1 check it repeats."""
    return f"B1 {VARIANCE} [d_k={d}, n={n}]"


def decide_b2(R: Results) -> list[Check]:
    # variance.csv's scaled variance is the raw one times 1/d_k: B1's evidence again, not new evidence.
    src = "variance.csv"
    return [
        derived("B2", SCALED_VARIANCE, f"d_k={d}, n={n}",
                R.value(src, d_k=d, scale="inv_sqrt_dk", statistic="variance"), 1.0, variance_se(d, n) / d,
                "within", src, of=raw_variance_check(d, n), **variance_shape(d, n))
        for d, n in variance_points(R)
    ]


def decide_b3(R: Results) -> list[Check]:
    src = "variance.csv"
    points = variance_points(R)
    if len(points) < 2:
        return [missing("B3", SLOPE, "", src, "needs at least two d_k values")]
    d = np.array([p[0] for p in points], dtype=float)
    cumulants = {p: log_std_cumulants(*p) for p in points}  # of each log std
    var_log, k3, k4 = (np.array(column) for column in zip(*(cumulants[p] for p in points), strict=True))
    stds = [R.value(src, d_k=int(di), scale="none", statistic="std") for di in d]
    x, y = np.log(d), np.log(stds)
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)  # OLS slope = sum c_i y_i
    # the slope's cumulants are sums of the log stds', weighted by c^2, c^3, c^4
    se_slope = math.sqrt(float(c**2 @ var_log))
    out = [statistical("B3", SLOPE, f"d_k={int(d[0])}..{int(d[-1])}",
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
        out.append(statistical("B3", RATIO, f"d_k={da}->{db}", ratio, expected, se, "within", src,
                               cell=std_b.cell, skewness=skew, excess_kurtosis=kurt,
                               law=exact_ratio_law(da, db, a[1])))
    return out


def decide_b4(R: Results) -> list[Check]:
    # Exercise 1 as written: the lesson's seed-42 stream continued with d_k = 1024 (lesson_variance.csv), always
    src, d = "lesson_variance.csv", 1024
    n = int(R.value(src, "n_samples", d_k=d, quantity="raw_variance"))
    raw = R.value(src, d_k=d, quantity="raw_variance")
    exercise = f"d_k={d}, n={n}, lesson seed"
    out = [
        statistical("B4", EXERCISE_RAW, exercise, raw, d, variance_se(d, n), "within",
                    src, note="the lesson's np.random.seed(42) stream continued past d_k = 256",
                    **variance_shape(d, n)),
        derived("B4", EXERCISE_SCALED, exercise,
                R.value(src, d_k=d, quantity="scaled_variance"), 1.0, variance_se(d, n) / d, "within", src,
                of=f"B4 {EXERCISE_RAW} [{exercise}]", **variance_shape(d, n)),
    ]
    points = dict(variance_points(R))
    if d in points:  # the configured sweep's d_k = 1024 point too: B1's evidence again
        n = points[d]
        src = "variance.csv"
        out += [
            derived("B4", SWEEP_RAW, f"d_k={d}, n={n}",
                    R.value(src, d_k=d, scale="none", statistic="variance"), d, variance_se(d, n),
                    "within", src, of=raw_variance_check(d, n), **variance_shape(d, n)),
            derived("B4", SWEEP_SCALED, f"d_k={d}, n={n}",
                    R.value(src, d_k=d, scale="inv_sqrt_dk", statistic="variance"), 1.0,
                    variance_se(d, n) / d, "within", src, of=raw_variance_check(d, n), **variance_shape(d, n)),
        ]
    return out


B1 = Claim(
    "B1", "A dot product's variance grows like d_k",
    "The dot product of two independent zero-mean unit-variance vectors of length d_k has mean 0 and variance d_k, "
    "at every d_k of the sweep.",
    "the score has variance d_k", "Why a Dot Product Grows With Dimension", ("variance.csv",),
    SE_VARIANCE + ". The mean's SE is sqrt(d / n) exactly, its law symmetric with excess kurtosis 6 / (d n)",
    decide_b1, sentences={MEAN: _MEAN, VARIANCE: _VARIANCE}, page=PAGE, lead=(VARIANCE,), alpha=ALPHA_CLAIM)

B2 = Claim(
    "B2", "Dividing by sqrt(d_k) brings the variance back to 1",
    "After dividing the scores by sqrt(d_k), their variance is 1 at every d_k.",
    "dividing by sqrt(d_k) keeps the score variance at roughly 1 no matter how wide the head is",
    "Why a Dot Product Grows With Dimension", ("variance.csv",),
    SE_VARIANCE + ". The scaled variance is B1's raw variance divided by d_k, and so is its SE: the same evidence, "
    "not counted again in the Bonferroni split",
    decide_b2, sentences={SCALED_VARIANCE: _SCALED_VARIANCE}, page=PAGE, lead=(SCALED_VARIANCE,))

B3 = Claim(
    "B3", "Score magnitude grows like sqrt(d_k)",
    "The standard deviation of the scores grows like sqrt(d_k): the slope of log std against log d_k is 1/2, and each "
    "step of the sweep spreads the scores by sqrt of the ratio of the d_k (16 -> 256: 4x).",
    "double the head size and the scores spread out by sqrt(2); from d_k = 16 to 256 the typical magnitude grows "
    "four-fold", "Why a Dot Product Grows With Dimension", ("variance.csv",),
    "k standard errors from the delta method: Var(log s) = (2 + 6/d) / (4n) per d_k, independent across d_k. The "
    "skewness of log s, and of a ratio's exponential, widens the long side by Cornish-Fisher; a ratio between two d_k "
    "up to 4 takes the wider quantile of its exact law instead (the two sample variances' exact laws)",
    decide_b3, sentences={SLOPE: _SPREAD, RATIO: _SPREAD}, page=PAGE, lead=(RATIO,), alpha=ALPHA_CLAIM)

B4 = Claim(
    "B4", "Exercise 1: d_k = 1024",
    "At d_k = 1024 the raw variance is 1024 and the scaled variance 1: measured always as the exercise is written "
    "(the lesson's seed-42 stream continued with d_k = 1024, 100,000 pairs), and at the configured sweep's "
    "d_k = 1024 when it has one.",
    "confirm the raw variance is near 1024 while the scaled variance stays near 1", "Exercise 1",
    ("lesson_variance.csv", "variance.csv"),
    SE_VARIANCE + ". The exercise's scores come from the lesson's one seed-42 stream, each from fresh rows of Q and K, "
    "so they are independent too. The scaled variances and the configured sweep's d_k = 1024 repeat evidence "
    "already counted (the exercise's raw variance, B1's): not counted again in the Bonferroni split",
    decide_b4, sentences=dict.fromkeys((EXERCISE_RAW, EXERCISE_SCALED, SWEEP_RAW, SWEEP_SCALED), _EXERCISE1),
    page=PAGE, lead=(EXERCISE_RAW, EXERCISE_SCALED), alpha=ALPHA_CLAIM)

# This section's claims, gathered by claims/registry.py: a new claim's block goes just above, into this tuple.
CLAIMS = (B1, B2, B3, B4)
