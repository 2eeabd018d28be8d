"""The diagnosis of a failing function: the mistakes its measured outputs show, each with its fix."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

import sdpa_lab.grading.mistakes as M
import sdpa_lab.grading.scale as S
from sdpa_lab.attention import lesson_entropy
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.claims.standard_errors import product_variance_se, variance_se
from sdpa_lab.numbers import number


def _mistake_line(key: str) -> str:
    m = M.MISTAKES[key]
    return f"mistake: {m.title}: {m.does}. Fix: {m.fix}. Reread {m.reread}."


def _said(variant) -> str:
    """A variant in words: its formula where it has one, and its mistakes' titles."""
    titles = ", ".join(M.MISTAKES[k].title for k in variant.mistakes()) or "no mistake"
    return f"{variant.formula()} ({titles})" if hasattr(variant, "formula") else titles


def _zero_above_diagonal(outcomes) -> int:
    """How many outcomes returned (output, weights) whose weights are all 0 above the diagonal (where there is one
    such entry at least), when every outcome that returned weights does; else 0."""
    seen = 0
    for o in outcomes:
        if not (o.ok and len(o.values) == 2 and o.values[1].ndim >= 2 and min(o.values[1].shape[-2:]) > 1):
            continue
        w = o.values[1]
        if np.any(w[..., np.triu(np.ones(w.shape[-2:], dtype=bool), k=1)] != 0):
            return 0
        seen += 1
    return seen if seen >= 2 else 0


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
        masked = _zero_above_diagonal(outcomes)
        part.diagnosis.append(f"none of the classic mistakes reproduces these outputs: compare your code with "
                              f"{reread} line by line" + (
                                  f"; measured: on all {masked} probes that returned weights, the weights above "
                                  "the diagonal are 0, as a causal mask makes them, which this lesson's forward "
                                  "does not have" if masked else ""))
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


def _uniform_product_moments() -> tuple[float, float, float]:
    """Mean, variance and central fourth moment of u * v, u and v uniform on [0, 1) (np.random.rand):
    E (uv)^k = 1 / (k + 1)^2, so the mean is 1/4 and the variance 1/9 - 1/16 = 7/144."""
    m = [Fraction(1, (k + 1) ** 2) for k in range(5)]  # E (uv)^k
    mu = m[1]
    m4 = m[4] - 4 * m[3] * mu + 6 * m[2] * mu**2 - 3 * mu**4
    return float(mu), float(m[2] - mu**2), float(m4)


UNIFORM_MEAN, UNIFORM_VAR, UNIFORM_M4 = _uniform_product_moments()


def exercise_1_variances(raw: float, scaled: float, d: int, n: int, k: float,
                         draws: Sequence[tuple[float, float]]) -> list[tuple[str, str]]:
    """What Exercise 1's variances show when the raw one is far from d_k: [(mistake, what was measured)] where
    exactly one of the variants below explains both numbers, else [].

    draws: the grader's (raw, scaled) variances of np.random.seed's stream, as the lesson draws it; standard
    deviations are compared with their square roots exactly, and otherwise, as the uniforms of np.random.rand,
    within k standard errors.
    """
    tol = M.tolerance(np.float64)
    se, se_u = variance_se(d, n), product_variance_se(d, n, UNIFORM_VAR, UNIFORM_M4)
    exact_std = any(math.isclose(raw, math.sqrt(r), rel_tol=tol) and math.isclose(scaled, math.sqrt(s), rel_tol=tol)
                    for r, s in draws)
    fits = {
        "standard_deviation": exact_std or (abs(raw**2 - d) <= k * se and abs(scaled**2 - 1) <= k * se / d),
        "uniform_draws": abs(raw - d * UNIFORM_VAR) <= k * se_u and abs(scaled - UNIFORM_VAR) <= k * se_u / d,
    }
    named = [key for key, fit in fits.items() if fit]
    if len(named) != 1:
        return []
    key, m = named[0], M.MISTAKES[named[0]]
    said = {
        "standard_deviation": f"measured: raw {number(raw, digits=4)} and scaled {number(scaled, digits=4)} are about "
        f"the square roots of the expected variances, sqrt(d_k) = {number(math.sqrt(d), digits=4)} and 1"
        + (" (exactly those of the grader's draw)" if exact_std else
           f" (their squares, {number(raw**2, digits=4)} and {number(scaled**2, digits=4)}, are within {k:.2f} SE "
           f"of d_k = {d} and 1)") + ": a standard deviation",
        "uniform_draws": f"measured: raw variance {number(raw, digits=4)} and scaled {number(scaled, digits=4)}, "
        f"within {k:.2f} SE of d_k * 7/144 = {number(d * UNIFORM_VAR, digits=4)} and 7/144 = "
        f"{number(UNIFORM_VAR, digits=3)}: the variances of scores made of uniforms on [0, 1), whose products have "
        "mean 1/4 and variance 7/144 each, where standard normals give d_k and 1",
    }[key]
    return [(key, f"{said}. Mistake: {m.title}: {m.does}. Fix: {m.fix}. Reread {m.reread}.")]


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
