"""sdpa_lab.rows.row_max and row_sum, the softmax's maximum and sum along the last axis: the numbers of NumPy's own
reductions at every length, dtype and value (infinities and nan included), with enough rows that row_sum adds columns;
and the softmax's weights, its backward and the entropy to the bit those written with the reductions."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_lab.attention import entropy, softmax, softmax_backward
from sdpa_lab.rows import COLUMNS_FROM, SHORT_AXIS, row_max, row_sum

shapes = st.lists(st.integers(1, 4), max_size=2).flatmap(
    lambda lead: st.integers(1, SHORT_AXIS + 3).map(lambda n: (*lead, n)))
any_float = st.floats(allow_nan=True, allow_infinity=True, width=32)


@given(arrays(st.sampled_from([np.float32, np.float64]), shapes, elements=any_float))
def test_row_max_is_the_reductions_maximum(x):
    got, want = row_max(x), x.max(axis=-1, keepdims=True)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True)


def tall(x: np.ndarray) -> np.ndarray:
    """x's rows repeated, C-contiguous, until they are enough for row_sum to add columns (COLUMNS_FROM per entry):
    an even number of times."""
    n = x.shape[-1]
    return np.concatenate([x.reshape(-1, n)] * (2 * -(-COLUMNS_FROM * n * n // max(2 * x.size, 1))))


def same_numbers(a: np.ndarray, b: np.ndarray) -> bool:
    """The same shape, dtype and bits (zeros' signs included), nan where nan (a nan's payload is not compared)."""
    nan = np.isnan(a)
    return (a.shape == b.shape and a.dtype == b.dtype and np.array_equal(nan, np.isnan(b))
            and a[~nan].tobytes() == b[~nan].tobytes())


sum_entries = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-38, -1e-45, 3e38, -3e38]), any_float)


@given(arrays(st.sampled_from([np.float32, np.float64]), shapes, elements=sum_entries))
def test_row_sum_is_the_reductions_sum_to_the_bit(x):
    for y in (x, tall(x), tall(x).reshape(2, -1, x.shape[-1])):
        assert same_numbers(row_sum(y), y.sum(axis=-1, keepdims=True))


def test_row_sum_adds_columns_in_the_reductions_order():
    # entries spread over 26 orders of magnitude: nearly every other order of adding them rounds differently
    rng = np.random.default_rng(7)
    for n in range(2, SHORT_AXIS + 1):
        for dtype in (np.float64, np.float32):
            x = (rng.standard_normal((4096, n)) * np.exp(rng.uniform(-30, 30, (4096, n)))).astype(dtype)
            assert same_numbers(row_sum(x), x.sum(axis=-1, keepdims=True))


finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, width=32)


@given(arrays(np.float64, shapes, elements=finite), arrays(np.float64, shapes, elements=finite))
def test_backward_and_entropy_are_to_the_bit_the_reductions(s, g):
    s, g = tall(s), tall(g)
    if s.shape != g.shape:
        return
    p = softmax(s)
    assert same_numbers(softmax_backward(p, g), p * (g - np.sum(p * g, axis=-1, keepdims=True)))
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    assert same_numbers(entropy(p), -np.sum(terms, axis=-1))


def reference_softmax(x: np.ndarray) -> np.ndarray:
    """The softmax as written before row_max: the reduction's maximum subtracted, exp, divided by the row sums."""
    e = x - x.max(axis=-1, keepdims=True)
    e -= e.max(axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


@given(arrays(st.sampled_from([np.float32, np.float64]), shapes, elements=finite))
def test_softmax_is_to_the_bit_the_reductions(x):
    assert softmax(x).tobytes() == reference_softmax(x).tobytes()
    assert softmax(tall(x)).tobytes() == reference_softmax(tall(x)).tobytes()


def test_row_max_of_a_long_axis():
    x = np.arange(3 * (SHORT_AXIS + 5), dtype=float).reshape(3, -1)[:, ::-1]
    assert np.array_equal(row_max(x), x[:, :1])
