"""The finite-d_k expectations B5 and B7 compare the scaled softmax with: quadrature, statistics, and the
expected gap itself against a brute-force simulation of the experiment's design."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.claims import expectations as E


@pytest.mark.parametrize("shape", [0.5, 2.0, 32.0, 2048.0])
def test_gamma_rule_integrates_the_gamma_law(shape):
    x, w = E.gamma_rule(shape)
    assert w.sum() == pytest.approx(1.0) and np.all(x > 0) and np.all(w > 0)
    # E X^j = shape (shape + 1) ... (shape + j - 1), exact for polynomials of degree < 2 * nodes
    for j in range(1, 6):
        assert w @ x**j == pytest.approx(math.prod(shape + i for i in range(j)), rel=1e-9)
    # and a smooth non-polynomial function: E exp(-X) = 2^-shape
    assert w @ np.exp(-x) == pytest.approx(2.0**-shape, rel=1e-6)


def test_softmax_statistics_match_their_definitions():
    s = np.random.default_rng(1).standard_normal((50, 6)) * 3.0
    p = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
    J = p[:, :, None] * np.eye(6) - p[:, :, None] * p[:, None, :]
    np.testing.assert_allclose(E.softmax_statistic("jacobian_norm", s), np.linalg.norm(J, axis=(1, 2)), rtol=1e-10)
    np.testing.assert_allclose(E.softmax_statistic("entropy", s), -np.sum(p * np.log(p), axis=-1), rtol=1e-10)
    with pytest.raises(ValueError, match="unknown statistic 'max'"):
        E.softmax_statistic("max", s)


def _brute_force_gap(name: str, d_k: int, T: int, n: int, seed: int) -> tuple[float, float]:
    """The experiment's own design, simulated: q ~ N(0, I), K ~ N(0, I); scaled K q / sqrt(d_k) vs K q / |q|."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, T, d_k))
    raw = np.einsum("ntd,nd->nt", K, q)
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    diff = E.softmax_statistic(name, raw / math.sqrt(d_k)) - E.softmax_statistic(name, raw / norm)
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(n))


@pytest.mark.parametrize("name, d_k, T", [("jacobian_norm", 1, 2), ("jacobian_norm", 4, 8), ("entropy", 4, 8),
                                          ("jacobian_norm", 2, 64), ("entropy", 16, 3)])
def test_expected_gap_matches_a_brute_force_simulation(name, d_k, T):
    gap, gap_se = E.scaled_minus_unit_variance(name, d_k, T)
    sim, sim_se = _brute_force_gap(name, d_k, T, 100_000, seed=d_k * 1000 + T)
    assert abs(gap) > 5 * math.hypot(gap_se, sim_se)  # the gap is real at these d_k: a 0 here would fail
    assert abs(sim - gap) < 4.5 * math.hypot(gap_se, sim_se), (gap, gap_se, sim, sim_se)


def test_expected_gap_shrinks_like_one_over_d_k():
    gaps = [E.scaled_minus_unit_variance("jacobian_norm", d, 8)[0] for d in (16, 256, 4096)]
    assert gaps[0] == pytest.approx(-0.028 / 16, rel=0.1)  # the review's -0.028 / d_k at T = 8
    assert gaps[1] / gaps[0] == pytest.approx(1 / 16, rel=0.1)
    assert gaps[2] / gaps[1] == pytest.approx(1 / 16, rel=0.1)


def test_sixteen_gauss_nodes_suffice(monkeypatch):
    gap, gap_se = E.scaled_minus_unit_variance("jacobian_norm", 1, 2)  # the roughest law of |q|: chi with 1 dof
    E._gap_draws.cache_clear()
    sixteen = E.gamma_rule
    monkeypatch.setattr(E, "gamma_rule", lambda shape: sixteen(shape, 48))
    try:
        fine, _ = E.scaled_minus_unit_variance("jacobian_norm", 1, 2)  # same draws, 48 nodes
    finally:
        E._gap_draws.cache_clear()
    assert abs(fine - gap) < 0.2 * gap_se


