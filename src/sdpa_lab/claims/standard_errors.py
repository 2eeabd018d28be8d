"""Standard errors the statistical checks use, and the k that turns them into tolerances."""

from __future__ import annotations

import math
from statistics import NormalDist

# A correct pipeline, re-run with fresh seeds, fails some statistical check by chance
# in fewer than one run in 10,000.
ALPHA_FAMILY = 1e-4


def bonferroni_k(n_checks: int, alpha_family: float = ALPHA_FAMILY) -> float:
    """Two-sided normal quantile giving each of n_checks a false-alarm rate alpha_family / n_checks."""
    if n_checks < 1:
        return float("nan")
    return NormalDist().inv_cdf(1.0 - alpha_family / (2.0 * n_checks))


def variance_se(d: float, n: int) -> float:
    """Standard error of the sample variance of n independent q.k scores of length d (Var = d, E S^4 = 3d^2 + 6d)."""
    return d * math.sqrt((2.0 + 6.0 / d) / n)


def log_std_var(d: int, n: int) -> float:
    """Variance of log(sample std) of n scores: Var(log s^2) / 4 = (2 + 6/d) / (4n) (delta method)."""
    return (2.0 + 6.0 / d) / (4.0 * n)
