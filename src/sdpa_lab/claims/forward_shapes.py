"""B9: softmax rows are distributions, the forward maps (B, T, d_k) to (B, T, T) weights and a (B, T, d_k) output
(section "The Full Formula, Piece by Piece"), and that output is softmax(Q K^T / sqrt(d_k)) V. Decided on the
lesson's shapes and on a forward where T_q, T_k, d_k and d_v all differ, whose output is held to a reference written
apart from the attention (experiments.forward_shape.reference_forward), relative to the output's own magnitude.
"""

from __future__ import annotations

import math

import numpy as np

from sdpa_lab.claims.model import Check, Claim, exact, mismatched_axes
from sdpa_lab.numbers import number
from sdpa_lab.results import Results

PAGE = "docs/claims/forward-shapes.md"

# The checks, each named once: the name makes the check and keys the lesson's sentence it decides.
WEIGHTS_AXES = "axes of the weights whose size differs from (B, T_q, T_k)"
OUTPUT_AXES = "axes of the output whose size differs from (B, T_q, d_v)"
NON_NEGATIVE, ROW_SUM = "smallest weight is non-negative", "largest |row sum - 1|"
OUTPUT = ("largest |output - softmax(Q K^T / sqrt(d_k)) V| / (softmax(Q K^T / sqrt(d_k)) |V|) (an independent "
          "reference)")

# The lesson's sentences the checks decide, verbatim: the shapes' for the shapes, the formula's for the output.
_ROWS = "After this, every row is non-negative and sums to 1: these are the attention weights, still (B, T, T)."
_SHAPES = "Shapes: $Q, K, V$ are (B, T, d_k); $QK^\\top$ and the weights are (B, T, T); the output is (B, T, d_k)"
_FORMULA = ("$\\text{Attention}(Q, K, V) = \\text{softmax}\\!\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right) V$, four "
            "steps: score, scale, normalize, average")


def _eps(dtype: str) -> float:
    return float(np.finfo(np.dtype(dtype)).eps)


def _row_sum_bound(T: int, dtype: str) -> float:
    """Rounding bound on |sum of a softmax row - 1|: T additions and one division, each within eps."""
    return (T + 1) * _eps(dtype)


def _gamma(n: int, u: float) -> float:
    """Higham's gamma_n = n u / (1 - n u): the relative error bound of a sum of n terms, in any order."""
    return n * u / (1 - n * u)


def output_bound(T_k: int, d_k: int, dtype: str, product_sum: float, value: float, cast: bool = False) -> float:
    """Rounding bound on |output - exact| of softmax(Q K^T / sqrt(d_k)) V in `dtype`, for keys T_k, a bound
    `product_sum` on every sum_i |q_i k_i| and the output's magnitude `value`: the largest |v|, or, element by
    element, sum_j w_j |v_j| (each weight's error is relative, so the sum's is within that times the weighted sum of
    the values' sizes: value = 1 gives the bound relative to the magnitude) (unit roundoff u = eps / 2, an exp within
    4 u):
    a shifted scaled score is off by at most 2 c (gamma_{d_k} + 3 u) product_sum (its dot product and its row's
    maximum, the scale, the product and the shift; c = 1/sqrt(d_k)); a weight then by a relative 2 of that
    + gamma_{T_k} + 10 u (its exp, the row's sum, the division); the output, a weighted sum of T_k values, by that
    + 2 gamma_{T_k}, times the largest |v|. `cast`: Q, K, V were rounded to `dtype` first (two more roundings in
    each product q_i k_i, one more in each value)."""
    u = _eps(dtype) / 2
    n_dot, n_sum = (d_k + 2, T_k + 1) if cast else (d_k, T_k)
    shift = 2 * (_gamma(n_dot, u) + 3 * u) * product_sum / math.sqrt(d_k)
    weight = 2 * shift + _gamma(n_sum, u) + 10 * u
    return (weight + 2 * _gamma(n_sum, u)) * value * (1 + u if cast else 1)


def _shape_text(B: int, T: int, d: int, T_q: int, T_k: int, d_v: int) -> str:
    if (T_q, T_k, d_v) == (T, T, d):
        return f"(B,T,d_k)=({B},{T},{d})"
    return f"(B,T_q,T_k,d_k,d_v)=({B},{T_q},{T_k},{d},{d_v})"


