"""softmax, entropy and scaled_dot_product_attention against independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_lab import entropy, scaled_dot_product_attention, softmax

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
