"""Scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V, and the functions it is
built from: the attention's scale, its weights (a numerically stable softmax of the scaled
scores), the softmax's backward pass, and the entropy of a probability distribution.

The scale and the weights are computed here and nowhere else. Every experiment that measures
the forward, scaled scores, weights or their gradient (sdpa_lab.experiments) takes the attention
it measures as an argument, an `Attention` (SHIPPED, this module's, by default): the calibration
study's broken arms hand it one broken in one place (its scale or its backward).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sdpa_lab.rows import row_max, row_sum


def _as_float_array(x, name: str) -> np.ndarray:
    """x as a floating array (integers become float64); rejects non-numeric input."""
    a = np.asarray(x)
    if a.dtype.kind in "biu":
        a = a.astype(np.float64)
    if a.dtype.kind != "f":
        raise TypeError(f"{name} must be a real floating-point array, got dtype {a.dtype}")
    return a


def softmax(x, axis: int = -1) -> np.ndarray:
    """Probabilities exp(x) / sum(exp(x)) along `axis`, computed stably.

    Subtracting the maximum first keeps exp() from overflowing; the result
    has the dtype of `x` (float32 stays float32).
    """
    x = _as_float_array(x, "x")
    shifted = x - (row_max(x) if axis in (-1, x.ndim - 1) else x.max(axis=axis, keepdims=True))  # largest becomes 0
    return _softmax_inplace(shifted, axis)


def _softmax_inplace(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax of a floating array we own, computed in its own buffer (no temporaries
    the size of x: at (8, 1024, 1024) each one costs a fresh allocation and its page faults)."""
    x -= row_max(x) if axis in (-1, x.ndim - 1) else x.max(axis=axis, keepdims=True)  # largest entry becomes 0
    np.exp(x, out=x)
    x /= row_sum(x) if axis in (-1, x.ndim - 1) else x.sum(axis=axis, keepdims=True)
    return x


def default_scale(d_k: int) -> float:
    """The attention's scale when none is given: 1 / sqrt(d_k), the lesson's."""
    return 1.0 / math.sqrt(d_k)


def score_scale(d_k: int, scale=None) -> float:
    """The number the raw scores q.k of a head of size d_k are multiplied by: `scale`, or the
    attention's own (default_scale) when it is None; raises unless it is a positive finite number."""
    if scale is None:
        return default_scale(d_k)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    return scale


def attention_weights(scores, d_k: int, scale=None) -> np.ndarray:
    """The attention's weights softmax(scores * scale) along the last axis, for raw scores q.k
    (..., T_k) of a head of size d_k -> (..., T_k), rows summing to 1, in the dtype of `scores`.

    `scale`: None for the attention's own (default_scale), a number, or one per row (...,):
    positive and finite. The scores are not changed.
    """
    scores = _as_float_array(scores, "scores")
    if np.ndim(scale) == 0:
        c = scores.dtype.type(score_scale(d_k, scale))  # in the scores' dtype: float32 stays float32
    else:
        c = np.asarray(scale, dtype=scores.dtype)[..., None]  # (..., 1) one scale per row
        if not np.all(np.isfinite(c) & (c > 0)):
            raise ValueError("scale must hold positive finite numbers")
    return _weights_inplace(scores.copy(), c)


def _weights_inplace(scores: np.ndarray, scale) -> np.ndarray:
    """softmax(scores * scale) of raw scores (..., T_k) we own, in their buffer -> (..., T_k): the one place
    the weights are made (the forward's, and every experiment's through attention_weights)."""
    scores *= scale
    return _softmax_inplace(scores, axis=-1)


