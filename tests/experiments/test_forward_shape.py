"""B9's forward-shape table (experiments.forward_shape): the quantities B9 reads, drawn from their seeded streams, for
the lesson-shaped forward and the one where every dimension differs, its output error against a loop reference."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from sdpa_lab.attention import SHIPPED, scaled_dot_product_attention
from sdpa_lab.experiments import forward_shape
from sdpa_lab.seeding import stream


def test_forward_shape_quantities_are_the_ones_b9_reads():
    rows = forward_shape.forward_shape_rows(7, [[2, 3, 4], [1, 8, 8]])
    # the lesson's shape, and one where T_q, T_k, d_k, d_v all differ (at T = d_k the queries move off T)
    assert {(r["T"], r["T_q"], r["T_k"], r["d_k"], r["d_v"]) for r in rows} == {
        (3, 3, 3, 4, 4), (3, 3, 2, 4, 5), (8, 8, 8, 8, 8), (8, 9, 10, 8, 4)}
    for T, T_q, T_k, d_v in ((3, 3, 3, 4), (3, 3, 2, 5), (8, 9, 10, 4)):
        got = {(r["dtype"], r["quantity"]): r["value"] for r in rows
               if (r["T"], r["T_q"], r["T_k"], r["d_v"]) == (T, T_q, T_k, d_v)}
        assert {q for _, q in got} == {
            "weights_B", "weights_T_q", "weights_T_k", "output_B", "output_T", "output_d", "output_ndim",
            "weights_ndim", "dtype_kept", "max_row_sum_error", "min_weight", "all_finite",
            "max_relative_output_error", "max_norm_product"}
        B = 2 if T == 3 else 1
        for dtype in ("float64", "float32"):
            assert [got[dtype, q] for q in ("weights_B", "weights_T_q", "weights_T_k")] == [B, T_q, T_k]
            assert [got[dtype, q] for q in ("output_B", "output_T", "output_d", "output_ndim", "weights_ndim")] == [
                B, T_q, d_v, 3, 3]
            assert got[dtype, "dtype_kept"] == 1.0 and got[dtype, "all_finite"] == 1.0


def _loop_attention(Q, K, V):
    """softmax(Q K^T / sqrt(d_k)) V by loops over every query and key, in float64."""
    B, T_q, d_k = Q.shape
    out = np.zeros((B, T_q, V.shape[2]))
    for b in range(B):
        for i in range(T_q):
            scores = [sum(float(Q[b, i, m]) * float(K[b, j, m]) for m in range(d_k)) / math.sqrt(d_k)
                      for j in range(K.shape[1])]
            top = max(scores)
            e = [math.exp(s - top) for s in scores]
            for j, w in enumerate(e):
                out[b, i] += w / sum(e) * V[b, j].astype(np.float64)
    return out


def test_forward_shape_rows_are_the_seeded_forward():
    """B9's numbers come from stream(seed, "forward_shape", B, T, d_k): Q, K, V in that order; and the forward where
    every dimension differs from stream(seed, "forward_shape", B, T, d_k, T_k, d_v); its output error is measured
    against softmax(Q K^T / sqrt(d_k)) V, relative to softmax(Q K^T / sqrt(d_k)) |V| element by element."""
    rows = forward_shape.forward_shape_rows(11, [[2, 5, 3], [1, 4, 2]])
    got = {(r["B"], r["T"], r["d_k"], r["T_k"], r["d_v"], r["dtype"], r["quantity"]): r["value"] for r in rows}
    assert {r["T_q"] for r in rows if r["T"] == 5} == {5}  # T != d_k: the queries are the config's T
    for B, T, d_k in ((2, 5, 3), (1, 4, 2)):
        rng = stream(11, "forward_shape", B, T, d_k)
        Q, K, V = (rng.standard_normal((B, T, d_k)) for _ in range(3))
        key = (B, T, d_k, T, d_k)
        _, w = scaled_dot_product_attention(Q, K, V)
        assert got[*key, "float64", "min_weight"] == float(w.min())
        row_sums = w.sum(axis=-1)
        assert got[*key, "float64", "max_row_sum_error"] == float(np.max(np.abs(row_sums - 1.0)))
        _, w32 = scaled_dot_product_attention(*(a.astype(np.float32) for a in (Q, K, V)))
        row_sums = w32.sum(axis=-1, dtype=np.float64)  # float32 weights, summed without further rounding
        assert got[*key, "float32", "max_row_sum_error"] == float(np.max(np.abs(row_sums - 1.0)))
        T_k, d_v = T - 1, 1  # every dimension differs: T_k = T - 1 (T >= 3), d_v = d_k // 2
        rng = stream(11, "forward_shape", B, T, d_k, T_k, d_v)
        Q, K, V = rng.standard_normal((B, T, d_k)), rng.standard_normal((B, T_k, d_k)), rng.standard_normal((B, T_k, 1))
        key = (B, T, d_k, T_k, d_v)
        reference = _loop_attention(Q, K, V)  # of the float64 inputs, for both dtypes
        magnitude = _loop_attention(Q, K, np.abs(V))
        norms = [np.linalg.norm(a, axis=-1) for a in (Q, K)]  # (B, T), (B, T_k)
        largest = max(float(norms[0][b].max() * norms[1][b].max()) for b in range(B))
        for dtype in ("float64", "float32"):
            out, _ = scaled_dot_product_attention(*(a.astype(dtype) for a in (Q, K, V)))
            error = float(np.max(np.abs(out.astype(np.float64) - reference) / magnitude))
            assert got[*key, dtype, "max_relative_output_error"] == pytest.approx(error, abs=1e-14)
            assert got[*key, dtype, "max_norm_product"] == pytest.approx(largest, rel=1e-14)


def test_dtype_kept_and_all_finite_need_both_arrays():
    """dtype_kept and all_finite are 1 only when both the output and the weights pass."""
    real = SHIPPED.forward

    def weights_promoted(*args):
        out, w = real(*args)
        return out, w.astype(np.float64)

    def weights_nan(*args):
        out, w = real(*args)
        return out, np.full_like(w, np.nan)

    cases = ((weights_promoted, "dtype_kept", "float32"), (weights_nan, "all_finite", "float64"))
    for broken, quantity, dtype in cases:
        rows = forward_shape.forward_shape_rows(7, [[1, 2, 2]], attention=SimpleNamespace(forward=broken))
        assert [r["value"] for r in rows if r["quantity"] == quantity and r["dtype"] == dtype] == [0.0, 0.0]


def test_an_output_of_the_wrong_shape_or_not_finite_is_the_largest_error():
    real = SHIPPED.forward
    for broken in (lambda *a: (real(*a)[0][..., :1], real(*a)[1]), lambda *a: (real(*a)[0] * np.nan, real(*a)[1])):
        rows = forward_shape.forward_shape_rows(7, [[1, 3, 4]], attention=SimpleNamespace(forward=broken))
        assert {r["value"] for r in rows if r["quantity"] == "max_relative_output_error"} == {
            float(np.finfo(float).max)}
