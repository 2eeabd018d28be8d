"""The finite-d_k expectations made with less work, the same numbers: the row reductions along short rows
(sdpa_lab.rows, as claims.expectations uses them) against NumPy's reductions, to the bit, and the statistics
against those computed with the reductions; `expectations`, which makes only the laws' moments its keys ask for,
against `expectation` of each key."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_lab.claims import expectations as E
from sdpa_lab.rows import SHORT_AXIS, row_argmax, row_sum

# Rows of 1 to past the short-row bound; entries from a few values (ties), tiny, huge and zeros of both signs.
ENTRIES = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 5e-324]),
                    st.floats(-1e6, 1e6, allow_nan=False))
ROWS = st.tuples(st.integers(1, 6), st.integers(1, SHORT_AXIS + 3)).flatmap(
    lambda shape: arrays(np.float64, shape, elements=ENTRIES))


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.int64), b.view(np.int64))


@given(ROWS)
def test_row_argmax_is_the_first_index_of_the_maximum(x):
    assert np.array_equal(row_argmax(x), np.argmax(x, axis=-1)[..., None])


@given(ROWS)
def test_row_sum_equals_the_reduction_to_the_bit(x):
    assert _same_bits(row_sum(x), x.sum(axis=-1, keepdims=True))
    many = np.concatenate([x] * 512)  # enough rows that row_sum adds columns
    assert _same_bits(row_sum(many), many.sum(axis=-1, keepdims=True))


def _reduced_statistic(name: str, s: np.ndarray) -> np.ndarray:
    """softmax_statistic written with NumPy's reductions throughout (max, argmax and sums along the last axis)."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    total = e.sum(axis=-1, keepdims=True)
    p, rest = e / total, (total - e) / total
    if name == "entropy":
        return -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)
    p2 = p * p
    top = np.argmax(p, axis=-1)[..., None]
    others = p2.sum(axis=-1, keepdims=True) - p2
    np.put_along_axis(others, top, np.sum(np.where(np.arange(p.shape[-1]) == top, 0.0, p2), axis=-1,
                                          keepdims=True), axis=-1)
    norm = np.sqrt(np.sum(p2 * rest * rest + p2 * others, axis=-1))
    return norm if name == "jacobian_norm" else np.log10(np.maximum(norm, E.LOG_FLOOR))


@given(st.sampled_from(E.STATISTICS), st.integers(2, SHORT_AXIS + 2), st.integers(0, 2**32 - 1),
       st.sampled_from([0.01, 1.0, 30.0, 1e4]))
def test_statistics_equal_those_of_the_reductions_to_the_bit(name, T, seed, spread):
    s = np.random.default_rng(seed).standard_normal((64, T)) * spread  # spread 1e4: saturated rows, weights of 0
    s[0] = 0.0  # a row of ties
    assert _same_bits(E.softmax_statistic(name, s), _reduced_statistic(name, s))


# Keys as a sweep asks them: means alone for one (statistic, d_k, T), means and one law or every law for others.
KEYS = [("scaled", "entropy", 3, 2), ("scaled_minus_unit_variance", "entropy", 3, 2),
        ("scaled", "jacobian_norm", 5, 4), ("scaled_minus_unit_variance", "jacobian_norm", 5, 4),
        ("scaled_minus_unit_variance:skewness", "jacobian_norm", 5, 4), ("unscaled", "entropy", 7, 3),
        ("scaled", "log10_jacobian_norm", 2, 6), ("scaled:sd", "log10_jacobian_norm", 2, 6),
        ("scaled_minus_unit_variance:excess_kurtosis", "log10_jacobian_norm", 2, 6),
        ("unscaled", "jacobian_norm", 4, 5), ("unscaled:sd", "entropy", 7, 3)]


def test_expectations_of_keys_equal_each_expectation_to_the_bit():
    got = E.expectations(KEYS)
    assert list(got) == KEYS
    for key in KEYS:
        mean, se = E.expectation(*key)  # every law's moments made on the same draws
        assert _same_bits(np.array(got[key]), np.array([mean, se]))


def test_a_law_not_made_is_an_error_not_a_guess():
    with pytest.raises(ValueError, match="law of 'scaled' asked of draws made for the laws of"):
        E.law("scaled", "entropy", 3, 2, laws=("scaled_minus_unit_variance",))
