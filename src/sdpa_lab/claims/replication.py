"""A1-A3: the lesson's printed numbers, reproduced with its own seeds (sections "Proving It", "Why Large
Scores Break Softmax" and "The Canonical Forward in NumPy").
"""

from __future__ import annotations

import numpy as np

from sdpa_lab.claims.lesson_numbers import (
    LESSON_COLLAPSE,
    LESSON_RAW_SCORES,
    LESSON_SCALED_SCORES,
    LESSON_SCALED_WEIGHTS,
    LESSON_STRONGEST_LINKS,
    LESSON_UNSCALED_WEIGHTS,
    LESSON_VARIANCE,
    LESSON_WEIGHTS_6X6,
)
from sdpa_lab.claims.model import Check, Claim, exact, mismatched_axes, printed
from sdpa_lab.results import Results

PAGE = "docs/claims/replication.md"

# The checks, each named once: the name makes the check and keys the lesson's sentence it decides.
RAW_VARIANCE, SCALED_VARIANCE = "raw score variance", "scaled score variance"  # A1
RAW_SCORE, SCALED_SCORE = "raw score", "scaled score"  # A2
UNSCALED_WEIGHT, SCALED_WEIGHT = "unscaled weight", "scaled weight"
ONE_HOT = "unscaled weights one-hot on position"
COLLAPSE = {"unscaled_max_weight": "unscaled max weight", "unscaled_entropy": "unscaled entropy",  # LESSON_COLLAPSE's
            "scaled_max_weight": "scaled max weight", "scaled_entropy": "scaled entropy",
            "uniform_entropy": "uniform entropy"}
AXES = {"input_shape": "axes of the input whose size differs from (1, 6, 16)",  # A3
        "weights_shape": "axes of the weights whose size differs from (1, 6, 6)",
        "output_shape": "axes of the output whose size differs from (1, 6, 16)"}
ROW_SUM, WEIGHT, STRONGEST = "weight row sum", "attention weight", "key this query attends to most"

# The lesson's sentences the checks decide, verbatim.
_PRINTED_VARIANCE = "d_k | var(raw scores) | var(scores / sqrt(d_k))"
_PRINTED_COLLAPSE = "unscaled max weight = 1.0000  entropy = 0.0003"
_PRINTED_SCORES = "raw_scores      : [ -3.12  13.41 -27.    12.41   2.39  24.29  -1.23  -2.77]"
_FORWARD = ("Match that against the formula. $Q$, $K$, $V$ came in at (1, 6, 16); the $QK^\\top$ comparison produced "
            "a (1, 6, 6) score table; softmax over the last axis normalized every row (each sums to 1.0, confirmed); "
            "and the weighted average of the values left at (1, 6, 16).")
_STRONGEST = ("Because the scores were scaled, the weights are differentiated but not collapsed, position 1 leans on "
              "key 1 (weight 0.606)")


def decide_a1(R: Results) -> list[Check]:
    src = "lesson_variance.csv"
    out = []
    for d, (raw, scaled) in LESSON_VARIANCE.items():
        out.append(printed("A1", RAW_VARIANCE, f"d_k={d}",
                           R.value(src, d_k=d, quantity="raw_variance"), raw, 3, src))
        out.append(printed("A1", SCALED_VARIANCE, f"d_k={d}",
                           R.value(src, d_k=d, quantity="scaled_variance"), scaled, 4, src))
    return out


def decide_a2(R: Results) -> list[Check]:
    src = "lesson_softmax_collapse.csv"
    out = []
    for j in range(8):
        for quantity, check, values, places in (("raw_score", RAW_SCORE, LESSON_RAW_SCORES, 2),
                                                ("scaled_score", SCALED_SCORE, LESSON_SCALED_SCORES, 2),
                                                ("unscaled_weight", UNSCALED_WEIGHT, LESSON_UNSCALED_WEIGHTS, 4),
                                                ("scaled_weight", SCALED_WEIGHT, LESSON_SCALED_WEIGHTS, 4)):
            out.append(printed("A2", check, f"key={j}",
                               R.value(src, quantity=quantity, key=j), values[j], places, src))
    out.append(exact("A2", ONE_HOT, "d_k=256, T=8",
                     R.value(src, quantity="unscaled_argmax"), 5, src))
    for quantity, (value, places) in LESSON_COLLAPSE.items():
        out.append(printed("A2", COLLAPSE[quantity], "d_k=256, T=8", R.value(src, quantity=quantity),
                           value, places, src))
    return out


