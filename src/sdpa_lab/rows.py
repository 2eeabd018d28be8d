"""Reductions along a short last axis, column by column: the numbers of NumPy's own reductions, where a
reduction over a few contiguous entries per row costs several times the arithmetic around it (a softmax's
exp over 8 scores). The softmax of the attention (sdpa_lab.attention) and theory's own softmax
(sdpa_lab.claims.expectations) both take their row maxima here."""

from __future__ import annotations

import numpy as np

# Up to this many entries along the last axis, its maximum is taken column by column (row_max).
SHORT_AXIS = 16


def row_max(x: np.ndarray) -> np.ndarray:
    """x.max(axis=-1, keepdims=True): equal numbers (a maximum is exact, whatever the order of comparing; only a
    zero's sign may differ, which the softmax cannot show: exp(-0) = exp(0)), but along a short last axis as an
    elementwise maximum of its columns, as NumPy's reduction over a few contiguous entries per row is slow (several
    times the softmax's exp); a long axis by the reduction itself."""
    if x.ndim < 2 or not 1 < x.shape[-1] <= SHORT_AXIS:  # one row: the reduction
        return x.max(axis=-1, keepdims=True)
    m = np.maximum(x[..., 0], x[..., 1])
    for j in range(2, x.shape[-1]):
        np.maximum(m, x[..., j], out=m)
    return m[..., None]


def row_argmax(p: np.ndarray) -> np.ndarray:
    """np.argmax(p, axis=-1)[..., None], (m, T) -> (m, 1): the first index of each row's maximum, found column by
    column along a short row (as row_max; the weights of finite scores hold no NaN)."""
    if not 1 < p.shape[-1] <= SHORT_AXIS:
        return np.argmax(p, axis=-1)[..., None]
    top, m = np.zeros(p.shape[:-1], dtype=np.intp), p[..., 0].copy()
    for j in range(1, p.shape[-1]):
        ahead = p[..., j] > m  # strictly: a tie keeps the first index
        top[ahead] = j
        np.maximum(m, p[..., j], out=m)
    return top[..., None]


def row_sum(x: np.ndarray) -> np.ndarray:
    """x.sum(axis=-1, keepdims=True), (m, T) -> (m, 1); a row of two as one addition: a sum of two numbers is
    one rounding, whatever the order (the reduction's number; only the sign of a zero sum of -0.0 terms may
    differ), and NumPy's reduction over two contiguous entries per row is slow. Longer rows by the reduction
    itself (its order of adding is its own)."""
    if x.shape[-1] != 2:
        return x.sum(axis=-1, keepdims=True)
    return (x[..., 0] + x[..., 1])[..., None]
