"""The exact laws of a sample variance of scores and of a ratio of sample stds (claims.exact_laws): against the closed
form at d_k = 2, the moments theory gives, and seeded simulations of the statistics themselves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.claims import exact_laws as L
from sdpa_lab.claims.standard_errors import bonferroni_k, variance_se


def test_the_square_of_a_score_of_length_2_has_the_laplace_law():
    # q.k over two entries is Laplace(0, 1): P(S^2 > y) = exp(-sqrt(y))
    y = np.array([0.01, 0.5, 4.0, 25.0, 100.0, 400.0])
    survival = 1.0 - L.square_cdf(y, 2)
    assert survival == pytest.approx(np.exp(-np.sqrt(y)), rel=1e-4)


@pytest.mark.parametrize("d, n", [(1, 1000), (2, 5000), (4, 1000)])
def test_the_sum_of_squares_has_the_mean_and_variance_theory_gives(d, n):
    values, p = L.sum_law(d, n)
    mean = p @ values
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    assert mean == pytest.approx(n * d, rel=1e-9)  # moved onto it exactly
    assert p @ (values - mean) ** 2 == pytest.approx(n * (2 * d * d + 6 * d), rel=1e-6)


def _sample_variances(d: int, n: int, runs: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty(runs)
    for start in range(0, runs, 1000):  # 1000 runs of n scores at a time
        m = min(1000, runs - start)
        s = np.einsum("rnd,rnd->rn", rng.standard_normal((m, n, d)), rng.standard_normal((m, n, d)))
        out[start:start + m] = s.var(axis=1, ddof=1)
    return out


def _law_tail(d: int, n: int, t: float, upper: bool) -> float:
    """P(s^2 > t) (or < t) by the exact law: s^2 = (X - d) / (n - 1)."""
    values, p = L.sum_law(d, n)
    x = (n - 1) * t + d
    return float(p[values > x].sum() if upper else p[values < x].sum())


@pytest.mark.parametrize("d", [1, 2])
def test_the_sample_variance_s_tails_are_those_of_its_simulation(d):
    """20,000 seeded sample variances of 1000 scores: the fraction beyond +-2.5 and +3 SEs is the exact law's, within
    4 binomial SEs (a normal law puts 0.6% beyond +2.5; at d = 1 the upper tail holds about twice that)."""
    n, runs = 1000, 20_000
    s2 = _sample_variances(d, n, runs, seed=2026 + d)
    se = variance_se(d, n)
    for z, upper in ((2.5, True), (-2.5, False), (3.0, True)):
        t = d + z * se
        observed = float(np.mean(s2 > t if upper else s2 < t))
        predicted = _law_tail(d, n, t, upper)
        assert abs(observed - predicted) <= 4 * math.sqrt(predicted * (1 - predicted) / runs) + 1e-4, (z, observed,
                                                                                                      predicted)


def test_the_std_ratio_s_tail_is_that_of_its_simulation():
    n, runs = 1000, 20_000
    ratio = np.sqrt(_sample_variances(2, n, runs, seed=7) / _sample_variances(1, n, runs, seed=8))
    expected = math.sqrt(2)
    a, b = L.sum_law(1, n), L.sum_law(2, n)
    for rho in (expected * 1.1, expected * 1.15):
        predicted = L._ratio_survival(a, b, 1, 2, n, rho)
        observed = float(np.mean(ratio > rho))
        assert abs(observed - predicted) <= 4 * math.sqrt(predicted / runs) + 1e-4, (rho, observed, predicted)


def test_k_prime_is_at_least_k_wider_where_the_tail_is_heavy_and_near_k_where_it_is_not():
    k = bonferroni_k(66)
    heavy, light = L.variance_k_prime(1, 1000, k), L.variance_k_prime(4, 100_000, k)
    assert heavy > k + 1.0 and k < light < k + 0.1
    ratio = L.ratio_k_prime(1, 2, 1000, k, math.sqrt(2), math.sqrt(2) * 0.05)
    assert ratio >= k
    assert L.exact_law(4, 1000) == ("variance", 4, 1000) and L.exact_law(5, 1000) is None
    assert L.exact_ratio_law(2, 4, 10) == ("ratio", 2, 4, 10) and L.exact_ratio_law(4, 16, 10) is None
    with pytest.raises(ValueError, match="unknown law"):
        L.k_prime(("mean", 1, 2), k, 0.0, 1.0)
