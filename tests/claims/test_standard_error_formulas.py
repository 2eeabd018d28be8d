"""The standard errors' shape terms against independent derivations, fast enough for every mutant
(claims/test_standard_errors.py checks the SEs against the spread over seeds: slow, it runs experiments)."""

from __future__ import annotations

import math

import pytest

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims.registry import CLAIMS as REGISTRY
from sdpa_lab.claims.standard_errors import log_std_skewness, variance_excess_kurtosis, variance_skewness
from sdpa_lab.numbers import number
from sdpa_lab.results import Results

from tests.claims.tables import learning_table, variance_skewness_d4


def score_moments(d, orders=(2, 4, 6, 8)):
    """E S^m of S = q.k, a sum of d products of two standard normals: each product has the cumulant generating
    function -1/2 log(1 - t^2) = sum_j t^(2j) / (2j), so cumulants kappa_(2j) = d (2j)! / (2j), odd ones 0;
    moments from cumulants by m_n = sum_k C(n-1, k-1) kappa_k m_(n-k)."""
    kappa = [0.0] + [d * math.factorial(n) / n if n % 2 == 0 else 0.0 for n in range(1, 9)]
    m = [1.0]
    for n in range(1, 9):
        m.append(sum(math.comb(n - 1, k - 1) * kappa[k] * m[n - k] for k in range(1, n + 1)))
    return {o: m[o] for o in orders}


@pytest.mark.parametrize("d", [1, 2, 4, 64, 1024])
@pytest.mark.parametrize("n", [1, 1000])
def test_sample_variance_skewness_and_kurtosis_from_the_score_cumulants(d, n):

    m = score_moments(d)
    assert m[2] == d and m[4] == 3 * d * d + 6 * d  # the moments var_se uses
    mu = m[2]  # Y = S^2: central moments from the raw moments of Y (E Y^j = E S^(2j))
    var = m[4] - mu**2
    c3 = m[6] - 3 * mu * m[4] + 2 * mu**3
    c4 = m[8] - 4 * mu * m[6] + 6 * mu**2 * m[4] - 3 * mu**4
    assert variance_skewness(d, n) == pytest.approx(c3 / var**1.5 / math.sqrt(n), rel=1e-12)
    assert variance_excess_kurtosis(d, n) == pytest.approx((c4 / var**2 - 3) / n, rel=1e-12)
    if d == 4:
        assert variance_skewness(d, n) == pytest.approx(variance_skewness_d4(n), rel=1e-12)


def test_log_std_skewness_is_the_delta_method_one():
    from sdpa_lab.claims.standard_errors import variance_se

    for d, n in ((4, 1000), (64, 200), (1024, 5)):
        # log s^2 = log(d (1 + e)), e with CV c: skewness of log(1 + e) ~ skew(e) - 3 c to first order
        assert log_std_skewness(d, n) == pytest.approx(variance_skewness(d, n) - 3 * variance_se(d, n) / d,
                                                       rel=1e-12)


def test_log_std_kurtosis_tends_to_a_log_chi_squares():
    from sdpa_lab.claims.standard_errors import log_std_excess_kurtosis

    # at large d a score is normal and s^2 a scaled chi-square: the log of a gamma of shape n / 2 has excess
    # kurtosis trigamma''(n/2) / trigamma(n/2)^2, which is 4 / n to order 1/n
    for n in (100, 1000, 10**6):
        assert log_std_excess_kurtosis(1e9, n) == pytest.approx(4.0 / n, rel=1e-6)
    # a head of 1: the score's long tail (its fourth cumulant 6d) makes it larger; it still shrinks as 1/n
    assert log_std_excess_kurtosis(1, 1000) > 4.0 / 1000
    assert log_std_excess_kurtosis(1, 10_000) == pytest.approx(log_std_excess_kurtosis(1, 1000) / 10, rel=1e-12)


def test_exp_shape_matches_a_lognormal():
    from sdpa_lab.claims.standard_errors import exp_shape

    # exp of a normal of sd s: skewness (e^{s^2} + 2) sqrt(e^{s^2} - 1), excess kurtosis
    # e^{4s^2} + 2e^{3s^2} + 3e^{2s^2} - 6; to first order in s, 3s and 16 s^2
    for s in (0.001, 0.01, 0.03):
        w = math.exp(s * s)
        skew, kurt = exp_shape(s, 0.0, 0.0)
        assert skew == pytest.approx((w + 2) * math.sqrt(w - 1), rel=3 * s * s)
        assert kurt == pytest.approx(w**4 + 2 * w**3 + 3 * w**2 - 6, rel=10 * s * s)


