"""B9: the forward maps (B, T, d_k) -> weights (B, T, T) -> output (B, T, d_k), rows summing to 1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sdpa_lab.attention import scaled_dot_product_attention
from sdpa_lab.seeding import stream
from sdpa_lab.tables import Rows
from sdpa_lab.validation import check_seed, check_shapes, forward_size_problem

DTYPES = ("float64", "float32")
# What is measured per shape and dtype, one row each, in this order.
QUANTITIES = ("weights_B", "weights_T_q", "weights_T_k", "output_B", "output_T", "output_d", "output_ndim",
              "weights_ndim", "dtype_kept", "max_row_sum_error", "min_weight", "all_finite")


def forward_shape_rows(seed: int, shapes: Sequence[Sequence[int]]) -> Rows:
    """For each (B, T, d_k) and dtype: the shapes, dtype and row sums of one seeded forward."""
    seed, shapes = check_seed(seed), check_shapes(shapes, "shapes")
    for i, shape in enumerate(shapes):
        if problem := forward_size_problem(shape):
            raise ValueError(f"shapes[{i}] = {list(shape)}: {problem}")
    rows = []
    for B, T, d_k in shapes:
        rng = stream(seed, "forward_shape", B, T, d_k)
        Q, K, V = (rng.standard_normal((B, T, d_k)) for _ in range(3))  # each (B, T, d_k)
        for dtype in DTYPES:
            out, weights = scaled_dot_product_attention(*(a.astype(dtype) for a in (Q, K, V)))
            row_sums = weights.sum(axis=-1, dtype=np.float64)  # (B, T)
            measured = {
                "weights_B": weights.shape[0], "weights_T_q": weights.shape[1], "weights_T_k": weights.shape[2],
                "output_B": out.shape[0], "output_T": out.shape[1], "output_d": out.shape[2],
                "output_ndim": out.ndim, "weights_ndim": weights.ndim,
                "dtype_kept": float(out.dtype == np.dtype(dtype) and weights.dtype == np.dtype(dtype)),
                "max_row_sum_error": float(np.max(np.abs(row_sums - 1.0))),
                "min_weight": float(weights.min()),
                "all_finite": float(np.isfinite(out).all() and np.isfinite(weights).all()),
            }
            for quantity in QUANTITIES:
                rows.append({"seed": seed, "B": B, "T": T, "d_k": d_k, "dtype": dtype,
                             "quantity": quantity, "value": float(measured[quantity])})
    return rows


def forward_shape_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows forward_shape_tables makes from `settings`: one per shape, dtype and quantity."""
    return {"table": len(settings["shapes"]) * len(DTYPES) * len(QUANTITIES)}


def forward_shape_tables(settings: Mapping, trial_scores: Mapping[int, str]) -> dict[str, Rows]:
    """The forward-shape experiment's table (registry.EXPERIMENTS["forward_shape"])."""
    return {"table": forward_shape_rows(settings["seed"], settings["shapes"])}
