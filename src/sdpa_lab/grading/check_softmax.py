"""The learner's softmax graded: on probe inputs drawn from the grade's seed, against the reference softmax
(sdpa_lab.attention), its mistake named from the measured outputs.
"""

from __future__ import annotations

import numpy as np

import sdpa_lab.grading.mistakes as M
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.grading.diagnosis import name_mistakes as _diagnose
from sdpa_lab.grading.parts import (
    Draw,
    Part,
    call_probes,
    dtype_note,
    first_error,
    from_failures,
    shape_text,
    why_unusable,
)
from sdpa_lab.grading.runner import Calls
from sdpa_lab.numbers import number
from sdpa_lab.seeding import stream

SOFTMAX_SECTION = f'"{M.FULL_FORMULA}" (Step 3: the numerically stable softmax)'


def softmax_probes(seed: int = 0) -> list[tuple[str, tuple, dict]]:
    """(name, args, kwargs) of each softmax call, drawn from the grade's seed."""
    rng = stream(seed, "grading-softmax")
    x = rng.standard_normal((3, 7))
    return [
        ("x of shape (3, 7)", (x,), {}),
        ("x of shape (4, 6), axis=0", (rng.standard_normal((4, 6)),), {"axis": 0}),
        ("x of shape (2, 3, 5), axis=1", (rng.standard_normal((2, 3, 5)),), {"axis": 1}),
        ("large x: the (3, 7) one times 1000", (x * 1000,), {}),
        ("float32 x of shape (3, 7)", (x.astype(np.float32),), {}),
        # Each row's softmax is that of x; an array-wide max leaves the low row's exp all 0.
        ("rows far apart: the (3, 7) x plus 0, 800 and -800 by row", (x + np.array([[0.0], [800.0], [-800.0]]),),
         {}),
    ]


def grade_softmax(call: Calls, draw: Draw | None = None) -> Part:
    """softmax on the probes: shape, rows that sum to 1, the reference's values, large inputs; the mistake named."""
    part = Part("softmax", "softmax(x, axis=-1)")
    probes = softmax_probes(draw.seed if draw is not None else 0)
    outcomes = call_probes(call, probes, part)
    if outcomes is None:
        return part
    names = [p[0] for p in probes]
    first_error(part, names, outcomes)

    shape, rows, agree, finite = [], [], [], []
    worst_sum = worst_diff = 0.0
    for (name, (x,), kwargs), o in zip(probes, outcomes, strict=True):
        why = why_unusable(name, o, None)
        p, axis = (o.values[0], kwargs.get("axis", -1)) if why is None else (None, None)
        if why is None and p.shape != x.shape:
            why = f"shape {shape_text(p)} for x of shape {shape_text(x)} on {name}"
        if why:
            shape.append(why)
            rows.append(f"not measured on {name}")
            agree.append(f"not measured on {name}")
            finite.append(f"not measured on {name}")
            continue
        with np.errstate(all="ignore"):
            off = float(np.max(np.abs(p.sum(axis=axis, dtype=np.float64) - 1.0)))
        if not (np.all(p >= 0) and off <= M.tolerance(x.dtype)):
            rows.append(f"on {name}: min {number(np.min(p), digits=3)}, largest |sum - 1| = {number(off, digits=3)} "
                        f"along axis {axis}")
        worst_sum = max(worst_sum, off)
        diff = M.max_difference(p, reference_softmax(x, axis=axis))
        if diff > M.tolerance(x.dtype):
            agree.append(f"on {name}: largest difference {number(diff, digits=3)}")
        worst_diff = max(worst_diff, diff)
        if np.abs(x).max() > 100 and not np.all(np.isfinite(p)):
            finite.append(f"{int(np.sum(~np.isfinite(p)))} non-finite values (inf or nan) on {name}")
    f32 = outcomes[4]
    part.checks = [
        from_failures("B9", "returns one array of x's shape", shape, f"on all {len(probes)} probes"),
        from_failures("B9", "non-negative, sums to 1 along `axis` (including axis=0 and axis=1)", rows,
                      f"largest |sum - 1| = {number(worst_sum, digits=2)}"),
        from_failures("", "agrees with the reference softmax (sdpa_lab.attention)", agree,
                      f"largest relative difference {number(worst_diff, digits=2)}"),
        from_failures("", "large inputs (up to about 3000, rows 1600 apart): no overflow, no nan", finite, "finite"),
    ]
    dtype_note(part, [str(f32.values[0].dtype)] if f32.ok and len(f32.values) == 1 else [])
    _diagnose(part, M.SOFTMAX_VARIANTS, probes, outcomes, reread=SOFTMAX_SECTION)
    return part
