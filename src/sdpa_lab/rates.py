"""The Wilson score interval of a rate (the calibration's false-fail rates and the report's learning successes), and
the rate at which a normal deviate falls beyond a threshold (the calibration's tails)."""

from __future__ import annotations

import math

import numpy as np


def normal_tail(t: float) -> float:
    """P(|Z| > t) for a standard normal Z: erfc(t / sqrt(2)), accurate far into the tail (1 - cdf(t) is not)."""
    return math.erfc(t / math.sqrt(2.0))


def wilson(p, n, z: float):
    """Wilson score interval (low, high) of a binomial proportion p out of n trials, at z standard errors;
    elementwise on arrays. Exactly 0 at p = 0 and 1 at p = 1 (not rounded to 1e-18 off them)."""
    p, n = np.asarray(p, dtype=float), np.asarray(n, dtype=float)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = np.where(p == 0, 0.0, np.clip(centre - half, 0, 1))
    high = np.where(p == 1, 1.0, np.clip(centre + half, 0, 1))
    return low, high
