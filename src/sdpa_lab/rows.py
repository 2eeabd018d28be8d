"""Reductions along a short last axis, column by column: the numbers of NumPy's own reductions, where a
reduction over a few contiguous entries per row costs several times the arithmetic around it (a softmax's
exp over 8 scores). The softmax of the attention (sdpa_lab.attention) and theory's own softmax
(sdpa_lab.claims.expectations) both take their row maxima and sums here."""

from __future__ import annotations

import numpy as np

# Up to this many entries along the last axis, its maximum is taken column by column (row_max).
SHORT_AXIS = 16
# row_sum adds the columns of at least this many rows per entry of a row (n columns, each a NumPy call): below,
# the reduction's one call costs less than the n columns' calls.
COLUMNS_FROM = 64
# The dtypes whose sum row_sum makes by its columns: NumPy adds these in their own precision (float16 not).
SUMMED = (np.dtype(np.float64), np.dtype(np.float32))


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
    """x.sum(axis=-1, keepdims=True), (..., n) -> (..., 1): the same numbers, bit for bit, but along a short
    contiguous last axis (2 <= n <= SHORT_AXIS) as additions of its columns, since NumPy's reduction over a few
    contiguous entries per row costs several times those additions (benchmarks/README.md measures it).

    The additions are NumPy's own, in its order: its sum of a contiguous row (pairwise summation) adds n < 8
    entries one after another, and 8 <= n < 16 as ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)) then the
    rest one by one, with entry j + 8 first added to entry j when n >= 16; all starting from +0.0. Tests hold
    every n to the reduction's bits. Other layouts, longer rows and few rows by the reduction itself."""
    n = x.shape[-1]
    if (x.ndim < 2 or not 1 < n <= SHORT_AXIS or x.size < COLUMNS_FROM * n * n or not x.flags.c_contiguous
            or x.dtype not in SUMMED):
        return x.sum(axis=-1, keepdims=True)
    col = [x[..., j] for j in range(n)]
    if n < 8:
        s = col[0] + col[1]
        rest = col[2:]
    else:
        r = col[:8] if n < 16 else [col[j] + col[j + 8] for j in range(8)]
        s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        rest = col[8 * (n // 8):]
    for c in rest:
        s += c
    s += 0.0  # the reduction starts from +0.0: a sum of -0.0 terms is +0.0
    return s[..., None]
