"""B9: the forward maps (B, T, d_k) -> weights (B, T, T) -> output (B, T, d_k), rows summing to 1; and its output
is softmax(Q K^T / sqrt(d_k)) V, checked against a reference written apart from the attention, on the lesson's
shapes and on shapes where T_q, T_k, d_k and d_v all differ (a forward run only with d_v = d_k cannot tell sqrt(d_k)
from sqrt(d_v), one with T_q = d_k sqrt(d_k) from sqrt(T_q), nor one with T_q = T_k the axes of Q from those of K)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention
from sdpa_lab.experiments.declaration import Experiment, Output
from sdpa_lab.seeding import stream
from sdpa_lab.tables import Rows
from sdpa_lab.validation import check_seed, check_shapes, forward_size_problem, other_dimensions

DTYPES = ("float64", "float32")
# What is measured per forward and dtype, one row each, in this order.
QUANTITIES = ("weights_B", "weights_T_q", "weights_T_k", "output_B", "output_T", "output_d", "output_ndim",
              "weights_ndim", "dtype_kept", "max_row_sum_error", "min_weight", "all_finite",
              "max_relative_output_error", "max_norm_product")
# Queries the reference takes at a time: its (rows, T_k) blocks stay small beside the forward's own arrays.
REFERENCE_ROWS = 256


def reference_forward(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """softmax(Q K^T / sqrt(d_k)) V in float64 for Q (B, T_q, d_k), K (B, T_k, d_k), V (B, T_k, d_v), written out
    apart from sdpa_lab.attention (its own scale from Q's last axis, softmax and products), REFERENCE_ROWS queries at
    a time -> (B, T_q, d_v); and the output's magnitude softmax(...) |V| (B, T_q, d_v), which bounds its rounding."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    c = 1.0 / math.sqrt(Q.shape[-1])
    out, magnitude = np.empty((2, *Q.shape[:-1], V.shape[-1]))
    for b in range(Q.shape[0]):
        for start in range(0, Q.shape[1], REFERENCE_ROWS):
            s = (Q[b, start:start + REFERENCE_ROWS] @ K[b].T) * c  # (rows, T_k)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            total = e.sum(axis=1, keepdims=True)
            out[b, start:start + REFERENCE_ROWS] = (e @ V[b]) / total  # (rows, d_v)
            magnitude[b, start:start + REFERENCE_ROWS] = (e @ np.abs(V[b])) / total
    return out, magnitude


def max_norm_product(Q: np.ndarray, K: np.ndarray) -> float:
    """The largest |q| |k| (Euclidean norms) of a query and a key of one batch entry: it bounds every
    sum_i |q_i k_i| (Cauchy-Schwarz), the size of the scores' rounding, without a second (T_q, T_k) product."""
    norm = lambda a: np.sqrt(np.sum(np.square(a, dtype=np.float64), axis=-1)).max(axis=-1)  # noqa: E731 (B,)
    return float(np.max(norm(Q) * norm(K)))


def _measured(Q, K, V, dtype: str, reference: tuple[np.ndarray, np.ndarray], attention: Attention) -> dict:
    """The quantities of one forward (`attention`'s) of float64 Q, K, V cast to `dtype`; `reference`:
    reference_forward(Q, K, V), the uncast inputs' (B9's bound for float32 counts the cast's rounding). The output's
    error is relative to its magnitude, element by element: the rounding of a weighted sum of values scales with
    the weighted sum of their sizes, not with the largest value."""
    reference, magnitude = reference
    out, weights = attention.forward(*(a.astype(dtype) for a in (Q, K, V)))
    row_sums = weights.sum(axis=-1, dtype=np.float64)  # (B, T_q)
    comparable = out.shape == reference.shape and bool(np.isfinite(out).all())
    return {
        "weights_B": weights.shape[0], "weights_T_q": weights.shape[1], "weights_T_k": weights.shape[2],
        "output_B": out.shape[0], "output_T": out.shape[1], "output_d": out.shape[2],
        "output_ndim": out.ndim, "weights_ndim": weights.ndim,
        "dtype_kept": float(out.dtype == np.dtype(dtype) and weights.dtype == np.dtype(dtype)),
        "max_row_sum_error": float(np.max(np.abs(row_sums - 1.0))),
        "min_weight": float(weights.min()),
        "all_finite": float(np.isfinite(out).all() and np.isfinite(weights).all()),
        # an output of the wrong shape, or not finite, is as far from the reference as a finite CSV cell can say
        "max_relative_output_error": (float(np.max(np.abs(out.astype(np.float64) - reference) / magnitude))
                                      if comparable else float(np.finfo(np.float64).max)),
    }


def _input_bounds(Q, K, V) -> dict:
    """The float64 inputs' size B9's rounding bound reads: the same for every dtype the inputs are cast to."""
    return {"max_norm_product": max_norm_product(Q, K)}


def forward_shape_rows(seed: int, shapes: Sequence[Sequence[int]], attention: Attention = SHIPPED) -> Rows:
    """For each (B, T, d_k) and dtype: the shapes, dtype, row sums and output error of one seeded forward of
    `attention` with Q, K, V (B, T, d_k), and of one with Q (B, T_q, d_k), K (B, T_k, d_k), V (B, T_k, d_v)
    (other_dimensions: all four different)."""
    seed, shapes = check_seed(seed), check_shapes(shapes, "shapes")
    for i, shape in enumerate(shapes):
        if problem := forward_size_problem(shape):
            raise ValueError(f"shapes[{i}] = {list(shape)}: {problem}")
    rows = []
    for B, T, d_k in shapes:
        for T_q, T_k, d_v in ((T, T, d_k), other_dimensions(T, d_k)):  # one forward's arrays held at a time
            Q, K, V = _inputs(seed, B, T, d_k, (T_q, T_k, d_v))
            reference, bounds = reference_forward(Q, K, V), _input_bounds(Q, K, V)  # once per forward, not per dtype
            for dtype in DTYPES:
                measured = _measured(Q, K, V, dtype, reference, attention) | bounds
                for quantity in QUANTITIES:
                    rows.append({"seed": seed, "B": B, "T": T, "d_k": d_k, "T_q": T_q, "T_k": T_k, "d_v": d_v,
                                 "dtype": dtype, "quantity": quantity, "value": float(measured[quantity])})
    return rows


def _inputs(seed: int, B: int, T: int, d_k: int, other: tuple[int, int, int]) -> tuple[np.ndarray, ...]:
    """Q (B, T_q, d_k), K (B, T_k, d_k), V (B, T_k, d_v) for other = (T_q, T_k, d_v), drawn in that order: the
    lesson's shapes (T, T, d_k) from stream(seed, "forward_shape", B, T, d_k), any other from a stream of its own
    (named by T_k and d_v, and by T_q too where it is not T)."""
    T_q, T_k, d_v = other
    rng = stream(seed, "forward_shape", B, T, d_k,
                 *(() if other == (T, T, d_k) else other[1:] if T_q == T else other))
    return rng.standard_normal((B, T_q, d_k)), rng.standard_normal((B, T_k, d_k)), rng.standard_normal((B, T_k, d_v))


def forward_shape_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows forward_shape_tables makes from `settings`: one per shape, forward (two), dtype and quantity."""
    return {"table": len(settings["shapes"]) * 2 * len(DTYPES) * len(QUANTITIES)}


def forward_shape_tables(settings: Mapping, trial_scores: Mapping[int, str],
                         attention: Attention = SHIPPED) -> dict[str, Rows]:
    """The forward-shape experiment's table (registry.EXPERIMENTS["forward_shape"]) of `attention`'s forward."""
    return {"table": forward_shape_rows(settings["seed"], settings["shapes"], attention)}


# The experiment this module declares: the registry (experiments/registry.py) gathers it.
def forward_shape_work(settings: Mapping) -> dict[str, float]:
    """The cost model's work (DECLARED's `work`): at each (B, T, d_k), the lesson-shaped forward and the one where
    every dimension differs (validation.other_dimensions), each in float64 and float32 and against a float64
    reference: the multiply-adds of the score and output products, the weights, the normals drawn, the reference's
    (256, T_k) blocks of queries, and the shapes (each a few small calls)."""
    terms = {"flop": 0, "weight": 0, "normal": 0, "reference_block": 0, "shape": 0}
    for B, T, d_k in settings["shapes"]:
        T_q, T_k, d_v = other_dimensions(T, d_k)
        terms["flop"] += B * T * T * 2 * d_k + B * T_q * T_k * (d_k + d_v)
        terms["weight"] += B * (T * T + T_q * T_k)
        terms["normal"] += 3 * B * T * d_k + B * (T_q * d_k + T_k * (d_k + d_v))
        terms["reference_block"] += B * (-(-T // 256) - (-T_q // 256))
        terms["shape"] += 1
    return terms


DECLARED = (
    Experiment(
        "forward_shape", "sdpa_lab.experiments.forward_shape:forward_shape_tables",
        {"table": Output("forward_shape.csv",
                         {"seed": "int", "B": "int", "T": "int", "d_k": "int", "T_q": "int", "T_k": "int",
                          "d_v": "int", "dtype": "str", "quantity": "str", "value": "float"},
                         {"seed": "seed", "shapes": ("B", "T", "d_k")})},
        claims=("B9",), section="forward_shape",
        row_counts="sdpa_lab.experiments.forward_shape:forward_shape_row_counts",
        work="sdpa_lab.experiments.forward_shape:forward_shape_work",
        ns_per={"flop": 0.0471, "weight": 18.1, "normal": 29.6, "reference_block": 6560.0, "shape": 4.18e+05}),
)
