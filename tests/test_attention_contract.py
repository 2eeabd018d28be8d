"""The forward's contract beyond its numbers: which input an error names, the dtype of mixed inputs,
broadcast batches, and the chunked forward's memory bound. Written to kill mutmut's survivors
(CONTRIBUTING.md, "Mutation testing"): each test asserts behaviour a user relies on."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from sdpa_lab.attention import (
    entropy,
    lesson_entropy,
    scaled_dot_product_attention,
    scaled_dot_product_attention_chunked,
    softmax,
)

FORWARDS = {
    "full": lambda Q, K, V: scaled_dot_product_attention(Q, K, V)[0],
    "chunked": lambda Q, K, V: scaled_dot_product_attention_chunked(Q, K, V, chunk_size=2),
}


@pytest.mark.parametrize("forward", FORWARDS.values(), ids=FORWARDS)
@pytest.mark.parametrize("bad", ["Q", "K", "V"])
def test_errors_name_the_bad_argument(forward, bad):
    good = np.zeros((3, 4))
    args = {"Q": good, "K": good, "V": good}
    with pytest.raises(TypeError, match=f"^{bad} must be a real floating-point array"):
        forward(**{**args, bad: np.array([["a"] * 4] * 3)})
    with pytest.raises(ValueError, match=f"^{bad} must have at least 2 dimensions"):
        forward(**{**args, bad: np.zeros(4)})


def test_softmax_and_entropy_errors_name_their_argument():
    with pytest.raises(TypeError, match="^x must be a real floating-point array"):
        softmax(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="^p must be a real floating-point array"):
        entropy(np.array(["a", "b"]))


@pytest.mark.parametrize("odd", ["Q", "K", "V"])
def test_batch_mismatch_of_any_one_input_is_refused_and_shown(odd):
    shapes = {"Q": (2, 4, 8), "K": (2, 5, 8), "V": (2, 5, 3)}
    shapes[odd] = (3, *shapes[odd][1:])
    arrays = {name: np.zeros(s) for name, s in shapes.items()}
    batches = {name: (3,) if name == odd else (2,) for name in shapes}
    message = f"batch dimensions of Q {batches['Q']}, K {batches['K']} and V {batches['V']} do not broadcast"
    for forward in FORWARDS.values():
        with pytest.raises(ValueError, match=f"^{message}$".replace("(", r"\(").replace(")", r"\)")):
            forward(**arrays)


@pytest.mark.parametrize("wide", ["Q", "K", "V"])
def test_mixed_precision_computes_in_the_common_dtype(wide):
    """float32 with one float64 input: weights and output are float64, as NumPy's promotion of the three."""
    rng = np.random.default_rng(4)
    arrays = {name: rng.standard_normal((3, 5, 4)).astype(np.float64 if name == wide else np.float32)
              for name in ("Q", "K", "V")}
    out, w = scaled_dot_product_attention(**arrays)
    assert out.dtype == np.float64 and w.dtype == np.float64
    assert scaled_dot_product_attention_chunked(**arrays, chunk_size=2).dtype == np.float64


@pytest.mark.parametrize("dtype_int", [np.int64, np.int32, np.uint8, np.bool_])
def test_integer_and_boolean_inputs_are_computed_as_float64(dtype_int):
    x = np.array([[1, 0, 1], [0, 1, 1]], dtype=dtype_int)
    p = softmax(x)
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, softmax(x.astype(np.float64)), rtol=0, atol=0)
    out, w = scaled_dot_product_attention(x, x, x)
    assert out.dtype == np.float64 and w.dtype == np.float64
    assert entropy(x).dtype == np.float64


def test_broadcast_batches_match_the_loop_over_the_batch():
    """Q (2, 1, T_q, d), K (3, T_k, d), V (T_k, d_v): batch (2, 3), each entry the plain 2-D forward."""
    rng = np.random.default_rng(8)
    Q, K, V = rng.standard_normal((2, 1, 7, 4)), rng.standard_normal((3, 5, 4)), rng.standard_normal((5, 6))
    out, w = scaled_dot_product_attention(Q, K, V)
    chunked = scaled_dot_product_attention_chunked(Q, K, V, chunk_size=3)
    assert out.shape == chunked.shape == (2, 3, 7, 6) and w.shape == (2, 3, 7, 5)
    for a in range(2):
        for b in range(3):
            o, w_ab = scaled_dot_product_attention(Q[a, 0], K[b], V)
            np.testing.assert_allclose(w[a, b], w_ab, rtol=1e-13, atol=0)
            np.testing.assert_allclose(out[a, b], o, rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(chunked[a, b], o, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_chunk_is_bitwise_the_full_forward(dtype):
    """With chunk_size >= T_q the chunked forward runs the full forward's operations, in the same dtype."""
    rng = np.random.default_rng(6)
    Q, K, V = (rng.standard_normal((2, 9, 8)).astype(dtype) * 4 for _ in range(3))
    full, _ = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_array_equal(scaled_dot_product_attention_chunked(Q, K, V, chunk_size=9), full)
    np.testing.assert_array_equal(scaled_dot_product_attention_chunked(Q, K, V), full)  # default: one chunk here


def test_chunked_forward_never_holds_the_whole_weights():
    """Peak NumPy memory of the chunked forward stays near one chunk of weights, far below all of them."""
    T, d, chunk = 1024, 8, 64
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
    scaled_dot_product_attention_chunked(Q, K, V, chunk_size=chunk)  # warm up: imports, caches
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        scaled_dot_product_attention_chunked(Q, K, V, chunk_size=chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    whole_weights = T * T * 8  # 8 MiB
    one_chunk = chunk * T * 8  # 0.5 MiB
    assert 4 * one_chunk <= whole_weights / 4
    assert peak < 4 * one_chunk, peak


def test_lesson_entropy_is_per_row_along_the_given_axis():
    p = np.array([[0.5, 0.5], [1.0, 0.0], [0.25, 0.75]])
    rows = lesson_entropy(p)
    assert rows.shape == (3,)
    np.testing.assert_allclose(rows, [-(r * np.log(r + 1e-12)).sum() for r in p], rtol=1e-15)
    np.testing.assert_allclose(lesson_entropy(p.T, axis=0), rows, rtol=1e-15)


def test_a_batch_carried_by_the_values_alone():
    """V (2, T_k, d_v) with unbatched Q and K: two outputs, one per set of values."""
    rng = np.random.default_rng(12)
    Q, K, V = rng.standard_normal((6, 4)), rng.standard_normal((5, 4)), rng.standard_normal((2, 5, 3))
    out, w = scaled_dot_product_attention(Q, K, V)
    chunked = scaled_dot_product_attention_chunked(Q, K, V, chunk_size=4)
    assert out.shape == chunked.shape == (2, 6, 3) and w.shape == (6, 5)
    for b in range(2):
        np.testing.assert_allclose(chunked[b], w @ V[b], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(out[b], w @ V[b], rtol=1e-12, atol=1e-14)
