"""Streaming moments: the edge cases of small samples and the precision of a chunk's moments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.moments import Moments


def test_summary_of_two_values_is_the_sample_std_and_its_se():
    s = Moments.of(np.array([1.0, 3.0])).summary()
    assert s["mean"] == 2.0
    assert s["std"] == pytest.approx(math.sqrt(2.0), rel=1e-15)  # ddof = 1: sqrt(((1-2)^2 + (3-2)^2) / 1)
    assert s["se"] == pytest.approx(1.0, rel=1e-15)  # sqrt(2) / sqrt(2)


def test_summary_of_one_value_has_no_spread():
    s = Moments.of(np.array([5.0])).summary()
    assert s["mean"] == 5.0 and math.isnan(s["std"]) and math.isnan(s["se"])


def test_summary_of_no_values_is_undefined():
    m = Moments.of(np.array([]))
    assert m == Moments() and math.isnan(m.variance)
    s = m.summary()
    assert math.isnan(s["std"]) and math.isnan(s["se"])


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_moments_of_a_chunk_are_computed_in_float64(dtype):
    """A chunk far from 0: its mean and deviations computed in float32 would lose digits."""
    x = np.random.default_rng(3).standard_normal(1000) * 0.01 + 1e4
    x = x.astype(dtype) if dtype != np.int64 else np.arange(10**9, 10**9 + 7)
    x64 = x.astype(np.float64)
    m = Moments.of(x)
    assert m.count == len(x)
    assert m.mean == x64.mean()
    assert m.m2 == pytest.approx(np.sum((x64 - x64.mean()) ** 2), rel=1e-14)
    assert isinstance(m.mean, float) and isinstance(m.m2, float)
