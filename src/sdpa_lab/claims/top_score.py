"""The unscaled softmax's Jacobian norm averaged exactly over its top score (conditional Monte Carlo).

The unscaled scores are c u with c = |q| and u ~ N(0, I_T). Given every score but the largest, the largest is
exactly a normal truncated to lie above the second largest, m2: the T scores are independent, so the density of
the top one given the others is proportional to phi(x) on x > m2. The mean of a statistic h over that law is a
one-dimensional integral, done here by a Gauss rule, so each Monte Carlo draw contributes E[h | all but the top]
instead of h itself. That removes the noise the plain average is made of where the softmax saturates: there h is
near 0 except on the few draws whose top two scores nearly tie, and whether a draw is one of them is exactly the
top score's position above m2. At T = 1024, on the same draws, it cuts the Monte Carlo SE of the mean norm 2 to 36
times from d_k = 16 to 4096 (at d_k = 4, not saturated, it is about the same).

For the Frobenius norm of J = diag(p) - p p^T the integral needs only four sums over the other scores: with
e_j = exp(c (u_j - m2)) (the others, m2 included, so e_j <= 1), A, B2, B3 = sum e_j, e_j^2, e_j^3, the top score at
m2 + y and z = exp(-c y), D = 1 + z A:

    ||J||_F^2 = sum p^2 - 2 sum p^3 + (sum p^2)^2 = z^2 (A^2 + 2 B2 + B2 D^2 - 2 z B3 D + z^2 B2^2) / D^4,

a sum of non-negative terms up to the -2 z B3 D (which A B2 >= B3 keeps from cancelling the rest). The same
integral gives the norm of J z, the gradient a softmax passes to its scores from an upstream gradient z on its
weights, from five sums (conditional_gradient_norm; claims.gradient_expectation). Written here with its own algebra,
independent of the attention code and of expectations.softmax_statistic.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

# Gauss-Laguerre nodes for the top score's excess over m2 (tests/claims/test_top_score.py: 32 nodes agree with a
# dense composite rule to 4e-7 at every T and |q| tried, far below the Monte Carlo error).
TOP_NODES = 32

# The exponent below which an other score's e_j is taken as e^FLOOR: its share of A, B2, B3 is then below 1e-80.
FLOOR = -200.0

_ERFC = np.frompyfunc(math.erfc, 1, 1)


@lru_cache(maxsize=4)
def _laguerre(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes t and weights w e^t with sum (w e^t) G(t) ~ integral_0^inf G(t) dt for G decaying like e^-t."""
    t, w = np.polynomial.laguerre.laggauss(nodes)
    return t, w * np.exp(t)


