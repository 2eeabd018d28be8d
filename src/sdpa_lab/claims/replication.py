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
from sdpa_lab.claims.model import Check, exact, mismatched_axes, printed
from sdpa_lab.results import Results


def decide_a1(R: Results) -> list[Check]:
    src = "lesson_variance.csv"
    out = []
    for d, (raw, scaled) in LESSON_VARIANCE.items():
        out.append(printed("A1", "raw score variance", f"d_k={d}",
                           R.value(src, d_k=d, quantity="raw_variance"), raw, 3, src))
        out.append(printed("A1", "scaled score variance", f"d_k={d}",
                           R.value(src, d_k=d, quantity="scaled_variance"), scaled, 4, src))
    return out


def decide_a2(R: Results) -> list[Check]:
    src = "lesson_softmax_collapse.csv"
    out = []
    for j in range(8):
        for quantity, values, places in (("raw_score", LESSON_RAW_SCORES, 2),
                                         ("scaled_score", LESSON_SCALED_SCORES, 2),
                                         ("unscaled_weight", LESSON_UNSCALED_WEIGHTS, 4),
                                         ("scaled_weight", LESSON_SCALED_WEIGHTS, 4)):
            out.append(printed("A2", quantity.replace("_", " "), f"key={j}",
                               R.value(src, quantity=quantity, key=j), values[j], places, src))
    out.append(exact("A2", "unscaled weights one-hot on position", "d_k=256, T=8",
                     R.value(src, quantity="unscaled_argmax"), 5, src))
    for quantity, (value, places) in LESSON_COLLAPSE.items():
        out.append(printed("A2", quantity.replace("_", " "), "d_k=256, T=8", R.value(src, quantity=quantity),
                           value, places, src))
    return out


def decide_a3(R: Results) -> list[Check]:
    src = "lesson_forward.csv"
    out = []
    expected_shapes = {"input_shape": (1, 6, 16), "weights_shape": (1, 6, 6), "output_shape": (1, 6, 16)}
    for quantity, shape in expected_shapes.items():
        got = [R.value(src, quantity=quantity, col=axis) for axis in range(len(shape))]
        out.append(exact("A3", f"axes of the {quantity.split('_')[0]} whose size differs from {shape}",
                         "(B,T,d_k)=(1,6,16)", mismatched_axes(got, shape), 0, src, cell=got[0].cell))
    for i in range(6):
        out.append(printed("A3", "weight row sum", f"row={i}", R.value(src, quantity="row_sum", row=i),
                           1.0, 6, src))
        for j in range(6):
            out.append(printed("A3", "attention weight", f"row={i}, key={j}",
                               R.value(src, quantity="weight", row=i, col=j), LESSON_WEIGHTS_6X6[i][j], 3, src))
    for row, key in LESSON_STRONGEST_LINKS.items():
        keys = R.values(src, "col", quantity="weight", row=row)
        strongest = keys[np.argmax(R.values(src, quantity="weight", row=row))]
        out.append(exact("A3", "key this query attends to most", f"row={row}", strongest, key, src,
                         cell=R.value(src, quantity="weight", row=row, col=key).cell))
    return out