def decide_b9(R: Results) -> list[Check]:
    src = "forward_shape.csv"
    out = []
    for B, T, d, T_q, T_k, d_v, dtype in R.distinct(src, "B", "T", "d_k", "T_q", "T_k", "d_v", "dtype"):
        p = f"{_shape_text(B, T, d, T_q, T_k, d_v)}, {dtype}"
        where = {"B": B, "T": T, "d_k": d, "T_q": T_q, "T_k": T_k, "d_v": d_v, "dtype": dtype}
        weights = [R.value(src, **where, quantity=q) for q in ("weights_B", "weights_T_q", "weights_T_k")]
        output = [R.value(src, **where, quantity=q) for q in ("output_B", "output_T", "output_d")]
        out.append(exact("B9", WEIGHTS_AXES, p,
                         mismatched_axes(weights, (B, T_q, T_k)), 0, src, cell=weights[0].cell))
        out.append(exact("B9", OUTPUT_AXES, p,
                         mismatched_axes(output, (B, T_q, d_v)), 0, src, cell=output[0].cell))
        # forward_shape.csv also records whether the forward kept the input dtype: the package's promise (tested
        # with the attention), not the lesson's, whose own forward runs float32 input in float64; not decided here
        out.append(exact("B9", NON_NEGATIVE, p,
                         R.value(src, **where, quantity="min_weight"), 0, src, relation="not below"))
        err = R.value(src, **where, quantity="max_row_sum_error")
        out.append(Check("B9", ROW_SUM, p, "not above", 0.0, float(err), "rounding",
                         src, tolerance=_row_sum_bound(T_k, dtype), cell=err.cell))
        # the output against the reference of the float64 inputs, which rounds too, relative to the output's
        # magnitude element by element: both bounds (and, for another dtype, the inputs' cast to it), and the
        # reference's once more for the magnitude it divides by (computed in float64 beside it)
        products = float(R.value(src, **where, quantity="max_norm_product"))
        err = R.value(src, **where, quantity="max_relative_output_error")
        bound = (output_bound(T_k, d, dtype, products, 1.0, cast=dtype != "float64")
                 + 2 * output_bound(T_k, d, "float64", products, 1.0))
        out.append(Check("B9", OUTPUT, p, "not above", 0.0, float(err), "rounding", src, tolerance=bound, cell=err.cell,
                         note=f"largest |q| |k| {number(products, digits=3)}"))
    return out


B9 = Claim(
    "B9", "Softmax rows are distributions; the forward's shapes and output",
    "For any B, T, d_k, the forward maps (B, T, d_k) to weights (B, T, T) and output (B, T, d_k), every weight row is "
    "non-negative and sums to 1 up to rounding, and the output is softmax(Q K^T / sqrt(d_k)) V. Decided on the "
    "lesson's shapes and on forwards where T_q, T_k, d_k and d_v all differ: only there can the checks tell the "
    "scale's sqrt(d_k) from sqrt(d_v) or sqrt(T_q), or the axes of Q from those of K.",
    "every row is non-negative and sums to 1; shapes (B, T, d_k) -> (B, T, T) -> (B, T, d_k); "
    "Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V",
    "The Full Formula, Piece by Piece", ("forward_shape.csv",),
    "Shapes exactly. Row sums within (T_k + 1) machine epsilons, a worst-case rounding bound at every T. The output "
    "within a worst-case rounding bound of a float64 reference written apart from the attention (Higham's gamma_n "
    "for each sum of n terms), from the largest |q| |k| measured, relative to the output's magnitude (the weighted "
    "sum of the values' sizes) element by element",
    decide_b9, sentences={WEIGHTS_AXES: _SHAPES, OUTPUT_AXES: _SHAPES, NON_NEGATIVE: _ROWS, ROW_SUM: _ROWS,
                          OUTPUT: _FORMULA}, page=PAGE,
    lead=(ROW_SUM, NON_NEGATIVE))

# This section's claims, gathered by claims/registry.py: a new claim's block goes just above, into this tuple.
CLAIMS = (B9,)
