"""B9: softmax rows are distributions, and the forward maps (B, T, d_k) to (B, T, T) weights and a
(B, T, d_k) output (section "The Full Formula, Piece by Piece").
"""

from __future__ import annotations

import numpy as np

from sdpa_lab.claims.model import Check, exact, mismatched_axes
from sdpa_lab.results import Results


def _eps(dtype: str) -> float:
    return float(np.finfo(np.dtype(dtype)).eps)


def _row_sum_bound(T: int, dtype: str) -> float:
    """Rounding bound on |sum of a softmax row - 1|: T additions and one division, each within eps."""
    return (T + 1) * _eps(dtype)


def decide_b9(R: Results) -> list[Check]:
    src = "forward_shape.csv"
    out = []
    for B, T, d, dtype in R.distinct(src, "B", "T", "d_k", "dtype"):
        p = f"(B,T,d_k)=({B},{T},{d}), {dtype}"
        where = {"B": B, "T": T, "d_k": d, "dtype": dtype}
        weights = [R.value(src, **where, quantity=q) for q in ("weights_B", "weights_T_q", "weights_T_k")]
        output = [R.value(src, **where, quantity=q) for q in ("output_B", "output_T", "output_d")]
        out.append(exact("B9", "axes of the weights whose size differs from (B, T, T)", p,
                         mismatched_axes(weights, (B, T, T)), 0, src, cell=weights[0].cell))
        out.append(exact("B9", "axes of the output whose size differs from (B, T, d_k)", p,
                         mismatched_axes(output, (B, T, d)), 0, src, cell=output[0].cell))
        # forward_shape.csv also records whether the forward kept the input dtype: the package's promise (tested
        # with the attention), not the lesson's, whose own forward runs float32 input in float64; not decided here
        out.append(exact("B9", "smallest weight is non-negative", p,
                         R.value(src, **where, quantity="min_weight"), 0, src, relation="not below"))
        err = R.value(src, **where, quantity="max_row_sum_error")
        out.append(Check("B9", "largest |row sum - 1|", p, "not above", 0.0, float(err), "rounding",
                         src, tolerance=_row_sum_bound(T, dtype), cell=err.cell))
    return out
