"""The learner's scaled_dot_product_attention graded: the lesson's inputs and the grade's own, against the
reference forward and the lesson's printed weights; where it fails, again with a correct softmax in its place.
"""

from __future__ import annotations

import numpy as np

import sdpa_lab.grading.mistakes as M
import sdpa_lab.grading.scale as S
from sdpa_lab.attention import scaled_dot_product_attention as reference_attention
from sdpa_lab.claims.lesson_numbers import LESSON_WEIGHTS_6X6
from sdpa_lab.experiments.replication import A3_SHAPE
from sdpa_lab.grading.diagnosis import name_mistakes as _diagnose
from sdpa_lab.grading.parts import (
    Draw,
    Part,
    SolutionCheck,
    call_probes,
    dtype_note,
    first_error,
    from_failures,
    shape_text,
    softmax_note,
    why_unusable,
)
from sdpa_lab.grading.runner import Calls, Outcome
from sdpa_lab.numbers import number
from sdpa_lab.seeding import lesson_default_rng, stream


def attention_probes(seed: int = 0) -> list[tuple[str, tuple, dict]]:
    """(name, (Q, K, V), {}) of each forward call: the lesson's inputs first, then draws from the grade's seed."""
    rng = lesson_default_rng()
    lesson = tuple(rng.standard_normal(A3_SHAPE) for _ in "QKV")  # Q, K, V in the lesson's order
    rng = stream(seed, "grading-attention")
    batch = tuple(rng.standard_normal((3, 5, 8)) for _ in "QKV")
    rect = (rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 7, 8)), rng.standard_normal((2, 7, 3)))
    cube = tuple(rng.standard_normal((4, 4, 4)) for _ in "QKV")  # where K.T still multiplies
    large = (batch[0][:2] * 60, batch[1][:2] * 60, batch[2][:2])  # scores in the thousands
    f32 = tuple(a[:2].astype(np.float32) for a in batch)
    return [
        ("the lesson's inputs (default_rng(42) Q, K, V of (1, 6, 16))", lesson, {}),
        ("Q, K, V of (3, 5, 8)", batch, {}),
        ("Q (2, 4, 8), K (2, 7, 8), V (2, 7, 3): T_q != T_k, d_v != d_k", rect, {}),
        ("Q, K, V of (4, 4, 4)", cube, {}),
        ("large scores: Q and K of (2, 5, 8) times 60", large, {}),
        ("float32 Q, K, V of (2, 5, 8)", f32, {}),
    ]