def decide_a3(R: Results) -> list[Check]:
    src = "lesson_forward.csv"
    out = []
    expected_shapes = {"input_shape": (1, 6, 16), "weights_shape": (1, 6, 6), "output_shape": (1, 6, 16)}
    for quantity, shape in expected_shapes.items():
        got = [R.value(src, quantity=quantity, col=axis) for axis in range(len(shape))]
        out.append(exact("A3", AXES[quantity],
                         "(B,T,d_k)=(1,6,16)", mismatched_axes(got, shape), 0, src, cell=got[0].cell))
    for i in range(6):
        out.append(printed("A3", ROW_SUM, f"row={i}", R.value(src, quantity="row_sum", row=i),
                           1.0, 6, src))
        for j in range(6):
            out.append(printed("A3", WEIGHT, f"row={i}, key={j}",
                               R.value(src, quantity="weight", row=i, col=j), LESSON_WEIGHTS_6X6[i][j], 3, src))
    for row, key in LESSON_STRONGEST_LINKS.items():
        keys = R.values(src, "col", quantity="weight", row=row)
        strongest = keys[np.argmax(R.values(src, quantity="weight", row=row))]
        out.append(exact("A3", STRONGEST, f"row={row}", strongest, key, src,
                         cell=R.value(src, quantity="weight", row=row, col=key).cell))
    return out


A1 = Claim(
    "A1", "The lesson's variance table, reproduced",
    "With the lesson's own seed and single random stream, the raw score variances for d_k = 4, 16, 64, 256 come out "
    "as the lesson printed them, and so do the variances after dividing by sqrt(d_k).",
    "raw 3.988, 15.891, 64.249, 256.391; scaled 0.9971, 0.9932, 1.0039, 1.0015",
    "Proving It: Score Variance Tracks d_k", ("lesson_variance.csv",),
    "The lesson's printed precision: half a unit in the last printed digit. The lesson's own seeds and sizes are "
    "used, so no config reaches it",
    decide_a1, sentences={RAW_VARIANCE: _PRINTED_VARIANCE, SCALED_VARIANCE: _PRINTED_VARIANCE}, page=PAGE,
    lead=(RAW_VARIANCE, SCALED_VARIANCE))

A2 = Claim(
    "A2", "The lesson's softmax collapse at d_k = 256, reproduced",
    "For one query against 8 keys at d_k = 256 (lesson seed), the raw scores, both softmaxes, their maximum weights "
    "and entropies come out as printed: unscaled, all weight on position 5; scaled, spread out.",
    "raw scores [-3.12 13.41 -27. 12.41 2.39 24.29 -1.23 -2.77]; unscaled max weight 1.0000, entropy 0.0003; "
    "scaled max weight 0.3514, entropy 1.7909; uniform log 8 = 2.0794",
    "Why Large Scores Break Softmax", ("lesson_softmax_collapse.csv",),
    "The lesson's printed precision: half a unit in the last printed digit; the one-hot position exactly",
    decide_a2, sentences={**dict.fromkeys((RAW_SCORE, SCALED_SCORE, UNSCALED_WEIGHT, SCALED_WEIGHT, ONE_HOT),
                                          _PRINTED_SCORES),
                          **dict.fromkeys(COLLAPSE.values(), _PRINTED_COLLAPSE)}, page=PAGE,
    lead=tuple(COLLAPSE.values())[:4])

A3 = Claim(
    "A3", "The lesson's forward on (1, 6, 16), reproduced",
    "The forward with default_rng(42) maps (1, 6, 16) to weights (1, 6, 6) and output (1, 6, 16); every weight row "
    "sums to 1; the 6x6 weights match the printed matrix; query 1 attends most to key 1 and query 5 to key 2.",
    "shapes (1,6,16) -> (1,6,6) -> (1,6,16); row sums 1; strongest links 0.606 (row 1 -> key 1) and 0.496 "
    "(row 5 -> key 2)",
    "The Canonical Forward in NumPy", ("lesson_forward.csv",),
    "Shapes and strongest links exactly; weights and row sums at the lesson's printed precision",
    decide_a3, sentences={**dict.fromkeys((*AXES.values(), ROW_SUM), _FORWARD), WEIGHT: _STRONGEST,
                          STRONGEST: _STRONGEST}, page=PAGE, lead=(ROW_SUM, STRONGEST))

# This section's claims, gathered by claims/registry.py: a new claim's block goes just above, into this tuple.
CLAIMS = (A1, A2, A3)
