"""sdpa_lab.rates: the Wilson interval's ends solve its defining equation, (p - x)^2 = z^2 x (1 - x) / n, and it is
exactly 0 or 1 at the ends, elementwise on arrays as on numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.rates import wilson


@given(st.integers(2, 10**6), st.data(), st.floats(0.5, 5.0))
def test_the_ends_solve_the_score_equation(n, data, z):
    p = data.draw(st.integers(1, n - 1)) / n
    low, high = (float(x) for x in wilson(p, n, z))
    assert 0 < low < p < high < 1
    for x in (low, high):
        # the points where the score statistic |p - x| / sqrt(x (1 - x) / n) equals z
        assert (p - x) ** 2 == pytest.approx(z * z * x * (1 - x) / n, rel=1e-7, abs=1e-15)


def test_no_success_or_all_successes_give_exactly_0_or_1():
    low, high = wilson(np.array([0.0, 1.0, 0.5]), np.array([20, 20, 20]), 1.96)
    assert low[0] == 0.0 and high[1] == 1.0
    assert 0 < high[0] < 0.2 and 0.8 < low[1] < 1  # about z^2 / (n + z^2) from the other end
    assert low[2] < 0.5 < high[2]


def test_arrays_are_taken_elementwise():
    p, n = np.array([0.1, 0.5, 0.9]), np.array([10, 100, 1000])
    low, high = wilson(p, n, 2.0)
    for i in range(3):
        one = wilson(p[i], n[i], 2.0)
        assert (low[i], high[i]) == (float(one[0]), float(one[1]))
