"""Theory's unscaled over scaled gradient at the scores (claims.gradient_expectation): the conditional norm against a
dense rule over the top score with the Jacobian written out, and the ratio and the law of one trial's term in it
against plain Monte Carlo of the gradient experiment's design (values and an upstream gradient drawn, not z)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.claims import top_score as S
from sdpa_lab.claims.expectation_kinds import expectation
from sdpa_lab.claims.gradient_expectation import _trial_norms, gradient_ratio, jz_norm, ratio_bias, ratio_law


def _jz_norm(s: np.ndarray, z: np.ndarray) -> float:
    """||(diag(p) - p p^T) z|| of p = softmax(s), the Jacobian written out."""
    e = np.exp(s - s.max())
    p = e / e.sum()
    return float(np.linalg.norm((np.diag(p) - np.outer(p, p)) @ z))


def _dense(u: np.ndarray, z: np.ndarray, c: float, panels: int = 200, order: int = 8) -> float:
    """E[||J z|| | all but the top, z] of one draw by a composite Gauss-Legendre rule over the top score's excess y
    on [0, 12 + |m2|], with the law phi(m2 + y) / P(N > m2)."""
    top = int(np.argmax(u))
    m2 = float(np.max(np.delete(u, top)))
    xg, wg = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(0.0, 12.0 + abs(m2), panels + 1)
    h = edges[1] - edges[0]
    total = 0.0
    for y, wy in zip((edges[:-1, None] + (xg + 1.0) / 2.0 * h).ravel(), np.tile(wg * h / 2.0, panels), strict=True):
        s = u.copy()
        s[top] = m2 + y
        law = math.exp(-((m2 + y) ** 2) / 2.0) / math.sqrt(2.0 * math.pi) / (math.erfc(m2 / math.sqrt(2.0)) / 2.0)
        total += wy * law * _jz_norm(c * s, z)
    return total


@pytest.mark.parametrize("T", [2, 8, 40])
def test_the_conditional_gradient_norm_is_the_jacobian_products_average_over_the_top_score(T):
    rng = np.random.default_rng(T)
    u, z = rng.standard_normal((3, T)), rng.standard_normal((3, T))
    scales = np.array([0.3, 2.0, 40.0])  # near uniform, moderate, saturated
    got = S.conditional_gradient_norm(u, z, scales)
    want = np.array([[_dense(u[i], z[i], c) for i in range(3)] for c in scales])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-300)


def _plain_trials(d_k: int, T: int, d_v: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n trials of the experiment's design drawn plainly: q, K, V, g, the Jacobian written out; the unscaled and the
    scaled ||J V g|| (n,) of each."""
    rng = np.random.default_rng(seed)
    a, b = np.empty(n), np.empty(n)
    for i in range(n):
        q, K = rng.standard_normal(d_k), rng.standard_normal((T, d_k))
        Vg = rng.standard_normal((T, d_v)) @ rng.standard_normal(d_v)
        a[i], b[i] = _jz_norm(K @ q, Vg), _jz_norm(K @ q / math.sqrt(d_k), Vg)
    return a, b


def _plain_ratio(d_k: int, T: int, d_v: int, n: int, seed: int) -> tuple[float, float]:
    """Mean ||J V g|| unscaled over scaled of plain trials (_plain_trials), and its delta-method SE."""
    a, b = _plain_trials(d_k, T, d_v, n, seed)
    r = a.mean() / b.mean()
    return r, float(np.std(a - r * b, ddof=1) / (b.mean() * math.sqrt(n)))


@pytest.mark.parametrize("d_k, T, d_v", [(3, 8, 3), (16, 5, 16), (64, 2, 7)])
def test_the_ratio_matches_plain_monte_carlo_of_the_experiments_design(d_k, T, d_v):
    ratio, se = gradient_ratio(d_k, T)
    plain, plain_se = _plain_ratio(d_k, T, d_v, 6000, d_k)
    assert abs(ratio - plain) < 4.5 * math.hypot(se, plain_se), (ratio, plain, se, plain_se)
    assert 0 < se < 0.02 * ratio


def test_one_head_has_ratio_one_exactly_and_the_kind_is_of_the_gradient_alone():
    assert gradient_ratio(1, 8) == (1.0, 0.0)  # at d_k = 1 the scale is 1: the same norms draw by draw
    assert expectation("unscaled_over_scaled", "score_grad_norm", 16, 8) == gradient_ratio(16, 8)
    with pytest.raises(ValueError, match="'unscaled_over_scaled' is of 'score_grad_norm', not of 'entropy'"):
        expectation("unscaled_over_scaled", "entropy", 16, 8)
    with pytest.raises(ValueError, match="d_k >= 1 and T >= 2"):
        gradient_ratio(4, 1)


