"""Expected values at finite d_k that theory gives only as a one-dimensional average.

Given the query q, the scaled scores K q / sqrt(d_k) of T keys K ~ N(0, I) are exactly
r u with u = K q / |q| ~ N(0, I_T) (unit-variance scores, independent of |q|) and
r = |q| / sqrt(d_k), |q|^2 ~ chi^2_{d_k}. So for a statistic h of the softmax weights,

    E h(softmax(K q / sqrt(d_k))) - E h(softmax(u)) = E_u [ E_r h(softmax(r u)) - h(softmax(u)) ],

which is not 0 at finite d_k (about -0.028 / d_k for the Jacobian norm at T = 8): r
scatters around 1 with variance about 1 / (2 d_k). The inner average over r is a Gauss
rule for |q|^2 / 2 ~ Gamma(d_k / 2) (generalized Laguerre nodes, Golub-Welsch); the outer
one over u is a seeded Monte Carlo average with antithetic pairs (u, -u), whose standard
error the checks add to their own. Written here with its own softmax, independent of the
attention code the experiments run.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# Gauss nodes for the law of |q|^2: the averaged statistic is smooth in r^2, so a few suffice
# (tests/test_expectations.py: 16 and 48 nodes agree to well below the Monte Carlo error).
NODES = 16

# Elements (draws * T) per evaluation of the statistic: bounds memory and time whatever T.
DRAW_ELEMENTS = 1 << 16

STATISTICS = ("jacobian_norm", "entropy")


def gamma_rule(shape: float, nodes: int = NODES) -> tuple[np.ndarray, np.ndarray]:
    """Nodes x (nodes,) and weights w (nodes,), sum 1, with sum w f(x) ~ E f(X) for X ~ Gamma(shape, 1).

    Golub-Welsch on the Jacobi matrix of the generalized Laguerre polynomials, alpha = shape - 1.
    """
    a = shape - 1.0
    k = np.arange(nodes, dtype=float)
    off = np.sqrt(k[1:] * (k[1:] + a))
    x, v = np.linalg.eigh(np.diag(2.0 * k + a + 1.0) + np.diag(off, 1) + np.diag(off, -1))
    return x, v[0] ** 2


def _softmax(s: np.ndarray) -> np.ndarray:
    """softmax along the last axis, (m, T) -> (m, T)."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_statistic(name: str, s: np.ndarray) -> np.ndarray:
    """Per row of scores s (m, T): ||diag(p) - p p^T||_F or the entropy -sum p log p of p = softmax(s), (m,)."""
    p = _softmax(s)
    if name == "jacobian_norm":  # ||J||_F^2 = sum_i p_i^2 (1 - p_i)^2 + sum_{i != j} p_i^2 p_j^2
        p2 = p * p
        off = np.sum(p2, axis=-1) ** 2 - np.sum(p2 * p2, axis=-1)
        return np.sqrt(np.sum(p2 * (1.0 - p) ** 2, axis=-1) + np.maximum(off, 0.0))
    if name == "entropy":
        return -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)
    raise ValueError(f"unknown statistic {name!r}; expected one of {STATISTICS}")


@lru_cache(maxsize=256)
def scaled_minus_unit_variance(name: str, d_k: int, T: int) -> tuple[float, float]:
    """E h(scaled) - E h(unit-variance) at head size d_k over T keys, and its Monte Carlo standard error."""
    x, w = gamma_rule(d_k / 2.0)
    r = np.sqrt(2.0 * x / d_k)  # (nodes,) values of |q| / sqrt(d_k)
    pairs = max(256, DRAW_ELEMENTS // (2 * T))
    u = np.random.default_rng([d_k, T, STATISTICS.index(name)]).standard_normal((pairs, T))  # (pairs, T)
    u = np.concatenate([u, -u])  # antithetic: the average over r is even in u, so its odd part cancels
    at_one = softmax_statistic(name, u)  # (2 pairs,)
    mixed = sum(wj * softmax_statistic(name, rj * u) for rj, wj in zip(r, w))  # (2 pairs,)
    gap = (mixed - at_one).reshape(2, pairs).mean(axis=0)  # (pairs,) one value per antithetic pair
    return float(gap.mean()), float(gap.std(ddof=1) / np.sqrt(pairs))
