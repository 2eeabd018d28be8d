"""The diagnosis of a failing function: the mistakes its measured outputs show, each with its fix."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from sdpa_lab.attention import lesson_entropy
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading import scale as S
from sdpa_lab.numbers import number


def _mistake_line(key: str) -> str:
    m = M.MISTAKES[key]
    return f"mistake: {m.title}: {m.does}. Fix: {m.fix}. Reread {m.reread}."


def _said(variant) -> str:
    """A variant in words: its formula where it has one, and its mistakes' titles."""
    titles = ", ".join(M.MISTAKES[k].title for k in variant.mistakes()) or "no mistake"
    return f"{variant.formula()} ({titles})" if hasattr(variant, "formula") else titles


def name_mistakes(part, variants: Sequence, probes, outcomes, reread: str = f'"{M.CANONICAL_FORWARD}"',
                  reading: S.Reading | None = None) -> None:
    """Name the mistakes that reproduce the learner's outputs, once some check of `part` failed.

    reading: the forward's scale, measured (sdpa_lab.grading.scale); it is described first, and named
    even where no variant of the lesson's code reproduces the rest of the outputs.
    """
    if part.passed:
        return
    if M.returns_none(outcomes):  # no formula to compare: nothing came back
        part.mistakes = ["returns_none"]
        part.diagnosis += [f"measured: all {len(probes)} calls returned None", _mistake_line("returns_none")]
        return
    part.diagnosis += S.describe(reading) if reading is not None else []
    d = M.diagnose(variants, [(args, kwargs) for _, args, kwargs in probes], outcomes)
    if d.tied:  # two explanations are none: the outputs are described, no mistake is named
        part.diagnosis.append(
            f"measured: on all {len(probes)} probes your outputs equal each of these, to rounding, so the grader "
            f"names no mistake: {'; '.join(_said(v) for v in d.tied)}. Compare your code "
            f"with {reread} line by line")
        return
    if d.variant is None:
        own = reading.mistakes() if reading is not None else []
        if own:
            part.mistakes = own
            part.diagnosis.append(
                f"no variant of the lesson's code with the mistake{'s' if len(own) > 1 else ''} below reproduces "
                f"every output: something else differs too; compare your code with {reread} line by line"
                if reading.named else "with a scale that changes with the shapes as none of these does, the "
                "lesson's code is not compared for other mistakes: fix the scale, then grade again")
            part.diagnosis += [_mistake_line(key) for key in own]
            return
        part.diagnosis.append(f"none of the classic mistakes reproduces these outputs: compare your code with "
                              f"{reread} line by line")
        return
    if not d.mistakes:
        return
    part.mistakes = list(d.mistakes)
    formula = f" {d.variant.formula()}," if hasattr(d.variant, "formula") else ""
    part.diagnosis.append(f"measured: on all {len(probes)} probes your outputs equal{formula} the lesson's code "
                          f"with the mistake{'s' if len(d.mistakes) > 1 else ''} below, to rounding "
                          "(and raise where it raises), and no other variant with as few mistakes does")
    part.diagnosis += [_mistake_line(key) for key in d.mistakes]


def exercise_1_scale(ratio: float, d: int, n: int) -> list[tuple[str, str]]:
    """The mistake Exercise 1's raw / scaled variance shows, with what was measured: the scores multiplied
    by c scale the variance by c^2, so c = 1 / sqrt(raw / scaled), named by its value ([] if it is right)."""
    if not (math.isfinite(ratio) and ratio > 0):
        return []
    c, shapes, right = 1 / math.sqrt(ratio), S.Shapes(1, n, n, d, d), 1 / math.sqrt(d)
    if S.matches(c, right):
        return []
    # Exercise 1's Q and K are (n_samples, d_k): Q.shape[0] is n_samples. d_k^(1/4) twice is also what
    # dividing the variance (not the scores) by sqrt(d_k) gives: one number, both said.
    candidates = [(k, S.SCALES[k].label, S.SCALES[k].value(shapes), S.SCALES[k].mistake)
                  for k in ("none", "dk", "fourth_root_dk", "times_sqrt_dk")]
    candidates.append(("sqrt_n", "1/sqrt(n_samples) (Q.shape[0])", 1 / math.sqrt(n), "divides_by_sqrt_n"))
    head = (f"measured: raw / scaled = {number(ratio)}, so the scores were multiplied by c = {number(c, digits=4)}, "
            f"where 1/sqrt(d_k) = {number(right, digits=4)}")
    for key, label, value, mistake in candidates:
        if S.matches(c, value):
            also = (" (or the variance, not the scores, was divided by sqrt(d_k): the same number)"
                    if key == "fourth_root_dk" else "")
            m = M.MISTAKES[mistake]
            return [(mistake, f"{head}: {label}{also}. Mistake: {m.title}. Fix: {m.fix}. Reread {m.reread}.")]
    m = M.MISTAKES["other_scale"]
    return [("other_scale", f"{head}: a scale that matches none of 1/sqrt(d_k), "
                            f"{', '.join(label for _, label, _, _ in candidates)}. Fix: {m.fix}. Reread {m.reread}.")]


def _entropy_at(raw: np.ndarray, c: float) -> float:
    return lesson_entropy(reference_softmax(c * raw))


def entropy_scale(raw: np.ndarray, h: float) -> float:
    """c > 0 with the lesson's entropy of softmax(c * raw) equal to h, by bisection on log c (the entropy falls
    as c grows); nan where h lies outside what a positive c reaches."""
    lo, hi = -30.0, 30.0  # log c
    if not (_entropy_at(raw, math.exp(hi)) <= h <= _entropy_at(raw, math.exp(lo))):
        return float("nan")
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _entropy_at(raw, math.exp(mid)) > h else (lo, mid)
    return math.exp((lo + hi) / 2)


def exercise_2_scale(seed: int, d_ks: tuple[int, ...], T: int, h: np.ndarray) -> str:
    """What Exercise 2's entropies show when they are those of softmax(c * Kmat @ q) for one named c other
    than 1 at every d_k (np.random.seed(seed)'s draw, as the lesson draws it), else ""."""
    rs = np.random.RandomState(seed)
    cs = []
    for d_k in d_ks:
        q, K = rs.randn(d_k), rs.randn(T, d_k)
        cs.append(entropy_scale(K @ q, float(h[len(cs)])))
    shapes = [S.Shapes(1, 1, T, d, d) for d in d_ks]
    for key in ("sqrt_dk", "dk", "sqrt_tk", "fourth_root_dk", "times_sqrt_dk"):
        if all(S.matches(c, S.SCALES[key].value(s)) for c, s in zip(cs, shapes, strict=True)):
            label = S.SCALES[key].label
            break
    else:
        constant = float(np.mean(cs))
        if not all(S.matches(c, constant) for c in cs) or S.matches(constant, 1.0):
            return ""
        label = "a constant"
    each = ", ".join(number(c, digits=4) for c in cs)
    return (f"measured: your entropies are those of softmax(c * Kmat @ q) with c = {label} (c = {each} at d_k = "
            f"{', '.join(map(str, d_ks))}): the exercise takes the softmax of the unscaled raw scores Kmat @ q, "
            "c = 1")
