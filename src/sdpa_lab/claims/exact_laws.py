"""The exact law of a sample variance of scores, and of a ratio of two sample stds, where the normal approximation is
weakest (small d_k): their tolerances taken from the statistic's own distribution, not from k normal standard errors
widened by Cornish-Fisher.

A score S = q.k of length d, given k, is normal with variance R = |k|^2 ~ chi^2_d, so its square Y = S^2 has

    P(Y <= y) = E_R erf(sqrt(y / (2 R))),

a one-dimensional average (a Gauss rule for R / 2 ~ Gamma(d / 2): expectations.gamma_rule). Y has no moment generating
function (its tail falls like exp(-sqrt(y)) at d = 1): no saddlepoint reaches its tail, and a Cornish-Fisher series,
cut at the kurtosis, does not reach it either; at d_k 1 to 4 the sample variance and the std ratio showed more
|z| > 4 than the normal law predicts, the more the further out. The sum X = sum_i Y_i of n independent squares has
the n-fold convolution of Y's law, computed here on a lattice of step h (each bin's mass at its centre; the n-fold
power of its discrete Fourier transform), the lattice's mean moved onto n d and its variance onto n Var Y exactly; h
is LATTICE_STEP standard deviations of Y, so the lattice's rounding moves X by about 1% of its SE. The sample variance
is (X - n mean^2) / (n - 1), with n mean^2 taken at its expectation d (its spread is 1 / sqrt(8 n) of the variance's
SE at d = 1, and it only lowers the variance). A tolerance is the wider of the two quantiles that leave each tail the
share of the normal tail beyond k, in standard errors, and never less than k.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from sdpa_lab.claims.expectations import gamma_rule
from sdpa_lab.claims.standard_errors import variance_se

# The head sizes whose families take the exact law (B1's variance and its copies, B3's std ratio between two of
# them): where the preregistered study's tails were heavier than the normal k predicts (d_k 1, 2, 4).
EXACT_D_K = 4
# The lattice's step, in standard deviations of one square Y, and its largest size (past it, Cornish-Fisher).
LATTICE_STEP = 0.03
MAX_LATTICE = 1 << 23
# The lattice reaches this many SEs of X past its mean: beyond it the mass is below 1e-12 at any n, d the schema allows.
REACH = 16.0
# Gauss nodes for R's law: Y's tail at the lattice's end needs nodes out to a few hundred; below y = SMALL_Y, adaptive
# quadrature.
NODES = 200
SMALL_Y = 2.0


def square_cdf(y: np.ndarray, d: int) -> np.ndarray:
    """P(S^2 <= y) for a score S of length d, at each y (...) -> (...): the Gauss rule over R, and below SMALL_Y, where
    erf(sqrt(y / (2 R))) turns over at R near y, too sharply for the rule, adaptive quadrature over the normal factor
    instead (P(R Z^2 <= y) = E_Z P(R <= y / Z^2), R's regularized incomplete gamma)."""
    from scipy import integrate, special  # loaded where a law is computed, not by every import of the claims

    x, w = gamma_rule(d / 2, NODES)
    y = np.asarray(y, dtype=float)
    out = np.clip(special.erf(np.sqrt(y[..., None] / (4.0 * x))) @ w, 0.0, 1.0)  # R = 2 x
    for i in zip(*np.nonzero((y > 0) & (y < SMALL_Y)), strict=True):
        def given_z(z, at=float(y[i])):
            return math.exp(-z * z / 2) * special.gammainc(d / 2, at / (2 * z * z)) if z > 0 else 1.0
        out[i] = 2 * integrate.quad(given_z, 0, np.inf, epsabs=1e-13, epsrel=1e-11,
                                    limit=200)[0] / math.sqrt(2 * math.pi)
    return np.where(y > 0, out, 0.0)


@lru_cache(maxsize=64)
def sum_law(d: int, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The law of X = the sum of n independent squares of scores of length d, on a lattice: its values (m,) and
    their probabilities (m,), trimmed to REACH SEs either side of n d; None where the lattice would exceed
    MAX_LATTICE points."""
    from scipy import fft  # loaded where a law is computed, not by every import of the claims

    var_y = 2.0 * d * d + 6.0 * d
    h = LATTICE_STEP * math.sqrt(var_y)
    se_x = math.sqrt(n * var_y)
    length = fft.next_fast_len(math.ceil((n * d + REACH * se_x) / h) + 1, real=True)
    if length > MAX_LATTICE:
        return None
    # one square's bins [j h, (j + 1) h), as far as its own tail is above about 1e-18: P(|S| > s) falls like
    # exp(-s) s^((d - 1) / 2), below 1e-18 from s = 45 + 2 d
    edges = np.arange(min(length, math.ceil((45 + 2 * d) ** 2 / h) + 2) + 1) * h
    mass = np.diff(square_cdf(edges, d))
    mass[-1] += 1.0 - mass.sum()  # the far tail on the last bin
    mass = np.clip(mass, 0.0, None)
    centres = (np.arange(len(mass)) + 0.5) * h
    centre = float(mass @ centres)  # the lattice's mean of one square
    # the centres lose a little of Y's spread next to its singular density at 0 (0.25% at d = 1): given back as an
    # independent normal of the missing variance, so that X's first two moments are exact
    missing = max(var_y - float(mass @ (centres - centre) ** 2), 0.0)
    omega = 2 * np.pi * np.arange(length // 2 + 1) / length
    pmf = fft.irfft(fft.rfft(mass, length) ** n * np.exp(-0.5 * n * missing / (h * h) * omega**2), length)
    values = (np.arange(length) + 0.5 * n) * h + n * (d - centre)
    keep = np.abs(values - n * d) <= REACH * se_x
    return values[keep], np.clip(pmf[keep], 0.0, None)


def _tail_share(k: float) -> float:
    return NormalDist().cdf(-k)


def variance_k_prime(d: int, n: int, k: float) -> float | None:
    """The standard errors (variance_se) a sample variance of n scores of length d needs either side so that each tail
    keeps the normal tail beyond k, from its exact law; None where the lattice is too large."""
    law = sum_law(d, n)
    if law is None:
        return None
    values, p = law
    alpha = _tail_share(k)
    below, above = np.cumsum(p), np.cumsum(p[::-1])[::-1]
    low = values[np.flatnonzero(below <= alpha)[-1]] if below[0] <= alpha else values[0]
    high = values[np.flatnonzero(above <= alpha)[0]] if above[-1] <= alpha else values[-1]
    se = variance_se(d, n)
    z = [((x - d) / (n - 1) - d) / se for x in (low, high)]
    return float(max(k, -z[0], z[1]))


def _ratio_survival(a: tuple, b: tuple, d_a: int, d_b: int, n: int, rho: float) -> float:
    """P(s_b / s_a > rho) for the sample stds of n scores of lengths d_a and d_b, independent."""
    (xa, pa), (xb, pb) = a, b
    survival_b = np.cumsum(pb[::-1])[::-1]  # P(X_b >= xb[i])
    # s_b^2 > rho^2 s_a^2  <=>  X_b - d_b > rho^2 (X_a - d_a)
    threshold = d_b + rho * rho * (xa - d_a)
    return float(pa @ np.interp(threshold, xb, survival_b, left=1.0, right=0.0))


@lru_cache(maxsize=256)
def ratio_k_prime(d_a: int, d_b: int, n: int, k: float, expected: float, se: float) -> float | None:
    """The SEs `se` a ratio of the sample stds of n scores of lengths d_b over d_a (`expected` sqrt(d_b / d_a)) needs
    either side so that each tail keeps the normal tail beyond k, from the exact laws; None where a lattice is too
    large."""
    a, b = sum_law(d_a, n), sum_law(d_b, n)
    if a is None or b is None:
        return None
    alpha = _tail_share(k)

    def quantile(upper: bool) -> float:  # bisection: the survival falls as rho grows
        lo, hi = (expected, expected + 40 * se) if upper else (max(expected - 40 * se, 0.0), expected)
        for _ in range(60):
            mid = (lo + hi) / 2
            p = _ratio_survival(a, b, d_a, d_b, n, mid)
            inside = p > alpha if upper else 1.0 - p <= alpha
            lo, hi = (mid, hi) if inside else (lo, mid)
        return hi if upper else lo

    return float(max(k, (quantile(True) - expected) / se, (expected - quantile(False)) / se))


def k_prime(law: tuple, k: float, expected: float, se: float) -> float | None:
    """The k' of a check whose law is `law`: ("variance", d, n) (its SE variance_se(d, n) times any fixed scale, so
    the same k'), or ("ratio", d_a, d_b, n); None where it cannot be computed (Cornish-Fisher then)."""
    kind, *args = law
    if kind == "variance":
        return variance_k_prime(*args, k)
    if kind == "ratio":
        return ratio_k_prime(*args, k, expected, se)
    raise ValueError(f"unknown law {law!r}; expected ('variance', d, n) or ('ratio', d_a, d_b, n)")


def z_law(law: tuple, z: np.ndarray, expected: float, se: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(P(Z <= z), P(Z > z)) at each z (...) for Z = (statistic - expected) / se of a check whose statistic has the law
    `law` (k_prime's keys; a variance's Z is the same whatever fixed scale its check puts on it, so its own SE
    variance_se(d, n) is used), each side summed from its own end (a far tail keeps its digits); None where a lattice
    is too large (the tolerance was then Cornish-Fisher's)."""
    kind, *args = law
    z = np.asarray(z, dtype=float)
    if kind == "variance":
        d, n = args
        if (sum_x := sum_law(d, n)) is None:
            return None
        values, p = sum_x
        x = (n - 1) * (d + z * variance_se(d, n)) + d  # the sum of squares at which the variance is d + z SE
        at = np.searchsorted(values, x, side="right")  # values[:at] <= x
        below = np.concatenate([[0.0], np.cumsum(p)])[at]
        above = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])[at]
        return below, above
    if kind == "ratio":
        d_a, d_b, n = args
        a, b = sum_law(d_a, n), sum_law(d_b, n)
        if a is None or b is None:
            return None
        rho = expected + z * se
        above = np.array([_ratio_survival(a, b, d_a, d_b, n, r) if r > 0 else 1.0 for r in rho.ravel()])
        above = above.reshape(rho.shape)
        return 1.0 - above, above
    raise ValueError(f"unknown law {law!r}; expected ('variance', d, n) or ('ratio', d_a, d_b, n)")


def law_text(law: tuple | None) -> str:
    """A law key as the calibration's checks table writes it, its parts joined by spaces ("variance 1 1000"); "" for
    none."""
    return " ".join(map(str, law)) if law else ""


def read_law(text) -> tuple | None:
    """The law key law_text wrote; None for an empty or missing cell."""
    if not isinstance(text, str) or not text.strip():
        return None
    kind, *numbers = text.split()
    return (kind, *map(int, numbers))


def exact_law(d: int, n: int) -> tuple | None:
    """The law key of a sample variance of n scores of length d where its family takes the exact law, else None."""
    return ("variance", d, n) if d <= EXACT_D_K else None


def exact_ratio_law(d_a: int, d_b: int, n: int) -> tuple | None:
    """The law key of the std ratio d_a -> d_b where its family takes the exact law, else None."""
    return ("ratio", d_a, d_b, n) if max(d_a, d_b) <= EXACT_D_K else None
