"""Theory's unscaled over scaled gradient at the scores (claims.gradient_expectation): the conditional norm against a
dense rule over the top score with the Jacobian written out, and the ratio against plain Monte Carlo of the gradient
experiment's design (values and an upstream gradient drawn, not z)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.claims import top_score as S
from sdpa_lab.claims.gradient_expectation import gradient_ratio


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


def _plain_ratio(d_k: int, T: int, d_v: int, n: int, seed: int) -> tuple[float, float]:
    """Mean ||J V g|| unscaled over scaled, the experiment's design drawn plainly: q, K, V, g, the Jacobian written
    out; and its delta-method SE."""
    rng = np.random.default_rng(seed)
    a, b = np.empty(n), np.empty(n)
    for i in range(n):
        q, K = rng.standard_normal(d_k), rng.standard_normal((T, d_k))
        Vg = rng.standard_normal((T, d_v)) @ rng.standard_normal(d_v)
        a[i], b[i] = _jz_norm(K @ q, Vg), _jz_norm(K @ q / math.sqrt(d_k), Vg)
    r = a.mean() / b.mean()
    return r, float(np.std(a - r * b, ddof=1) / (b.mean() * math.sqrt(n)))


@pytest.mark.parametrize("d_k, T, d_v", [(3, 8, 3), (16, 5, 16), (64, 2, 7)])
def test_the_ratio_matches_plain_monte_carlo_of_the_experiments_design(d_k, T, d_v):
    ratio, se = gradient_ratio(d_k, T)
    plain, plain_se = _plain_ratio(d_k, T, d_v, 6000, d_k)
    assert abs(ratio - plain) < 4.5 * math.hypot(se, plain_se), (ratio, plain, se, plain_se)
    assert 0 < se < 0.02 * ratio


def test_one_head_has_ratio_one_exactly():
    assert gradient_ratio(1, 8) == (1.0, 0.0)  # at d_k = 1 the scale is 1: the same norms draw by draw
    with pytest.raises(ValueError, match="d_k >= 1 and T >= 2"):
        gradient_ratio(4, 1)