def _attention_checks(probes, outcomes) -> tuple[list[SolutionCheck], list[str]]:
    """The forward's checks on its outcomes, and the dtypes of its float32 probe's outputs ([] if unusable)."""
    names = [p[0] for p in probes]
    shapes, rows, agree, good = [], [], [], {}
    worst_sum = worst_diff = 0.0
    for i, ((name, (Q, K, V), _), o) in enumerate(zip(probes, outcomes, strict=True)):
        why = why_unusable(name, o, 2)
        want_out, want_w = (*Q.shape[:-1], V.shape[-1]), (*Q.shape[:-1], K.shape[-2])
        if why is None:
            out, w = o.values
            if out.shape != want_out or w.shape != want_w:
                why = (f"output {shape_text(out)}, weights {shape_text(w)} on {name}; expected output "
                       f"({', '.join(map(str, want_out))}), weights ({', '.join(map(str, want_w))})")
        if why:
            shapes.append(why)
            rows.append(f"not measured on {name}")
            agree.append(f"not measured on {name}")
            continue
        good[i] = (out, w)
        with np.errstate(all="ignore"):
            off = float(np.max(np.abs(w.sum(axis=-1, dtype=np.float64) - 1.0)))
        if not (np.all(w >= 0) and off <= M.tolerance(Q.dtype)):
            rows.append(f"on {name}: min weight {number(np.min(w), digits=3)}, largest |row sum - 1| = "
                        f"{number(off, digits=3)}")
        worst_sum = max(worst_sum, off)
        ref_out, ref_w = reference_attention(Q, K, V)
        diff = max(M.max_difference(out, ref_out), M.max_difference(w, ref_w))
        if diff > M.tolerance(Q.dtype):
            agree.append(f"on {name}: largest relative difference {number(diff, digits=3)}")
        worst_diff = max(worst_diff, diff)

    if 0 in good:
        printed = np.array(LESSON_WEIGHTS_6X6)
        dev = np.abs(good[0][1][0] - printed)
        a3 = [] if np.all(dev <= 0.0005) else [
            f"{int(np.sum(dev > 0.0005))} of 36 entries of weights[0] differ from the printed matrix "
            f"by more than 0.0005 (largest {number(dev.max(), decimals=3)})"]
    else:
        a3 = ["no (1, 6, 6) weights on the lesson's inputs"]
    large = good.get(4)
    checks = [
        from_failures("B9", "shapes: Q (B, T_q, d_k) -> weights (B, T_q, T_k), output (B, T_q, d_v)", shapes,
                      f"on all {len(probes)} probes"),
        from_failures("A3", "the lesson's printed forward: weights[0] on default_rng(42) Q, K, V of (1, 6, 16), "
                      "to the 3 places printed", a3, "all 36 entries"),
        from_failures("B9", "weight rows are non-negative and sum to 1", rows,
                      f"largest |row sum - 1| = {number(worst_sum, digits=2)}"),
        from_failures("", "agrees with the reference forward (sdpa_lab.attention), batches, T_q != T_k, d_v != d_k",
                      agree, f"largest relative difference {number(worst_diff, digits=2)}"),
        from_failures("", "large scores: no overflow, no nan",
                      [] if large is not None and all(np.all(np.isfinite(a)) for a in large) else
                      [f"no usable output on {names[4]}" if large is None else f"non-finite values on {names[4]}"],
                      "finite"),
    ]
    return checks, [str(v.dtype) for v in good[5]] if 5 in good else []


def _same_outcomes(a: list[Outcome], b: list[Outcome]) -> bool:
    """Whether two runs of the probes came to the same: the same statuses and bit-identical arrays."""
    return all(x.status == y.status and len(x.values) == len(y.values)
               and all(u.dtype == v.dtype and u.shape == v.shape and np.array_equal(u, v, equal_nan=True)
                       for u, v in zip(x.values, y.values, strict=True))
               for x, y in zip(a, b, strict=True))


def grade_attention(call: Calls, draw: Draw | None = None) -> Part:
    """The forward on the probes; where it fails, again with a correct softmax in place of the file's, so the
    forward is blamed only for what it gets wrong with a correct helper."""
    part = Part("scaled_dot_product_attention", "scaled_dot_product_attention(Q, K, V) -> (output, weights)")
    probes = attention_probes(draw.seed if draw is not None else 0)
    outcomes = call_probes(call, probes, part)
    if outcomes is None:
        return part
    part.checks, dtypes = _attention_checks(probes, outcomes)
    if not part.passed:
        again = call_probes(call, probes, part, reference_softmax=True)
        if again is None:
            return part
        if not _same_outcomes(outcomes, again):  # the forward calls the file's softmax, and it changed the outputs
            own, own_dtypes = _attention_checks(probes, again)
            part.notes.append(softmax_note(part.name, [c.what for c in part.checks if not c.passed],
                                           all(c.passed for c in own)))
            outcomes, part.checks, dtypes = again, own, own_dtypes
    names = [p[0] for p in probes]
    first_error(part, names, outcomes)
    dtype_note(part, dtypes, lesson=[str(a.dtype) for a in M.Attention(upcast=True)(*probes[5][1])])
    reading = S.read(probes, outcomes)  # the scale, named by its measured value
    _diagnose(part, M.forward_variants(reading), probes, outcomes, reading=reading)
    return part
