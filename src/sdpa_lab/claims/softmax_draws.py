"""What theory's finite-d_k expectations are built on (claims.expectations and the modules beside it): the Gauss rule
for the law of |q|, theory's own softmax and its statistics, and the seeded antithetic draws of unit-variance scores.

Given the query q, the scores K q of T keys K ~ N(0, I) are exactly |q| u with u = K q / |q| ~ N(0, I_T)
independent of |q|, |q|^2 ~ chi^2_{d_k}: an expectation over a trial is a Gauss rule over |q|^2 / 2 ~ Gamma(d_k / 2)
(generalized Laguerre nodes, Golub-Welsch) inside a seeded Monte Carlo average over u, with antithetic pairs (u, -u).
Written here with its own softmax, independent of the attention code the experiments run.
"""

from __future__ import annotations

import numpy as np

from sdpa_lab.rows import row_argmax, row_max, row_sum

# Gauss nodes for the law of |q|^2: the averaged statistic is smooth in r^2, so a few suffice
# (tests/claims/test_expectations.py: 16 and 48 nodes agree to well below the Monte Carlo error).
NODES = 16

# Elements (draws * T) per evaluation of the statistic: bounds memory and time whatever T.
DRAW_ELEMENTS = 1 << 16

STATISTICS = ("jacobian_norm", "entropy", "log10_jacobian_norm")


def gamma_rule(shape: float, nodes: int = NODES) -> tuple[np.ndarray, np.ndarray]:
    """Nodes x (nodes,) and weights w (nodes,), sum 1, with sum w f(x) ~ E f(X) for X ~ Gamma(shape, 1).

    Golub-Welsch on the Jacobi matrix of the generalized Laguerre polynomials, alpha = shape - 1.
    """
    a = shape - 1.0
    k = np.arange(nodes, dtype=float)
    off = np.sqrt(k[1:] * (k[1:] + a))
    x, v = np.linalg.eigh(np.diag(2.0 * k + a + 1.0) + np.diag(off, 1) + np.diag(off, -1))
    return x, v[0] ** 2


def _softmax(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = softmax(s) along the last axis, and 1 - p computed without cancellation: (m, T) -> (m, T), (m, T)."""
    e = np.exp(s - row_max(s))
    total = row_sum(e)
    return e / total, (total - e) / total  # total - e: the sum of the other terms, exact where p is near 1


# A norm that underflowed to 0 is floored here before log10, as the gradient experiment does.
LOG_FLOOR = float(np.finfo(np.float64).tiny)


def softmax_statistic(name: str, s: np.ndarray) -> np.ndarray:
    """Per row of scores s (m, T): the Frobenius norm of J = diag(p) - p p^T (or its log10), or the entropy
    -sum p log p, of p = softmax(s), (m,)."""
    p, rest = _softmax(s)
    if name in ("jacobian_norm", "log10_jacobian_norm"):
        # ||J||_F^2 = sum_i p_i^2 (1 - p_i)^2 + sum_i p_i^2 sum_{j != i} p_j^2; the inner sum for the largest
        # p_i is summed directly, for the others it is the total less p_i^2 (no cancellation: p_i is not the max)
        p2 = p * p
        top = row_argmax(p)
        others = row_sum(p2) - p2
        np.put_along_axis(others, top, row_sum(np.where(np.arange(p.shape[-1]) == top, 0.0, p2)), axis=-1)
        norm = np.sqrt(row_sum(p2 * rest * rest + p2 * others)[..., 0])
        return norm if name == "jacobian_norm" else np.log10(np.maximum(norm, LOG_FLOOR))
    if name == "entropy":
        return -row_sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0))[..., 0]
    raise ValueError(f"unknown statistic {name!r}; expected one of {STATISTICS}")


def _draws(name: str, d_k: int, T: int, what: int, most: int | None = None, block: int = 0) -> np.ndarray:
    """Seeded unit-variance scores u (2 pairs, T) in antithetic pairs (u, -u): averages over |q| are even in u.
    At most `most` pairs if given. Blocks 1, 2, ... are further independent draws (block 0 is the first)."""
    pairs = max(256, DRAW_ELEMENTS // (2 * T))
    pairs = pairs if most is None else min(pairs, most)
    key = [d_k, T, STATISTICS.index(name), what] + ([block] if block else [])
    u = np.random.default_rng(key).standard_normal((pairs, T))
    return np.concatenate([u, -u])


def _pair_means(values: np.ndarray) -> np.ndarray:
    """values (2 pairs,) averaged within each antithetic pair -> (pairs,)."""
    return values.reshape(2, -1).mean(axis=0)


def _pair_mean(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of values (2 pairs,) averaged within each antithetic pair."""
    return _mean_se(_pair_means(values))


def _mean_se(v: np.ndarray) -> tuple[float, float]:
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v)))