def test_jacobian_norm_is_accurate_when_the_softmax_saturates():
    # near one-hot rows: ||J||_F is about sqrt(2) times the second weight, which 1 - p_max cannot resolve
    s = np.array([[0.0, -30.0, -40.0], [0.0, -700.0, -5.0], [3.0, 3.0, -800.0]])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    J = p[:, :, None] * np.eye(3) - p[:, :, None] * p[:, None, :]
    np.testing.assert_allclose(E.softmax_statistic("jacobian_norm", s), np.linalg.norm(J, axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(E.softmax_statistic("log10_jacobian_norm", s),
                               np.log10(np.linalg.norm(J, axis=(1, 2))), rtol=1e-12)


@pytest.mark.parametrize("name, d_k, T, scaled", [("jacobian_norm", 1, 16, False), ("jacobian_norm", 2, 16, False),
                                                  ("log10_jacobian_norm", 64, 8, False),
                                                  ("jacobian_norm", 3, 5, True)])
def test_mean_statistic_matches_a_brute_force_simulation(name, d_k, T, scaled):
    mean, se = E.mean_statistic(name, d_k, T, scaled)
    rng = np.random.default_rng(d_k + T)
    q = rng.standard_normal((100_000, d_k))
    raw = np.einsum("ntd,nd->nt", rng.standard_normal((100_000, T, d_k)), q)
    sim = E.softmax_statistic(name, raw / math.sqrt(d_k) if scaled else raw)
    assert abs(sim.mean() - mean) < 4.5 * math.hypot(se, sim.std() / math.sqrt(len(sim)))


def test_the_unscaled_jacobian_norm_first_rises_at_many_keys():
    # from near-uniform weights over 16 keys (norm about 1/4) the norm rises as the scores spread, then falls
    rising = [E.mean_statistic("jacobian_norm", d, 16, False)[0] for d in (1, 2)]
    falling = [E.mean_statistic("jacobian_norm", d, 16, False)[0] for d in (64, 256)]
    assert rising[1] > rising[0] and falling[1] < falling[0]


def _entropy_by_log_sum_exp(s):
    """-sum p log p with log p = s - logsumexp(s): no exp of a large score, no log of an underflowed weight."""
    lse = s.max(axis=-1, keepdims=True) + np.log(np.exp(s - s.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True))
    logp = s - lse
    return -np.sum(np.exp(logp) * logp, axis=-1)


@pytest.mark.parametrize("shift", [0.0, 700.0, -700.0, 5000.0])
def test_statistics_at_large_and_saturating_scores(shift):
    # the softmax does not depend on a common shift of the scores; large scores neither overflow nor divide by 0,
    # and weights that underflowed to exactly 0 contribute exactly 0 (rows 2-4 are one-hot or nearly)
    s = np.array([[0.3, -1.2, 2.0, 0.0], [0.0, -800.0, -900.0, -5.0], [0.0, -800.0, -900.0, -1000.0],
                  [400.0, -400.0, 0.0, 1.0], [3.0, 3.0, -800.0, -800.0]])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    J = p[:, :, None] * np.eye(4) - p[:, :, None] * p[:, None, :]
    with np.errstate(divide="raise", invalid="raise", over="raise"):
        entropy = E.softmax_statistic("entropy", s + shift)
        norm = E.softmax_statistic("jacobian_norm", s + shift)
    np.testing.assert_allclose(entropy, _entropy_by_log_sum_exp(s), rtol=1e-9, atol=1e-300)
    assert entropy[2] == 0.0 and entropy[4] == pytest.approx(math.log(2), rel=1e-12)  # one-hot; two tied of four
    np.testing.assert_allclose(norm, np.linalg.norm(J, axis=(1, 2)), rtol=1e-9)


def test_pair_mean_averages_each_antithetic_pair_first():
    # values of (u_1..u_n, -u_1..-u_n): the pair means (v_i + v_{n+i}) / 2 are the independent draws
    values = np.array([1.0, 4.0, 2.0, 8.0, 3.0, 0.0, 6.0, 2.0])  # pairs (1, 3), (4, 0), (2, 6), (8, 2)
    pair = np.array([2.0, 2.0, 4.0, 5.0])
    mean, se = E._pair_mean(values)
    assert mean == pytest.approx(pair.mean(), rel=1e-15)
    assert se == pytest.approx(math.sqrt(np.sum((pair - 3.25) ** 2) / 3) / 2, rel=1e-12)  # sample SD (n - 1) / sqrt n


@pytest.mark.parametrize("T", [2, 8, 100, 128])
def test_draws_are_antithetic_pairs_filling_the_element_budget(T):
    u = E._draws("entropy", 4, T, 0)
    pairs = len(u) // 2
    assert u.shape == (2 * pairs, T) and np.array_equal(u[pairs:], -u[:pairs])
    # as many pairs as DRAW_ELEMENTS allows (the bound on memory and time), short of it by less than one pair
    assert E.DRAW_ELEMENTS - 2 * T < u.size <= E.DRAW_ELEMENTS
    assert np.array_equal(u, E._draws("entropy", 4, T, 0)) and not np.array_equal(u, E._draws("entropy", 4, T, 1))


def _quadrature_law(d_k: int) -> np.ndarray:
    """sd, skewness and excess kurtosis of the scaled Jacobian norm at T = 2 by a product Gauss rule, no draws:
    there ||J||_F = 2 p (1 - p) with p = sigmoid(x), x = r v, v = u1 - u2 ~ N(0, 2) and r^2 = 2 X / d_k,
    X ~ Gamma(d_k / 2) (Gauss-Laguerre on X, Gauss-Hermite on v)."""
    gx, gw = E.gamma_rule(d_k / 2.0, 48)
    hv, hw = np.polynomial.hermite_e.hermegauss(200)  # nodes of N(0, 1)
    hw = hw / hw.sum()
    x = np.sqrt(2.0 * gx / d_k)[:, None] * (math.sqrt(2.0) * hv)[None, :]
    p = 0.5 * (1.0 + np.tanh(x / 2.0))  # sigmoid(x), without overflow at large |x|
    h = 2.0 * p * (1.0 - p)
    w = gw[:, None] * hw[None, :]
    m = [float(np.sum(w * h**k)) for k in range(1, 5)]
    var = m[1] - m[0] ** 2
    c3 = m[2] - 3 * m[0] * m[1] + 2 * m[0] ** 3
    c4 = m[3] - 4 * m[0] * m[2] + 6 * m[0] ** 2 * m[1] - 3 * m[0] ** 4
    return np.array([math.sqrt(var), c3 / var**1.5, c4 / var**2 - 3.0])


@pytest.mark.parametrize("d_k", [1, 4, 64])
def test_law_of_one_trial_matches_an_exact_quadrature(d_k):
    # the law's shape sets B5's and B7's tolerances (theory's sd, and the skewness and kurtosis for Cornish-Fisher)
    got = E.law("scaled", "jacobian_norm", d_k, 2)
    exact = _quadrature_law(d_k)
    for (value, se), want in zip(got, exact, strict=True):
        assert 0 < se and abs(value - want) < 5 * se + 1e-6, (got, exact)
    assert exact[1] < -0.5  # bounded by 1/2 above, with a long tail toward 0: clearly skewed, the test can fail


def test_the_scaled_law_comes_from_the_draws_of_the_scaled_mean():
    """The scaled mean is the unit-variance mean plus the gap on draws u (E._draws(..., 0)); its law's shapes are
    those of the scaled statistic at the Gauss rule's nodes on those same u, recomputed here with plain moments."""
    name, d_k, T = "jacobian_norm", 16, 8
    x, w = E.gamma_rule(d_k / 2.0)
    u = E._draws(name, d_k, T, 0)
    h = np.stack([E.softmax_statistic(name, math.sqrt(2.0 * xj / d_k) * u) for xj in x])  # (nodes, draws)
    m1, m2, m3, m4 = (float(np.mean(w @ h**k)) for k in range(1, 5))
    var = m2 - m1**2
    want = [math.sqrt(var), (m3 - 3 * m1 * m2 + 2 * m1**3) / var**1.5,
            (m4 - 4 * m1 * m3 + 6 * m1**2 * m2 - 3 * m1**4) / var**2 - 3.0]
    got = [value for value, _ in E.law("scaled", name, d_k, T)]
    assert got == pytest.approx(want, rel=1e-9)
    # the gap's mean comes from those draws too: E_r h - h(u), averaged
    assert E.scaled_minus_unit_variance(name, d_k, T)[0] == pytest.approx(
        m1 - float(np.mean(E.softmax_statistic(name, u))), rel=1e-9)


def test_law_of_a_difference_matches_a_simulation():
    # the scaled minus unit-variance statistic of one trial, simulated as the experiment draws it
    rng = np.random.default_rng(7)
    n, d_k, T = 200_000, 2, 8
    q, K = rng.standard_normal((n, d_k)), rng.standard_normal((n, T, d_k))
    raw = np.einsum("ntd,nd->nt", K, q)
    diff = E.softmax_statistic("entropy", raw / math.sqrt(d_k)) - E.softmax_statistic(
        "entropy", raw / np.linalg.norm(q, axis=-1, keepdims=True))
    c = diff - diff.mean()
    sim = [c.std(), np.mean(c**3) / c.std() ** 3, np.mean(c**4) / c.std() ** 4 - 3]
    got = E.law("scaled_minus_unit_variance", "entropy", d_k, T)
    assert got[0][0] == pytest.approx(sim[0], rel=0.02)
    assert got[1][0] == pytest.approx(sim[1], abs=0.1)
    assert got[2][0] == pytest.approx(sim[2], abs=0.1 * max(1.0, abs(sim[2])))


def test_expectation_gives_a_law_by_its_kind():
    assert E.expectation("scaled:sd", "entropy", 4, 8) == E.law("scaled", "entropy", 4, 8)[0]
    assert E.expectation("scaled_minus_unit_variance:excess_kurtosis", "entropy", 4, 8) == \
        E.law("scaled_minus_unit_variance", "entropy", 4, 8)[2]
    assert E.expectation("unscaled:sd", "entropy", 4, 8) == E.law("unscaled", "entropy", 4, 8)[0]
    with pytest.raises(ValueError, match="unknown expectation 'unscaled:median'"):
        E.expectation("unscaled:median", "entropy", 4, 8)


@pytest.mark.parametrize("d_k, T", [(4, 8), (256, 8), (16, 2)])
def test_law_of_the_unscaled_entropy_matches_a_simulation(d_k, T):
    # B5's fall checks take their SE from it: the unscaled softmax's entropy of one trial, simulated as drawn
    rng = np.random.default_rng(11)
    n = 100_000
    q, K = rng.standard_normal((n, d_k)), rng.standard_normal((n, T, d_k))
    h = E.softmax_statistic("entropy", np.einsum("ntd,nd->nt", K, q))
    c = h - h.mean()
    sim = [c.std(), np.mean(c**3) / c.std() ** 3, np.mean(c**4) / c.std() ** 4 - 3]
    got = E.law("unscaled", "entropy", d_k, T)
    assert got[0][0] == pytest.approx(sim[0], rel=0.03)
    assert got[1][0] == pytest.approx(sim[1], abs=0.1 * max(1.0, abs(sim[1])))
    assert got[2][0] == pytest.approx(sim[2], abs=0.2 * max(1.0, abs(sim[2])))
