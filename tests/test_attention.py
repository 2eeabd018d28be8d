"""sdpa_lab.attention: softmax, entropy and the forward against independent computation; the query-chunked forward
gives the same output; and the forward's contract beyond its numbers (which input an error names, the dtype of
mixed inputs, broadcast batches, the chunked forward's memory bound), whose tests were written to kill mutmut's
survivors (CONTRIBUTING.md, "Mutation testing")."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_lab import entropy, scaled_dot_product_attention, softmax
from sdpa_lab.attention import lesson_entropy, scaled_dot_product_attention_chunked

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False, width=64)


def loop_softmax(row):
    m = max(row)
    e = [math.exp(x - m) for x in row]
    s = sum(e)
    return [v / s for v in e]


def loop_attention(Q, K, V):
    """Plain-loop reference for one (T, d) head."""
    T_q, d = Q.shape
    T_k = K.shape[0]
    weights = np.zeros((T_q, T_k))
    out = np.zeros((T_q, V.shape[1]))
    for i in range(T_q):
        scores = [sum(Q[i, c] * K[j, c] for c in range(d)) / math.sqrt(d) for j in range(T_k)]
        w = loop_softmax(scores)
        weights[i] = w
        for j in range(T_k):
            out[i] += w[j] * V[j]
    return out, weights


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)), elements=finite))
def test_softmax_matches_loop_and_sums_to_one(x):
    p = softmax(x)
    for row, prow in zip(x, p, strict=True):
        np.testing.assert_allclose(prow, loop_softmax(list(row)), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)
    assert np.all(p >= 0)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)), elements=finite), finite)
def test_softmax_shift_invariant(x, c):
    np.testing.assert_allclose(softmax(x + c), softmax(x), rtol=1e-9, atol=1e-15)


@given(arrays(np.float64, st.integers(2, 12), elements=finite, unique=True), st.floats(1e-3, 1e3))
def test_positive_scale_preserves_ranking_of_logits(x, scale):
    # A positive scale can merge two very close logits into a tie but never reverses them.
    order = np.argsort(x, kind="stable")
    scaled = (x * scale)[order]
    assert np.all(np.diff(scaled) >= 0)


def test_softmax_is_stable_for_huge_inputs():
    p = softmax(np.array([1000.0, 1000.0, -1000.0]))
    np.testing.assert_allclose(p, [0.5, 0.5, 0.0])


def test_softmax_axis():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_keeps_dtype(dtype):
    assert softmax(np.ones((2, 3), dtype=dtype)).dtype == dtype


def test_entropy_known_values():
    assert entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8))
    assert entropy(np.array([1.0, 0.0, 0.0])) == 0.0
    assert entropy(np.array([0.5, 0.5, 0.0])) == pytest.approx(math.log(2))


def test_entropy_has_no_nan_on_underflow():
    p = softmax(np.array([0.0, -800.0, -900.0]))  # exp underflows to exactly 0
    assert p[1] == 0.0
    h = entropy(p)
    assert np.isfinite(h) and h == 0.0


@given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 8)), elements=finite))
def test_entropy_matches_loop_and_bounds(x):
    p = softmax(x)
    h = entropy(p)
    for prow, hrow in zip(p, h, strict=True):
        ref = -sum(v * math.log(v) for v in prow if v > 0)
        assert hrow == pytest.approx(ref, rel=1e-9, abs=1e-12)
        assert -1e-12 <= hrow <= math.log(len(prow)) + 1e-12


@settings(max_examples=30)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_attention_matches_loop_reference(T_q, T_k, d, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((T_q, d)), rng.standard_normal((T_k, d)), rng.standard_normal((T_k, 3))
    out, w = scaled_dot_product_attention(Q, K, V)
    ref_out, ref_w = loop_attention(Q, K, V)
    np.testing.assert_allclose(w, ref_w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-12)


@settings(max_examples=30)
@given(
    st.lists(st.integers(1, 3), min_size=0, max_size=3),
    st.integers(1, 6),
    st.integers(1, 8),
    st.sampled_from([np.float32, np.float64]),
)
def test_attention_shapes_rows_and_dtype(batch, T, d, dtype):
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((*batch, T, d)).astype(dtype) for _ in range(3))
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (*batch, T, d)
    assert w.shape == (*batch, T, T)
    assert out.dtype == dtype and w.dtype == dtype
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_float32_is_kept_where_the_lessons_version_promotes():
    rng = np.random.default_rng(1)
    Q, K, V = (rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(3))
    lesson_scores = Q @ K.transpose(0, 2, 1) / np.sqrt(8)
    assert lesson_scores.dtype == np.float64  # the trap the package avoids
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.dtype == np.float32 and w.dtype == np.float32


def test_explicit_scale():
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((3, 4)) for _ in range(3))
    _, w1 = scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(w1, softmax(Q @ K.T))


@pytest.mark.parametrize(
    "shapes, match",
    [
        (((2, 4, 8), (2, 4, 7), (2, 4, 8)), "last dimension d_k"),
        (((2, 4, 8), (2, 5, 8), (2, 4, 8)), "number of positions"),
        (((8,), (4, 8), (4, 8)), "at least 2 dimensions"),
        (((2, 4, 8), (3, 4, 8), (3, 4, 8)), "do not broadcast"),
    ],
)
def test_attention_rejects_mismatched_shapes(shapes, match):
    Q, K, V = (np.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=match):
        scaled_dot_product_attention(Q, K, V)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf")])
def test_attention_rejects_bad_scale(scale):
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="scale"):
        scaled_dot_product_attention(x, x, x, scale=scale)


def test_attention_rejects_non_numeric():
    with pytest.raises(TypeError, match="Q"):
        scaled_dot_product_attention(np.array([["a"]]), np.zeros((1, 1)), np.zeros((1, 1)))


@settings(max_examples=30)
@given(st.integers(1, 4), st.integers(1, 7), st.integers(1, 300), st.integers(0, 2**32 - 1),
       st.sampled_from([None, 1.0, 0.37]))
def test_attention_weights_are_the_forwards_and_the_loops(m, T, d_k, seed, scale):
    """attention_weights of raw scores q.k is softmax(c q.k), c = 1/sqrt(d_k) unless given, row by row as a loop
    computes it, and exactly the forward's weights for the same query and keys; the scores are not changed."""
    from sdpa_lab.attention import attention_weights, default_scale, score_scale

    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal((m, 1, d_k)), rng.standard_normal((m, T, d_k))
    raw = (Q @ np.swapaxes(K, -1, -2))[:, 0, :]  # (m, T) the forward's scores, unscaled
    kept = raw.copy()
    c = 1 / math.sqrt(d_k) if scale is None else scale
    assert default_scale(d_k) == 1 / math.sqrt(d_k) and score_scale(d_k, scale) == c
    w = attention_weights(raw, d_k, scale)
    for i in range(m):
        np.testing.assert_allclose(w[i], loop_softmax([c * x for x in raw[i]]), rtol=1e-12, atol=1e-300)
    _, forward = scaled_dot_product_attention(Q, K, np.zeros((m, T, 1)), scale)
    assert np.array_equal(w, forward[:, 0, :]) and np.array_equal(raw, kept)


