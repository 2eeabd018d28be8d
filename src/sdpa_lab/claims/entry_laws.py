"""The law of a score's sample variance when q and k have entries of any unit-variance symmetric law.

`standard_errors.variance_se` and its shape functions hold for standard normal entries only. Here the entry
law enters through its even moments (m4, m6, m8; m2 = 1): the product X = q_i k_i of two independent entries
has E X^2j = m_2j^2, the score S = q.k is a sum of d such X, so its cumulants are d times X's, and the sample
variance of n scores, a mean of n values Y = S^2 (to leading order in 1/n), has Y's variance over n and Y's
skewness and excess kurtosis over sqrt(n) and n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# Even moments (m4, m6, m8) of unit-variance laws: N(0, 1); uniform on [-sqrt 3, sqrt 3] (E U^2j = 3^j / (2j + 1));
# +-1 with equal chances.
ENTRY_LAW_MOMENTS: dict[str, tuple[float, float, float]] = {
    "normal": (3.0, 15.0, 105.0),
    "uniform": (9.0 / 5.0, 27.0 / 7.0, 9.0),
    "rademacher": (1.0, 1.0, 1.0),
}


def _checked_law(law: Sequence[float]) -> tuple[float, float, float]:
    """(m4, m6, m8) as floats, refusing moments no unit-variance law has (m4 >= 1, m6 >= m4^2, m8 m4 >= m6^2)."""
    if len(law) != 3:
        raise ValueError(f"entry law: expected its even moments (m4, m6, m8), got {law!r}")
    m4, m6, m8 = (float(m) for m in law)
    if not (m4 >= 1.0 and m6 >= m4 * m4 * (1 - 1e-12) and m8 * m4 >= m6 * m6 * (1 - 1e-12)):
        raise ValueError(f"entry law: (m4, m6, m8) = {law!r} are not the moments of a unit-variance law")
    return m4, m6, m8


def score_cumulants(d: float, law: Sequence[float] = ENTRY_LAW_MOMENTS["normal"]) -> tuple[float, ...]:
    """Cumulants of orders 2, 4, 6, 8 of S = q.k over d entries of this law (odd ones are 0): d times those
    of X = q_i k_i, whose moments are 1, m4^2, m6^2, m8^2 (1, 6, 120, 5040 for normal entries)."""
    m4, m6, m8 = (m * m for m in _checked_law(law))
    k4 = m4 - 3.0
    k6 = m6 - 15.0 * m4 + 30.0
    k8 = m8 - 28.0 * m6 - 35.0 * m4 * m4 + 420.0 * m4 - 630.0
    return d, d * k4, d * k6, d * k8


def score_square_moments(d: float, law: Sequence[float] = ENTRY_LAW_MOMENTS["normal"]) -> tuple[float, float, float]:
    """Variance, third and fourth central moments of Y = S^2 for scores over d entries of this law."""
    k2, k4, k6, k8 = score_cumulants(d, law)
    s4 = k4 + 3 * k2**2  # moments of S from its cumulants (a symmetric law: odd cumulants 0)
    s6 = k6 + 15 * k4 * k2 + 15 * k2**3
    s8 = k8 + 28 * k6 * k2 + 35 * k4**2 + 210 * k4 * k2**2 + 105 * k2**4
    return s4 - k2**2, s6 - 3 * k2 * s4 + 2 * k2**3, s8 - 4 * k2 * s6 + 6 * k2**2 * s4 - 3 * k2**4


def sample_variance_shape(d: float, n: int,
                          law: Sequence[float] = ENTRY_LAW_MOMENTS["normal"]) -> tuple[float, float, float]:
    """Standard error, skewness and excess kurtosis of the sample variance of n independent scores over d
    entries of this law: for `statistical(..., se, ..., skewness=, excess_kurtosis=)`. At normal entries
    these are standard_errors.variance_se, variance_skewness and variance_excess_kurtosis."""
    var_y, c3, c4 = score_square_moments(d, law)
    return math.sqrt(var_y / n), c3 / var_y**1.5 / math.sqrt(n), (c4 / var_y**2 - 3.0) / n