def _top_law(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per draw of u (m, T): the second largest score m2 (m,), the scores other than the largest (m, T - 1), and
    the density at m2 of the top score's law given them, phi(m2) / P(N > m2) (m,)."""
    T = u.shape[-1]
    part = np.partition(u, T - 2, axis=-1)
    m2 = part[:, T - 2]
    return m2, part[:, : T - 1], _top_density(m2)


def _top_density(m2: np.ndarray) -> np.ndarray:
    """The density at m2 (m,) of the top score's law given the others: phi(m2) / P(N > m2) (m,)."""
    survival = _ERFC(m2 / math.sqrt(2.0)).astype(float) / 2.0
    return np.exp(-m2 * m2 / 2.0) / math.sqrt(2.0 * math.pi) / survival


def _top_excess(m2: np.ndarray, density: np.ndarray, c: float, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The top score's excess y over m2 at the Laguerre nodes (m, nodes), and the weight of each under its law
    (m, nodes), for scores scaled by c: t = a y, a = c + max(m2, 1) (conditional_norm_moments)."""
    t, wt = _laguerre(nodes)
    a = (c + np.maximum(m2, 1.0))[:, None]
    y = t / a  # (m, nodes)
    return y, density[:, None] * np.exp(-m2[:, None] * y - y * y / 2.0) / a * wt


def _norm(z: np.ndarray, A: np.ndarray, B2: np.ndarray, B3: np.ndarray) -> np.ndarray:
    """||diag(p) - p p^T||_F with the top score z-weighted against the others' sums A, B2, B3 (module docstring)."""
    D = 1.0 + z * A
    return z / (D * D) * np.sqrt(A * A + 2.0 * B2 + B2 * D * D - 2.0 * z * B3 * D + (z * B2) ** 2)


def conditional_norm_moments(u: np.ndarray, scales: np.ndarray, moments: int = 4,
                             nodes: int = TOP_NODES) -> np.ndarray:
    """E[||J||_F^k | every score but the top] of the unscaled softmax of c u, for k = 1..moments, per scale c of
    `scales` (n,) and draw of u (m, T): (moments, n, m). The top score's excess y over m2 is integrated with
    Laguerre nodes t = a y, a = c + max(m2, 1): the norm falls like e^{-c y} and the law like e^{-m2 y - y^2 / 2}, so
    in t the integrand is e^-t times a smooth factor."""
    m2, rest, density = _top_law(u)
    out = np.empty((moments, len(scales), len(u)))
    for i, c in enumerate(scales):
        # floored where it no longer counts (A, B2, B3 >= 1: m2's own term): no subnormals, whose arithmetic is slow
        e = np.exp(np.maximum(c * (rest - m2[:, None]), FLOOR))
        sums = [s[:, None] for s in (e.sum(axis=-1), (e * e).sum(axis=-1), (e**3).sum(axis=-1))]
        y, weight = _top_excess(m2, density, c, nodes)  # the law of y, per node
        norm = _norm(np.exp(-c * y), *sums)
        for k in range(moments):
            out[k, i] = np.sum(weight * norm ** (k + 1), axis=-1)
    return out


def conditional_gradient_norm(u: np.ndarray, z: np.ndarray, scales: np.ndarray,
                              nodes: int = TOP_NODES) -> np.ndarray:
    """E[||J z|| | every score but the top, z] of J = diag(p) - p p^T, p the softmax of c u, per scale c of `scales`
    (n,) and draw of u and z (m, T): (n, m). J z is the gradient a softmax passes to its scores from an upstream
    gradient z on its weights. With d = z - z_top and S = sum_j p_j d_j (so that z_i - p.z = d_i - S, no
    cancellation where p is near one-hot), ||J z||^2 = sum_i p_i^2 (d_i - S)^2; with the top score at m2 + y,
    f = exp(-c y), e_j, A as in conditional_norm_moments and D = 1 + f A, p_top = 1 / D, p_j = f e_j / D and

        ||J z||^2 = (S^2 + f^2 (E22 - 2 S E21 + S^2 B2)) / D^2,   S = f E1 / D,

    from five sums over the others: A, B2 = sum e_j, e_j^2 and E1, E21, E22 = sum e_j d_j, e_j^2 d_j, e_j^2 d_j^2."""
    T = u.shape[-1]
    order = np.argpartition(u, T - 2, axis=-1)
    others, top = order[:, : T - 1], order[:, T - 1 :]
    rest = np.take_along_axis(u, others, axis=-1)  # (m, T - 1)
    m2 = np.take_along_axis(u, order[:, T - 2 : T - 1], axis=-1)[:, 0]
    d = np.take_along_axis(z, others, axis=-1) - np.take_along_axis(z, top, axis=-1)  # (m, T - 1)
    density = _top_density(m2)
    out = np.empty((len(scales), len(u)))
    for i, c in enumerate(scales):
        e = np.exp(np.maximum(c * (rest - m2[:, None]), FLOOR))  # floored as conditional_norm_moments's
        e2 = e * e
        A, B2, E1, E21, E22 = (x.sum(axis=-1)[:, None] for x in (e, e2, e * d, e2 * d, e2 * d * d))
        y, weight = _top_excess(m2, density, c, nodes)
        f = np.exp(-c * y)  # (m, nodes)
        D = 1.0 + f * A
        S = f * E1 / D
        # the bracket is sum_j e_j^2 (d_j - S)^2 >= 0, expanded; floored at 0 against rounding
        square = (S * S + f * f * np.maximum(E22 - 2.0 * S * E21 + S * S * B2, 0.0)) / (D * D)
        out[i] = np.sum(weight * np.sqrt(square), axis=-1)
    return out