def test_attention_weights_take_one_scale_per_row_and_keep_float32():
    from sdpa_lab.attention import attention_weights

    raw = np.array([[1.0, 2.0, 3.0], [4.0, 0.0, -4.0]])
    w = attention_weights(raw, 9, np.array([0.5, 2.0]))
    np.testing.assert_allclose(w, [loop_softmax([0.5, 1.0, 1.5]), loop_softmax([8.0, 0.0, -8.0])], rtol=1e-14)
    assert attention_weights(raw.astype(np.float32), 9).dtype == np.float32  # the scale cast, not the scores


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf"), np.array([1.0, -1.0])])
def test_attention_weights_reject_bad_scale(scale):
    from sdpa_lab.attention import attention_weights

    with pytest.raises(ValueError, match="scale"):
        attention_weights(np.zeros((2, 3)), 4, scale)


@settings(max_examples=30)
@given(st.integers(1, 4), st.integers(1, 7), st.integers(0, 2**32 - 1))
def test_softmax_backward_and_jacobian_are_diag_p_minus_p_p_transposed(m, T, seed):
    """J g and J for p = softmax(s), against diag(p) - p p^T written out and against finite differences of softmax."""
    from sdpa_lab.attention import softmax_backward, softmax_jacobian

    rng = np.random.default_rng(seed)
    s, g = rng.standard_normal((m, T)) * 3, rng.standard_normal((m, T))
    p = softmax(s)
    J = np.stack([np.diag(pi) - np.outer(pi, pi) for pi in p])  # (m, T, T)
    np.testing.assert_allclose(softmax_jacobian(p), J, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(softmax_backward(p, g), np.einsum("mst,mt->ms", J, g), rtol=1e-12, atol=1e-15)
    h = 1e-6
    for i in range(m):  # d(g . softmax(s)) / ds, by central differences
        fd = [(g[i] @ softmax(s[i] + h * e) - g[i] @ softmax(s[i] - h * e)) / (2 * h) for e in np.eye(T)]
        np.testing.assert_allclose(softmax_backward(p[i], g[i]), fd, rtol=1e-6, atol=1e-9)


# ---- the query-chunked forward ------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=0, max_size=2),
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(1, 9),
    st.integers(1, 17),
    st.sampled_from([np.float32, np.float64]),
    st.integers(0, 2**32 - 1),
)
def test_chunked_matches_full_forward(batch, T_q, T_k, d, chunk_size, dtype, seed):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((*batch, T_q, d)).astype(dtype)
    K = rng.standard_normal((*batch, T_k, d)).astype(dtype)
    V = rng.standard_normal((*batch, T_k, 3)).astype(dtype)
    full, _ = scaled_dot_product_attention(Q, K, V)
    out = scaled_dot_product_attention_chunked(Q, K, V, chunk_size=chunk_size)
    assert out.shape == full.shape and out.dtype == dtype
    np.testing.assert_allclose(out, full, rtol=0, atol=1e-6)