def softmax_backward(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    """J g for p = softmax(s) (..., T) and g (..., T): the gradient dL/ds from dL/dp = g, with the softmax
    Jacobian J = diag(p) - p p^T (symmetric), computed as p * (g - p.g) without forming J -> (..., T)."""
    out = g - row_sum(p * g)
    out *= p  # p * (g - p.g), in the buffer already made
    return out


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """J = diag(p) - p p^T for p = softmax(s) (..., T) -> (..., T, T): row i is J e_i, from softmax_backward
    (so that both say the same Jacobian)."""
    return softmax_backward(p[..., None, :], np.eye(p.shape[-1]))


def entropy(p, axis: int = -1) -> np.ndarray:
    """Shannon entropy -sum p log p (in nats) along `axis`, with 0 log 0 = 0.

    Unlike the lesson's -sum p log(p + 1e-12), exact zeros (exp underflow)
    contribute exactly 0 and never produce nan.
    """
    p = _as_float_array(p, "p")
    positive = p > 0
    logp = np.log(np.where(positive, p, 1.0))  # log 1 = 0 where p == 0
    terms = np.where(positive, p * logp, 0.0)
    return -(row_sum(terms)[..., 0] if axis in (-1, p.ndim - 1) else np.sum(terms, axis=axis))


def lesson_entropy(p, axis: int = -1) -> np.ndarray:
    """The lesson's entropy, -sum p log(p + 1e-12), kept for exact replication."""
    p = np.asarray(p)
    return -np.sum(p * np.log(p + 1e-12), axis=axis)


def scaled_dot_product_attention(Q, K, V, scale: float | None = None):
    """Attention output and weights: softmax(Q K^T * scale) V.

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v), any leading
    batch dimensions (broadcast). `scale` defaults to 1 / sqrt(d_k).
    Returns (out, weights) with out: (..., T_q, d_v), weights: (..., T_q, T_k),
    in the dtype of the inputs (float32 in, float32 out).
    """
    Q, K, V, dtype, scale = _checked_inputs(Q, K, V, scale)
    # One (..., T_q, T_k) buffer: the scores, scaled and turned into weights in place.
    scores = (Q @ np.swapaxes(K, -1, -2)).astype(dtype, copy=False)  # (..., T_q, T_k)
    weights = _weights_inplace(scores, scale)  # (..., T_q, T_k), rows sum to 1
    out = weights @ V  # (..., T_q, d_v)
    return out, weights


def scaled_dot_product_attention_chunked(Q, K, V, scale: float | None = None, chunk_size: int = 256):
    """Attention output softmax(Q K^T * scale) V, computed `chunk_size` queries at a time.

    Same inputs, checks and dtype rules as `scaled_dot_product_attention`, but it
    returns only `out` (..., T_q, d_v) and never holds the whole (..., T_q, T_k)
    weights: at most (..., chunk_size, T_k) at once.
    """
    if int(chunk_size) != chunk_size or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    chunk_size = int(chunk_size)
    Q, K, V, dtype, scale = _checked_inputs(Q, K, V, scale)
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    T_q = Q.shape[-2]
    out = np.empty((*batch, T_q, V.shape[-1]), dtype=dtype)  # (..., T_q, d_v)
    K_t = np.swapaxes(K, -1, -2)  # (..., d_k, T_k)
    for start in range(0, T_q, chunk_size):
        rows = slice(start, min(start + chunk_size, T_q))
        scores = (Q[..., rows, :] @ K_t).astype(dtype, copy=False)  # (..., c, T_k)
        out[..., rows, :] = _weights_inplace(scores, scale) @ V  # (..., c, d_v)
    return out


def _checked_inputs(Q, K, V, scale):
    """Q, K, V as floating arrays with compatible shapes, their common dtype and the
    scale (score_scale: default 1 / sqrt(d_k)) as a scalar of that dtype; raises on bad input."""
    Q = _as_float_array(Q, "Q")
    K = _as_float_array(K, "K")
    V = _as_float_array(V, "V")
    for name, a in (("Q", Q), ("K", K), ("V", V)):
        if a.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., T, d), got shape {a.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must share the last dimension d_k: Q has shape {Q.shape}, K has shape {K.shape}"
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V must have the same number of positions T_k: K has shape {K.shape}, V has shape {V.shape}"
        )
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(
            f"batch dimensions of Q {Q.shape[:-2]}, K {K.shape[:-2]} and V {V.shape[:-2]} do not broadcast"
        ) from None
    dtype = np.result_type(Q, K, V)
    scale = score_scale(Q.shape[-1], scale)
    # A Python/NumPy float64 scalar times a float32 array would promote under
    # NumPy 2's rules (the lesson's trap): cast the scale to the input dtype.
    scale = dtype.type(scale)
    return Q, K, V, dtype, scale


@dataclass(frozen=True)
class Attention:
    """The attention an experiment measures: its scale, weights, forward and softmax backward, as one value.

    scale: the scale at head size d_k where none is given; None for this module's own (default_scale,
    looked up when called). backward: J g for p = softmax(s), as softmax_backward. A broken attention
    replaces one of them (dataclasses.replace(SHIPPED, scale=...)); the methods are this module's
    functions with that scale and that backward.
    """

    scale: Callable[[int], float] | None = None
    backward: Callable[[np.ndarray, np.ndarray], np.ndarray] = softmax_backward

    def _given(self, d_k: int, scale):
        """The scale argument for this module's functions: `scale` if given, else this attention's own
        (None, the module's own, is left for them to apply)."""
        return self.scale(d_k) if scale is None and self.scale is not None else scale

    def score_scale(self, d_k: int, scale=None) -> float:
        """score_scale with this attention's own scale where `scale` is None."""
        return score_scale(d_k, self._given(d_k, scale))

    def weights(self, scores, d_k: int, scale=None) -> np.ndarray:
        """attention_weights with this attention's own scale where `scale` is None."""
        return attention_weights(scores, d_k, self._given(d_k, scale))

    def forward(self, Q, K, V, scale: float | None = None):
        """scaled_dot_product_attention with this attention's own scale where `scale` is None -> (out, weights)."""
        return scaled_dot_product_attention(Q, K, V, self._given(np.shape(Q)[-1], scale))

    def jacobian(self, p: np.ndarray) -> np.ndarray:
        """softmax_jacobian from this attention's backward -> (..., T, T)."""
        return self.backward(p[..., None, :], np.eye(p.shape[-1]))


# The attention the package ships: what the pipeline measures, and every experiment's default.
SHIPPED = Attention()