def test_cornish_fisher_is_never_inside_k():
    from sdpa_lab.claims.standard_errors import cornish_fisher

    # at k = 5, skewness 1: the expansion gives 5 + 4 - 6.25 = 2.75 on the long side and 5 - 4 - 6.25 on the
    # other; both inside k, where a skewed statistic's tail is not
    assert cornish_fisher(5.0, 1.0) == 5.0 and cornish_fisher(5.0, -1.0) == 5.0
    assert cornish_fisher(5.0, 0.3) > 5.0  # a moderate skewness still widens it


def test_cornish_fisher_widens_the_long_side():
    from sdpa_lab.claims.standard_errors import cornish_fisher

    assert cornish_fisher(3.0) == 3.0
    # by hand, k = 3, skewness 0.6, excess kurtosis 0.3: z + (z^2 - 1) S / 6 + (z^3 - 3z) K / 24 - (2z^3 - 5z) S^2 / 36
    # at z = 3: 3 + 0.8 + 0.225 - 0.39 = 3.635; at z = -3: -3 + 0.8 - 0.225 + 0.39 = -2.035
    assert cornish_fisher(3.0, 0.6, 0.3) == pytest.approx(3.635, rel=1e-12)
    assert cornish_fisher(3.0, -0.6, 0.3) == pytest.approx(3.635, rel=1e-12)  # the long side is the lower one
    assert cornish_fisher(3.0, 0.0, 0.3) == pytest.approx(3.0 + 18 * 0.3 / 24, rel=1e-12)
    assert cornish_fisher(2.0, 0.3, 0.0) == pytest.approx(2.0 + 3 * 0.05 - 6 * 0.0025, rel=1e-12)  # 2.135


def test_paired_ratio_se():
    from sdpa_lab.claims.standard_errors import paired_ratio_se

    # b = 2a trial by trial (sd_b = 2 sd_a, sd(b - a) = sd_a): the ratio never moves
    assert paired_ratio_se(2.0, 4.0, 1.0, 2.0, 1.0, 100) == pytest.approx(0.0, abs=1e-15)
    # independent a and b (Var(b - a) = Var a + Var b): Var(a/b) = (a/b)^2 (Var a / a^2 + Var b / b^2) / n
    assert paired_ratio_se(2.0, 4.0, 1.0, 2.0, math.sqrt(5.0), 100) == pytest.approx(0.5 * math.sqrt(0.5 / 100),
                                                                                   rel=1e-12)
    assert paired_ratio_se(-2.0, 4.0, 1.0, 2.0, math.sqrt(5.0), 100) == pytest.approx(0.5 * math.sqrt(0.5 / 100),
                                                                                    rel=1e-12)
    # a covariance of 0.4 (Var(b - a) = 1 + 4 - 0.8): rel = 1/4 + 4/16 - 2 * 0.4 / 8 = 0.4
    assert paired_ratio_se(2.0, 4.0, 1.0, 2.0, math.sqrt(4.2), 25) == pytest.approx(0.5 * math.sqrt(0.4 / 25),
                                                                                  rel=1e-12)
    # inconsistent spreads (a covariance above what the two SDs allow) give 0, not nan
    assert paired_ratio_se(2.0, 4.0, 1.0, 2.0, 0.0, 100) == 0.0


def test_a_tolerance_past_the_statistics_reach_says_so():
    success = {(4, "none"): (0.2, 0.9, 0.5), (4, "inv_sqrt_dk"): (0.3, 0.8, 0.7),
               (256, "none"): (0.05, 0.1, 0.3), (256, "inv_sqrt_dk"): (0.5, 0.9, 0.6)}
    b10 = [c for c in REGISTRY if c.id == "B10"]
    for runs in (4, 400):
        table = learning_table(success, dict.fromkeys(success, 1), runs=runs, only=(runs // 2, runs // 2))
        *_, slope, _ = D.decide(Results("mem", {"learning.csv": table}), b10).checks  # the paired gap's trend
        reach = 2 / math.log(64)  # two d_k: the slope's largest value, gaps from -1 to 1
        assert slope.reach == pytest.approx(reach, rel=1e-12)
        why = (f"cannot be decided at this sample size: the tolerance {number(slope.tolerance, digits=3)} is at least "
               f"the largest deviation the statistic can show ({number(reach, digits=3)}); more samples needed")
        if runs == 4:  # half the runs discordant each way: paired SE 1/2 per d_k, the slope's 0.17; k of them pass 0.48
            assert slope.tolerance >= reach and slope.note == why
        else:
            assert slope.tolerance < reach and slope.note == ""