def test_chunked_matches_at_benchmark_size_and_broadcasts_batch():
    rng = np.random.default_rng(3)
    Q = rng.standard_normal((2, 300, 64)).astype(np.float32)
    K = rng.standard_normal((1, 200, 64)).astype(np.float32)  # broadcast over the batch
    V = rng.standard_normal((200, 16)).astype(np.float32)
    full, _ = scaled_dot_product_attention(Q, K, V, scale=0.5)
    out = scaled_dot_product_attention_chunked(Q, K, V, scale=0.5, chunk_size=64)
    assert out.shape == (2, 300, 16) and out.dtype == np.float32
    # The two run their float32 matmuls on differently shaped blocks, so BLAS may sum in another
    # order: a score can differ by up to d_k * eps * scale * sum_i |q_i k_i| (the standard dot
    # product bound), which moves a softmax-weighted mean of V by at most 2 * that * max|V|.
    eps = np.finfo(np.float32).eps
    score_err = 64 * eps * 0.5 * np.max(np.abs(Q) @ np.abs(K).swapaxes(-1, -2))
    np.testing.assert_allclose(out, full, rtol=0, atol=2 * score_err * np.abs(V).max())


def test_chunked_checks_inputs_like_the_full_forward():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="last dimension d_k"):
        scaled_dot_product_attention_chunked(np.zeros((2, 4)), np.zeros((2, 5)), x)
    with pytest.raises(ValueError, match="scale"):
        scaled_dot_product_attention_chunked(x, x, x, scale=-1.0)
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="chunk_size"):
            scaled_dot_product_attention_chunked(x, x, x, chunk_size=bad)


# ---- the forward's contract ----------------------------------------------------------------------

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
