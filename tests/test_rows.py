"""sdpa_lab.rows.row_max, the softmax's maximum along the last axis: the numbers of NumPy's own reduction at
every length, dtype and value (infinities and nan included), and the softmax's weights to the bit those of a softmax
that subtracts the reduction's maximum."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_lab.attention import softmax
from sdpa_lab.rows import SHORT_AXIS, row_max

shapes = st.lists(st.integers(1, 4), max_size=2).flatmap(
    lambda lead: st.integers(1, SHORT_AXIS + 3).map(lambda n: (*lead, n)))
any_float = st.floats(allow_nan=True, allow_infinity=True, width=32)


@given(arrays(st.sampled_from([np.float32, np.float64]), shapes, elements=any_float))
def test_row_max_is_the_reductions_maximum(x):
    got, want = row_max(x), x.max(axis=-1, keepdims=True)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True)


def reference_softmax(x: np.ndarray) -> np.ndarray:
    """The softmax as written before row_max: the reduction's maximum subtracted, exp, divided by the row sums."""
    e = x - x.max(axis=-1, keepdims=True)
    e -= e.max(axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


@given(arrays(st.sampled_from([np.float32, np.float64]), shapes,
              elements=st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, width=32)))
def test_softmax_is_to_the_bit_the_reductions(x):
    assert softmax(x).tobytes() == reference_softmax(x).tobytes()


def test_row_max_of_a_long_axis():
    x = np.arange(3 * (SHORT_AXIS + 5), dtype=float).reshape(3, -1)[:, ::-1]
    assert np.array_equal(row_max(x), x[:, :1])
