"""The unscaled Jacobian norm's expectation averaged over its top score (claims.top_score): the algebra against the
softmax itself, the Laguerre rule against a dense rule, and the expectation against plain Monte Carlo of the
experiment's design and against the closed form at T = 2."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.claims import expectations as E
from sdpa_lab.claims import top_score as S


@given(st.integers(2, 40), st.floats(0.01, 400.0), st.floats(0.0, 30.0), st.integers(0, 2**32 - 1))
def test_norm_from_the_others_sums_is_the_softmax_jacobian_norm(T, c, excess, seed):
    # scores c u with the top at m2 + y: the norm from A, B2, B3 equals ||diag(p) - p p^T||_F of the softmax itself
    rest = np.sort(np.random.default_rng(seed).standard_normal(T - 1))
    m2, y = rest[-1], excess / c
    e = np.exp(np.maximum(c * (rest - m2), S.FLOOR))
    got = S._norm(np.exp(-c * y), e.sum(), (e * e).sum(), (e**3).sum())
    assert got == pytest.approx(_exact_norm(c * np.append(rest, m2 + y)), rel=1e-9, abs=1e-300)


def _exact_norm(s: np.ndarray) -> float:
    """||diag(p) - p p^T||_F^2 = sum_i p_i^2 ((1 - p_i)^2 + sum_{j != i} p_j^2) of p = softmax(s), each 1 - p_i summed
    from the other terms (a subtraction loses 1 - p_i where p_i is within rounding of 1)."""
    e = np.exp(s - s.max())
    p = e / e.sum()
    off = ~np.eye(len(p), dtype=bool)
    rest = np.array([p[row].sum() for row in off])
    others = np.array([(p[row] ** 2).sum() for row in off])
    return float(np.sqrt(np.sum(p**2 * (rest**2 + others))))


def _dense(u: np.ndarray, c: float, panels: int = 100, order: int = 12) -> np.ndarray:
    """E[norm | all but the top] per draw by a composite Gauss-Legendre rule over the top score's excess y on
    [0, Y], the norm from the softmax itself (expectations.softmax_statistic) and the law phi(m2 + y) / P(N > m2)."""
    xg, wg = np.polynomial.legendre.leggauss(order)
    out = []
    for row in u:
        rest = np.sort(row)[:-1]
        m2 = rest[-1]
        Y = min((math.log(len(row)) + 50.0) / c, 12.0 + max(-m2, 0.0))  # past it both the norm and the law are 0
        edges = np.linspace(0.0, Y, panels + 1)
        h = edges[1] - edges[0]
        y = (edges[:-1, None] + (xg + 1.0) / 2.0 * h).ravel()
        w = np.tile(wg * h / 2.0, panels)
        scores = c * np.concatenate([np.broadcast_to(rest, (len(y), len(rest))), (m2 + y)[:, None]], axis=1)
        law = np.exp(-((m2 + y) ** 2) / 2.0) / math.sqrt(2.0 * math.pi) / (math.erfc(m2 / math.sqrt(2.0)) / 2.0)
        out.append(np.sum(w * law * E.softmax_statistic("jacobian_norm", scores)))
    return np.array(out)


@pytest.mark.parametrize("T", [2, 3, 8, 64, 1024])
def test_the_top_scores_integral_matches_a_dense_rule(T):
    u = np.random.default_rng(T).standard_normal((4, T))
    scales = np.array([0.02, 0.3, 1.0, 3.0, 10.0, 60.0, 360.0])  # |q| from d_k = 1's smallest node to d_k ~ 131,072
    got = S.conditional_norm_moments(u, scales, moments=1)[0]
    for c, row in zip(scales, got, strict=True):
        np.testing.assert_allclose(row, _dense(u, c), rtol=0, atol=2e-6)


@pytest.mark.parametrize("d_k, T", [(1, 2), (4, 8), (16, 8), (2, 64)])
def test_the_expectation_matches_plain_monte_carlo_of_the_experiments_design(d_k, T):
    # q ~ N(0, I_d), K ~ N(0, I): the plain mean of the unscaled Jacobian norm over many independent trials
    rng = np.random.default_rng(d_k * 1000 + T)
    values = []
    for _ in range(10):
        q = rng.standard_normal((20_000, d_k))
        K = rng.standard_normal((20_000, T, d_k))
        values.append(E.softmax_statistic("jacobian_norm", np.einsum("ntd,nd->nt", K, q)))
    values = np.concatenate(values)
    sim, sim_se = values.mean(), values.std(ddof=1) / math.sqrt(len(values))
    mean, se = E.expectation("unscaled", "jacobian_norm", d_k, T)
    assert abs(sim - mean) < 4.5 * math.hypot(se, sim_se), (mean, se, sim, sim_se)


@pytest.mark.parametrize("d_k", [1, 64, 65536])
def test_the_expectation_at_two_keys_matches_its_closed_form(d_k):
    # T = 2: ||J||_F = 2 p (1 - p) = 1 / (2 cosh^2(s / 2)) of the score difference s = |q| v, v ~ N(0, 2); its mean
    # over v on a dense grid, then over |q|^2 ~ chi^2_{d_k} by the Gauss rule (tested on its own in
    # test_expectations.py)
    x, w = E.gamma_rule(d_k / 2.0)
    v = np.linspace(-12.0, 12.0, 2_000_001)
    density = np.exp(-v * v / 4.0) / math.sqrt(4.0 * math.pi) * (v[1] - v[0])
    def norm(s):  # 1 / (2 cosh^2(s / 2)), without overflow at wide heads
        e = np.exp(-np.abs(s))
        return 2.0 * e / (1.0 + e) ** 2

    exact = sum(wj * np.sum(density * norm(math.sqrt(2.0 * xj) * v)) for xj, wj in zip(x, w, strict=True))
    mean, se = E.expectation("unscaled", "jacobian_norm", d_k, 2)
    assert abs(mean - exact) < 4.5 * se + 1e-6, (mean, se, exact)


def test_averaging_over_the_top_score_cuts_the_monte_carlo_error_where_the_softmax_saturates():
    # T = 1024, d_k = 4096 (a user's `gradient: {T: 1024}` at the default widest head): the plain average of the same
    # draws has a Monte Carlo SE tens of times larger
    d_k, T = 4096, 1024
    x, w = E.gamma_rule(d_k / 2.0)
    u = E._draws("jacobian_norm", d_k, T, 1)
    plain = E._pair_means(sum(wj * E.softmax_statistic("jacobian_norm", math.sqrt(2.0 * xj) * u)
                              for xj, wj in zip(x, w, strict=True)))
    _, plain_se = E._mean_se(plain)
    _, se = E.expectation("unscaled", "jacobian_norm", d_k, T)
    assert se < plain_se / 20, (se, plain_se)


def test_the_law_of_one_trial_is_that_of_the_plain_statistic():
    # the shapes (sd, skewness, kurtosis) from the conditional moments E[norm^k | all but the top]: against the
    # sample's of plain trials (T = 8, d_k = 16, |q|^2 ~ chi^2_16 drawn), in 8 groups whose spread gives their SE
    rng = np.random.default_rng(7)
    groups = []
    for _ in range(8):
        q = np.sqrt(rng.chisquare(16, 100_000))[:, None]
        centred = E.softmax_statistic("jacobian_norm", q * rng.standard_normal((100_000, 8)))
        centred -= centred.mean()
        sd = centred.std()
        groups.append((sd, np.mean(centred**3) / sd**3, np.mean(centred**4) / sd**4 - 3.0))
    sample, sample_se = np.mean(groups, axis=0), np.std(groups, axis=0, ddof=1) / math.sqrt(8)
    for (value, se), s, s_se in zip(E.law("unscaled", "jacobian_norm", 16, 8), sample, sample_se, strict=True):
        assert abs(value - s) < 5 * math.hypot(se, s_se), (value, se, s, s_se)
