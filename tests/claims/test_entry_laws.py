"""The sample variance's law under any entry law: the normal formulas at (3, 15, 105), the exact law of +-1
entries, and a seeded simulation at uniform and +-1 entries, held to the simulation's own standard error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.claims import standard_errors as SE
from sdpa_lab.claims.entry_laws import ENTRY_LAW_MOMENTS, sample_variance_shape, score_square_moments


@given(d=st.integers(1, 10_000), n=st.integers(2, 10**6))
def test_normal_entries_give_the_normal_formulas(d, n):
    normal = ENTRY_LAW_MOMENTS["normal"]
    assert score_square_moments(d, normal) == pytest.approx(SE._score_square_moments(d), rel=1e-12)
    se, skewness, kurtosis = sample_variance_shape(d, n, normal)
    assert se == pytest.approx(SE.variance_se(d, n), rel=1e-12)
    assert skewness == pytest.approx(SE.variance_skewness(d, n), rel=1e-12)
    assert kurtosis == pytest.approx(SE.variance_excess_kurtosis(d, n), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("law", ["uniform", "rademacher"])
@pytest.mark.parametrize("d", [1, 3, 16])
def test_the_variance_follows_the_fourth_moment(law, d):
    """Var S^2 = 2d^2 + d (m4^2 - 3): the closed form the guide quotes."""
    m4 = ENTRY_LAW_MOMENTS[law][0]
    assert score_square_moments(d, ENTRY_LAW_MOMENTS[law])[0] == pytest.approx(2 * d**2 + d * (m4**2 - 3))


@pytest.mark.parametrize("d", [1, 2, 5, 12])
def test_rademacher_entries_against_their_exact_law(d):
    """With +-1 entries each product is +-1 with equal chances: S = d - 2B, B ~ Binomial(d, 1/2)."""
    b = np.arange(d + 1)
    p = np.array([math.comb(d, int(i)) for i in b]) / 2.0**d
    y = (d - 2.0 * b) ** 2
    centred = y - float(p @ y)
    exact = [float(p @ centred**k) for k in (2, 3, 4)]
    assert score_square_moments(d, ENTRY_LAW_MOMENTS["rademacher"]) == pytest.approx(exact, rel=1e-9, abs=1e-9)


def _draw(law: str, rng: np.random.Generator, shape) -> np.ndarray:
    if law == "uniform":
        return rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), shape)
    return rng.choice((-1.0, 1.0), shape)


@pytest.mark.parametrize("law", ["uniform", "rademacher"])
@pytest.mark.parametrize("d", [2, 7])
def test_central_moments_against_a_simulation(law, d):
    """Each of E (Y - d)^k, k = 2, 3, 4 (E Y = d exactly), estimated by a mean over 400,000 seeded draws,
    within 5 of that mean's own standard errors of the formula (+-1 entries at d = 2 make (Y - d)^2 constant)."""
    rng = np.random.default_rng([20260, d, len(law)])
    n = 400_000
    s = np.einsum("ij,ij->i", _draw(law, rng, (n, d)), _draw(law, rng, (n, d)))
    centred = s**2 - d
    for k, predicted in zip((2, 3, 4), score_square_moments(d, ENTRY_LAW_MOMENTS[law]), strict=True):
        powers = centred**k
        se = powers.std(ddof=1) / math.sqrt(n)
        assert abs(powers.mean() - predicted) <= 5 * se + 1e-9 * abs(predicted), (law, d, k, predicted, se)


@pytest.mark.parametrize("law", [(3.0, 15.0), (0.5, 1.0, 1.0), (3.0, 5.0, 105.0), (3.0, 15.0, 50.0)])
def test_moments_no_law_has_are_refused(law):
    with pytest.raises(ValueError, match="entry law"):
        score_square_moments(4, law)
