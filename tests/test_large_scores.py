"""Every softmax path the experiments use, at large scores ("large scores break softmax"), in float32 and float64.

The paths: attention.softmax (A2, B5-B8), the forward's in-place softmax (A3, B9, and the chunked
forward) and the learning experiment's own in-place softmax (B10). Each is checked against a
log-sum-exp reference written here with the math module, on scores of hundreds to thousands:
without its max-subtraction any of them overflows (or underflows to 0 / 0) and returns NaN.

Inputs are small integers (and scales 1/2, 1/4), so the float32 scores are exact and the
float32 results differ from the reference only by the rounding of exp, sum and divide.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.attention import scaled_dot_product_attention, scaled_dot_product_attention_chunked, softmax
from sdpa_lab.experiments import gradient, learning

DTYPES = (np.float32, np.float64)
# rtol for results computed in dtype from exact scores; atol covers float32's subnormal range.
RTOL = {np.float32: 2e-5, np.float64: 1e-11}
ATOL = {np.float32: 1e-36, np.float64: 1e-300}


def lse_softmax(scores) -> np.ndarray:
    """Reference: exp(s - logsumexp(s)) row by row, in Python floats (float64)."""
    s = np.asarray(scores, dtype=np.float64)
    out = np.empty_like(s)
    for idx in np.ndindex(s.shape[:-1]):
        row = [float(v) for v in s[idx]]
        m = max(row)
        lse = m + math.log(math.fsum(math.exp(v - m) for v in row))
        out[idx] = [math.exp(v - lse) for v in row]
    return out


def large_scores(rng, shape, low, high) -> np.ndarray:
    """Integer scores in [low, high), with a near-tie at the top of each row (two keys share the weight)."""
    s = rng.integers(low, high, size=shape).astype(np.float64)
    top = s.argmax(axis=-1)[..., None]
    second = (top + 1) % shape[-1]
    np.put_along_axis(s, second, np.take_along_axis(s, top, axis=-1) - 1.0, axis=-1)
    return s


# Score ranges: positive (exp overflows without the shift: float64 above ~709, float32 above ~88),
# negative (exp underflows to 0 for every key in both dtypes: 0 / 0), and mixed.
RANGES = [(300, 1200), (-3000, -800), (-2000, 2000)]


def qk_with_scores(rng, B, T_k, low, high):
    """Integer Q (B, 1, 4) and K (B, T_k, 4) whose scaled scores (scale 1/sqrt(4) = 1/2), returned too
    as (B, 1, T_k), are large_scores in [low, high): exact in float32.

    Q = [1, 0, 0, 0] and K's first column is twice the wanted scores; its other columns meet Q's zeros.
    """
    target = large_scores(rng, (B, 1, T_k), low, high)  # (B, 1, T_k)
    Q = np.zeros((B, 1, 4))
    Q[..., 0] = 1.0
    K = np.empty((B, T_k, 4))
    K[..., 0] = 2.0 * target[:, 0, :]
    K[..., 1:] = rng.integers(-3, 4, size=(B, T_k, 3))
    return Q, K, target


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("low, high", RANGES)
def test_softmax_at_large_scores_matches_log_sum_exp(dtype, low, high):
    rng = np.random.default_rng(abs(low) + 7)
    s = large_scores(rng, (5, 9), low, high)
    p = softmax(s.astype(dtype))
    assert p.dtype == dtype and np.isfinite(p).all()
    np.testing.assert_allclose(p, lse_softmax(s), rtol=RTOL[dtype], atol=ATOL[dtype])
    np.testing.assert_allclose(p.sum(axis=-1, dtype=np.float64), 1.0, rtol=0, atol=5 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_near_the_largest_float(dtype):
    # Scores near the dtype's maximum: x - max must not be computed as x + max (overflow to inf).
    big = float(np.finfo(dtype).max) / 2
    s = np.array([[big, big - 1e-6 * big, -big], [-big, -big, -big]], dtype=dtype)
    p = softmax(s)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p, [[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_leaves_its_input_alone(dtype):
    x = np.array([[800.0, 799.0, -3.0], [1.0, 2.0, 3.0]], dtype=dtype)
    before = x.copy()
    softmax(x)
    assert np.array_equal(x, before)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("low, high", RANGES)
def test_forward_at_large_scores_matches_log_sum_exp(dtype, low, high):
    rng = np.random.default_rng(abs(high) + 11)
    Q, K, target = qk_with_scores(rng, 6, 10, low, high)
    V = rng.integers(-5, 6, size=(6, 10, 3)).astype(np.float64)
    ref_w = lse_softmax(target)  # (6, 1, 10)
    out, w = scaled_dot_product_attention(*(a.astype(dtype) for a in (Q, K, V)))
    assert out.dtype == dtype and w.dtype == dtype
    assert np.isfinite(w).all() and np.isfinite(out).all()
    np.testing.assert_allclose(w, ref_w, rtol=RTOL[dtype], atol=ATOL[dtype])
    np.testing.assert_allclose(out, ref_w @ V, rtol=0, atol=5 * RTOL[dtype])  # |weights @ V| <= max |V| = 5


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("low, high", RANGES)
def test_chunked_forward_at_large_scores_matches_log_sum_exp(dtype, low, high):
    rng = np.random.default_rng(abs(high) + 13)
    Q1, K, target = qk_with_scores(rng, 1, 12, low, high)
    # five queries: multiples 1, -1, 2, 0 and 1 of the first, all against the same keys
    c = np.array([1.0, -1.0, 2.0, 0.0, 1.0])
    Q = c[:, None] * Q1[0, 0]  # (5, 4)
    V = rng.integers(-5, 6, size=(12, 3)).astype(np.float64)
    ref_w = lse_softmax(c[:, None] * target[0, 0])  # (5, 12)
    out = scaled_dot_product_attention_chunked(*(a.astype(dtype) for a in (Q, K[0], V)), chunk_size=2)
    assert out.dtype == dtype and np.isfinite(out).all()
    np.testing.assert_allclose(out, ref_w @ V, rtol=0, atol=5 * RTOL[dtype])  # |weights @ V| <= max |V| = 5


def reference_loss_and_grad(z, V, target):
    """0.5 ||p V - target||^2 and J V r for scores z (R, L, T), values V (R, T, d_v), targets (R, d_v), with
    p the log-sum-exp softmax of z and J = diag(p) - p p^T, in float64, one row at a time."""
    p = lse_softmax(z)
    loss = np.empty(z.shape[:-1])
    grad = np.empty(z.shape)
    for r, j in np.ndindex(z.shape[:-1]):
        pi = p[r, j]
        res = pi @ V[r] - target[r]
        J = np.diag(pi) - np.outer(pi, pi)
        loss[r, j] = 0.5 * float(res @ res)
        grad[r, j] = J @ (V[r] @ res)
    return loss, grad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("low, high", RANGES)
def test_learning_score_loss_and_grad_at_large_scores(dtype, low, high):
    """B10's in-place softmax (the descent's only softmax) at saturated scores, shaped as `descent` calls it."""
    rng = np.random.default_rng(abs(high) + 17)
    z = large_scores(rng, (4, 2, 7), low, high)  # (R, L, T)
    V = rng.integers(-4, 5, size=(4, 7, 3)).astype(np.float64)  # (R, T, d_v)
    target = rng.integers(-4, 5, size=(4, 3)).astype(np.float64)  # (R, d_v)
    loss, g = learning.score_loss_and_grad(z.astype(dtype), V.astype(dtype), target[:, None, :].astype(dtype), 4, 1.0)
    ref_loss, ref_g = reference_loss_and_grad(z, V, target)
    assert loss.shape == (4, 2) and g.shape == z.shape
    assert np.isfinite(loss).all() and np.isfinite(g).all()
    np.testing.assert_allclose(loss, ref_loss, rtol=10 * RTOL[dtype], atol=0)
    # dL/dz = p (V r - p.V r): the subtraction cancels terms up to |V r| ~ 100, so allow 1000 eps absolute
    np.testing.assert_allclose(g, ref_g, rtol=10 * RTOL[dtype], atol=1000 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", DTYPES)
def test_learning_score_loss_and_grad_of_one_unscaled_wide_query(dtype):
    """One query (scores (T,), values (T, d_v)) at d_k = 4, scale 1, with scores in the hundreds."""
    rng = np.random.default_rng(19)
    q = rng.integers(-20, 21, size=4).astype(np.float64)
    K = rng.integers(-20, 21, size=(6, 4)).astype(np.float64)
    V = rng.integers(-4, 5, size=(6, 3)).astype(np.float64)
    z = K @ q  # exact: small integers
    assert np.abs(z).max() > 200
    loss, g = learning.score_loss_and_grad(z.astype(dtype), V.astype(dtype), V[2].astype(dtype), 4, 1.0)
    ref_loss, ref_g = reference_loss_and_grad(z[None, None], V[None], V[2][None])
    assert np.ndim(loss) == 0 and g.shape == z.shape
    assert np.isfinite(loss) and np.isfinite(g).all()
    np.testing.assert_allclose(loss, ref_loss[0, 0], rtol=10 * RTOL[dtype])
    np.testing.assert_allclose(g, ref_g[0, 0], rtol=10 * RTOL[dtype], atol=1000 * np.finfo(dtype).eps)


@pytest.mark.parametrize("low, high", RANGES)
def test_gradient_norms_at_large_scores(low, high):
    """B7's Jacobian and score-gradient norms, from softmax(c * raw) at c * raw in the hundreds and thousands."""
    rng = np.random.default_rng(abs(high) + 23)
    raw = large_scores(rng, (5, 8), low, high) / 2
    V = rng.integers(-4, 5, size=(5, 8, 3)).astype(np.float64)
    g_out = rng.integers(-4, 5, size=(5, 3)).astype(np.float64)
    got = gradient.gradient_norms(raw, V, g_out, 8, 2.0)
    p = lse_softmax(2.0 * raw)
    J = np.stack([np.diag(pi) - np.outer(pi, pi) for pi in p])
    g_scores = np.einsum("mst,mtv,mv->ms", J, V, g_out)
    for name, values in got.items():
        assert np.isfinite(values).all(), name
    np.testing.assert_allclose(got["jacobian_norm"], np.sqrt((J * J).sum(axis=(1, 2))), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(got["score_grad_norm"], np.linalg.norm(g_scores, axis=-1), rtol=1e-10, atol=1e-300)
