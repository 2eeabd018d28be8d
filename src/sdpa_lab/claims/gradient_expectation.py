"""Theory's ratio of the gradient an unscaled and a scaled softmax pass to their scores (B7's gradient at the scores),
and the law of one trial's term in the measured ratio of means.

The gradient experiment's trial draws scores K q, values V (T, d_v) and an upstream gradient g ~ N(0, I_dv), and
measures ||J V g|| under each scale, J = diag(p) - p p^T. Given g, V g ~ N(0, |g|^2 I_T), so ||J V g|| = |g| ||J z||
with z ~ N(0, I_T) independent of the scores and of |g|, the same z and |g| under both scales of a trial: the ratio
of the two mean norms is E ||J_unscaled z|| / E ||J_scaled z||, whatever d_v (E |g| cancels). Each is averaged over
|q| by the Gauss rule of claims.expectations (K q = |q| u, u ~ N(0, I_T)), and each seeded draw of (u, z) exactly
over its top score (claims.top_score: where the unscaled softmax saturates, a plain average is the noise of a few
near-ties). Both means come from the same draws, so the ratio's Monte Carlo SE is the delta method's on the draws'
paired values. Written with its own algebra, independent of the attention code the experiments run.

The run's ratio of means over n trials is, to first order, R + mean(L) with R = EU / ES and, per trial,
L = U / ES - EU S / ES^2 (U, S: the unscaled and the scaled ||J V g|| of one trial, with |g| and their covariance in
it): the law of one L (ratio_law: its sd, skewness, excess kurtosis, by plain Monte Carlo of the joint) gives the
ratio's SE and shape, the skewness with the second-order term's share (_ratio_shape). Not the run's sample sds: at
wide heads a few trials of the heavy-tailed saturated gradient rarely hold a near-tie, and their sd is then far below
theory's.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from sdpa_lab.claims.expectations import DRAW_ELEMENTS, SHAPE_GROUPS, STATISTICS, _shape, gamma_rule
from sdpa_lab.claims.top_score import conditional_gradient_norm
from sdpa_lab.experiments.sizes import D_V_MAX

# Draws of (u, z): about this many score entries (draws * T), from MIN_DRAWS to MAX_DRAWS draws (few keys: each
# draw's ratio terms vary little, and the conditional norms cost per draw, not per key; many keys: at 1024 of them
# fewer than MIN_DRAWS leave theory's sign of the ratio's fall from d_k = 16 to 64 within 4 of its Monte Carlo SEs).
DRAW_ENTRIES = 1 << 16
MIN_DRAWS, MAX_DRAWS = 1024, 8192

# Draws per block the conditional norms are computed on at once: bounds the (draws, Laguerre nodes) arrays.
BLOCK_DRAWS = 4096

# Laguerre nodes over the top score (claims.top_score): 16 give the ratio to within 3e-8 of 32 and 64 at T 2 to 64
# and d_k 4 to 4096 on the same draws, far below its Monte Carlo SE (about 1e-3 of it), at half the cost.
RATIO_TOP_NODES = 16

# Plain draws of one trial for the law of L: about LAW_ENTRIES score entries (draws * T), from LAW_MIN to LAW_MAX
# draws. At a saturated unscaled softmax L is near 0 but on the trials whose top two scores nearly tie (about 1 in
# 10^3 at d_k 65,536 over 2 keys, excess kurtosis about 730): its sd's relative Monte Carlo error,
# sqrt((kurtosis + 2) / (4 draws)), is then 2.6% at LAW_MAX draws, which few keys make cheap; 1% or less from 8 keys
# up (kurtosis 66 at d_k 4096 over 8, 26 at 3400 over 1024).
LAW_ENTRIES = 1 << 21
LAW_MIN, LAW_MAX = 1 << 16, 1 << 20


def _draws(d_k: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded scores u and upstream gradients z, each (draws, T) ~ N(0, I): a stream of their own (key [d_k, T, the
    statistic's place after claims.expectations.STATISTICS, 5])."""
    rng = np.random.default_rng([d_k, T, len(STATISTICS), 5])
    draws = min(MAX_DRAWS, max(MIN_DRAWS, DRAW_ENTRIES // T))
    return rng.standard_normal((draws, T)), rng.standard_normal((draws, T))


@lru_cache(maxsize=64)
def gradient_ratio(d_k: int, T: int) -> tuple[float, float]:
    """E ||J z|| of the unscaled softmax over that of the scaled one (scores K q and K q / sqrt(d_k)) at head size
    d_k over T keys, and its Monte Carlo SE (the delta method on the per-draw pairs)."""
    if d_k < 1 or T < 2:
        raise ValueError(f"the gradient ratio needs d_k >= 1 and T >= 2 (got d_k={d_k}, T={T})")
    x, w = gamma_rule(d_k / 2.0)
    q_norm = np.sqrt(2.0 * x)  # (nodes,) values of |q|
    u, z = _draws(d_k, T)
    pairs = []  # per draw: the unscaled and the scaled norm, each averaged over |q|
    for start in range(0, len(u), BLOCK_DRAWS):
        block = slice(start, start + BLOCK_DRAWS)
        norms = conditional_gradient_norm(u[block], z[block], np.concatenate([q_norm, q_norm / np.sqrt(d_k)]),
                                          RATIO_TOP_NODES)
        pairs.append([w @ norms[: len(w)], w @ norms[len(w):]])
    unscaled, scaled = (np.concatenate(side) for side in zip(*pairs, strict=True))
    ratio = float(unscaled.mean() / scaled.mean())
    se = float(np.std(unscaled - ratio * scaled, ddof=1) / (scaled.mean() * np.sqrt(len(u))))
    return ratio, se


def jz_norm(s: np.ndarray, z: np.ndarray) -> np.ndarray:
    """||(diag(p) - p p^T) z|| per row of scores s and upstream gradients z (m, T), p = softmax(s): (m,). No (T, T)
    matrix: J z = p * (d - p.d) with d = z - z_top (the same vector less a constant, which J maps to 0), so that
    where p is near one-hot no term is the small difference of two near-equal ones."""
    top = np.argmax(s, axis=-1)[:, None]
    e = np.exp(s - np.take_along_axis(s, top, axis=-1))
    p = e / e.sum(axis=-1, keepdims=True)
    d = z - np.take_along_axis(z, top, axis=-1)
    return np.linalg.norm(p * (d - np.sum(p * d, axis=-1, keepdims=True)), axis=-1)


def _trial_norms(rng: np.random.Generator, d_k: int, T: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n plain draws of one trial of the gradient experiment: the unscaled and the scaled ||J V g|| = |g| ||J z||
    (n,), on the same scores K q = |q| u (|q|^2 ~ chi2_dk), z ~ N(0, I_T) and |g|^2 ~ chi2_dv, d_v = min(d_k,
    D_V_MAX)."""
    s = np.sqrt(rng.chisquare(d_k, (n, 1))) * rng.standard_normal((n, T))  # (n, T) unscaled scores
    z = rng.standard_normal((n, T))
    g = np.sqrt(rng.chisquare(min(d_k, D_V_MAX), n))  # (n,) |g|
    return g * jz_norm(s, z), g * jz_norm(s / np.sqrt(d_k), z)


def _ratio_shape(u: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, float]:
    """From plain draws of one trial's U and S (n,): the sd, skewness and excess kurtosis of the ratio of n' trials'
    means, each times its power of sqrt(n') (3,), and its second-order bias times n', beta = -Cov(L, S / ES).

    To first order the ratio is R + mean(L), L = (U - R S) / ES; its second-order term, -mean(L) mean(S / ES - 1),
    moves its mean by beta / n' (negligible: under 2% of its SE at 100 trials at every config tried) but its third
    cumulant by 6 beta Var(L) / n'^2, as much as L's own at small heads (d_k 2 over 2 keys: L's skewness -0.49, the
    ratio's -0.49 + 6 beta / sd = -2.8, against -2.6 measured over 20,000 ratios of 100 trials). Its kurtosis is
    L's (first order: off by about 0.03 / n' at small heads)."""
    ratio, es = u.mean() / s.mean(), s.mean()
    L = (u - ratio * s) / es
    beta = -float(np.mean((L - L.mean()) * (s / es - 1.0)))
    sd, skewness, kurtosis = _shape(np.array([np.mean(L**m) for m in range(1, 5)]))
    return np.array([sd, skewness + 6.0 * beta / sd, kurtosis]), beta


@lru_cache(maxsize=64)
def _ratio_terms(d_k: int, T: int) -> tuple[tuple[tuple[float, float], ...], float]:
    """_ratio_shape of plain draws of one trial, each shape with its Monte Carlo SE (the spread of SHAPE_GROUPS groups
    of the draws, as expectations.law's), and beta. Only these numbers are kept, not the draws."""
    rng = np.random.default_rng([d_k, T, len(STATISTICS), 6])
    draws = min(LAW_MAX, max(LAW_MIN, LAW_ENTRIES // T))
    per_block = max(1, DRAW_ELEMENTS // T)
    u, s = (np.concatenate(x) for x in zip(*(_trial_norms(rng, d_k, T, min(per_block, draws - start))
                                           for start in range(0, draws, per_block)), strict=True))
    value, beta = _ratio_shape(u, s)
    groups = np.array([_ratio_shape(gu, gs)[0] for gu, gs in zip(np.array_split(u, SHAPE_GROUPS),
                                                                  np.array_split(s, SHAPE_GROUPS), strict=True)])
    se = groups.std(axis=0, ddof=1) / np.sqrt(SHAPE_GROUPS)
    return tuple((float(m), float(e)) for m, e in zip(value, se, strict=True)), beta


def ratio_law(d_k: int, T: int) -> tuple[tuple[float, float], ...]:
    """The sd, skewness and excess kurtosis (expectations.SHAPES) of the ratio of the unscaled over the scaled mean
    ||J V g|| over n trials at head size d_k over T keys, times sqrt(n), sqrt(n) and n (as a law of one trial's
    are: the checks divide them back, theory_spread, fall_spread), each with its Monte Carlo SE (_ratio_shape)."""
    if d_k < 1 or T < 2:
        raise ValueError(f"the gradient ratio's law needs d_k >= 1 and T >= 2 (got d_k={d_k}, T={T})")
    if d_k == 1:  # the scale is 1: U = S in every trial, the ratio is exactly 1 and L exactly 0
        return ((0.0, 0.0),) * 3
    return _ratio_terms(d_k, T)[0]


def ratio_bias(d_k: int, T: int) -> float:
    """The ratio of n trials' means' second-order bias, times n (its expectation is R + this / n + O(1 / n^2)): left
    out of the checks' expected value, tests/claims/test_gradient_expectation.py shows it negligible."""
    return _ratio_terms(d_k, T)[1]