def test_the_jacobian_product_without_the_matrix_is_the_jacobian_written_out():
    rng = np.random.default_rng(3)
    s, z = rng.standard_normal((4, 6)) * np.array([[0.5], [3.0], [40.0], [1e3]]), rng.standard_normal((4, 6))
    # near one-hot the written-out J p p^T cancels to within rounding of 1 (about 1e-16): agreed to that
    np.testing.assert_allclose(jz_norm(s, z), [_jz_norm(si, zi) for si, zi in zip(s, z, strict=True)],
                               rtol=1e-10, atol=1e-15)


def _first_order(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float]:
    """From trials' unscaled and scaled norms (n,): sd, skewness and excess kurtosis of L = (a - R b) / Eb, and
    beta = -Cov(L, b / Eb), the ratio of means' second-order coefficient, written out."""
    L = (a - a.mean() / b.mean() * b) / b.mean()
    c = L - L.mean()
    sd = np.sqrt(np.mean(c**2))
    return sd, np.mean(c**3) / sd**3, np.mean(c**4) / sd**4 - 3.0, -np.mean(c * (b / b.mean() - 1.0))


@pytest.mark.parametrize("d_k, T", [(16, 5), (4, 8)])
def test_the_law_matches_plain_monte_carlo_of_the_experiments_design(d_k, T):
    """Plain trials of the design (|g| drawn, not cancelled; the Jacobian written out): L's sd within 4.5 of its SEs
    (sd sqrt((kurtosis + 2) / (4 n))), and the ratio's skewness, L's plus 6 beta / sd, within 4.5 of
    sqrt(6 (1 + kurtosis / 4) / n) plus beta's share of it."""
    (sd, _), (skewness, _), (kurtosis, _) = ratio_law(d_k, T)
    n = 6000
    plain_sd, plain_skew, _, beta = _first_order(*_plain_trials(d_k, T, d_k, n, d_k + 1))
    assert abs(plain_sd - sd) < 4.5 * sd * math.sqrt((kurtosis + 2) / (4 * n)), (plain_sd, sd)
    assert abs(plain_skew + 6 * beta / plain_sd - skewness) < 4.5 * math.sqrt(6 * (1 + kurtosis / 4) / n) + 0.1, (
        plain_skew, beta, skewness)


def test_the_ratios_skewness_takes_its_second_order_term():
    """Two keys at d_k = 2: 40,000 ratios of means of 100 trials each (the schema's fewest) are skewed about -0.29,
    as the law says (-0.28: L's own skewness -0.49 plus 6 beta / sd, over sqrt(100)), not as L alone (-0.05): the
    ratio's second-order term is most of its skewness at small heads. Their sd is the law's over sqrt(100) too."""
    (sd, _), (skewness, _), _ = ratio_law(2, 2)
    u, s = _trial_norms(np.random.default_rng(7), 2, 2, 40_000 * 100)
    ratios = u.reshape(-1, 100).mean(axis=1) / s.reshape(-1, 100).mean(axis=1)
    c = ratios - ratios.mean()
    measured = np.mean(c**3) / np.mean(c**2) ** 1.5 * 10  # times sqrt(100): the law's scale
    se = math.sqrt(6 / 40_000) * 10 * 1.5  # the sample skewness's SE, widened for the ratios' kurtosis
    assert abs(measured - skewness) < 4.5 * se, (measured, skewness)
    first_order_only = _first_order(u[:1_000_000], s[:1_000_000])[1]
    assert abs(measured - first_order_only) > 8 * se, (measured, first_order_only)
    assert np.std(ratios) * 10 == pytest.approx(sd, rel=0.02)


def test_the_law_at_one_head_is_a_point_and_the_kinds_are_of_the_gradient():
    assert ratio_law(1, 8) == ((0.0, 0.0),) * 3  # U = S in every trial: the ratio is 1 exactly
    for i, shape in enumerate(("sd", "skewness", "excess_kurtosis")):
        assert expectation(f"unscaled_over_scaled:{shape}", "score_grad_norm", 16, 8) == ratio_law(16, 8)[i]
    # the ratio of means' second-order bias is far below its SE at the schema's fewest trials (100)
    assert abs(ratio_bias(16, 8)) / 100 < 0.05 * ratio_law(16, 8)[0][0] / 10
