"""Exercise 2 graded: the entropies of one query's softmax weights per d_k (B5), and the draw against the
grader's; called on the lesson's values and on the grade's own, as every exercise (see check_exercise_1).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from sdpa_lab.attention import lesson_entropy
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading.diagnosis import exercise_2_scale
from sdpa_lab.grading.parts import Draw, Part, SolutionCheck, floats, fresh_seed, on, same_values, stopped
from sdpa_lab.grading.runner import Calls
from sdpa_lab.numbers import listed
from sdpa_lab.seeding import LESSON_SEED

EXERCISE2_D_K = (4, 16, 64, 256)
EXERCISE2_T = 8


@cache
def exercise2_reference(seed: int, d_ks: tuple[int, ...], T: int, reseed: bool) -> dict[str, np.ndarray]:
    """Exercise 2 after np.random.seed(seed): per d_k one query against T keys, entropy of the softmax weights.

    One stream for all d_k (the lesson's pattern), or reseeded before each d_k.
    Returns the unscaled and scaled entropies, the lesson's -sum p log(p + 1e-12).
    """
    rs = np.random.RandomState(seed)
    out = {"unscaled": [], "scaled": []}
    for d_k in d_ks:
        if reseed:
            rs = np.random.RandomState(seed)
        q, K = rs.randn(d_k), rs.randn(T, d_k)  # (d_k,), (T, d_k)
        raw = K @ q  # (T,)
        out["unscaled"].append(lesson_entropy(reference_softmax(raw)))
        out["scaled"].append(lesson_entropy(reference_softmax(raw / np.sqrt(d_k))))
    return {k: np.array(v) for k, v in out.items()}


def grade_exercise_2(call: Calls, draw: Draw | None = None) -> Part:
    """Exercise 2 at the lesson's seed 42, d_k = 4, 16, 64, 256 and 8 keys, then at the grade's own."""
    draw = draw if draw is not None else Draw(fresh_seed())
    part = Part("exercise_2", "exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8) -> unscaled entropies, one per d_k")
    other_d_ks, other_T = draw.exercise_2
    for label, seed, d_ks, T in (("the lesson's seed 42, d_k = 4, 16, 64, 256, T = 8", LESSON_SEED,
                                  EXERCISE2_D_K, EXERCISE2_T),
                                 (f"seed {draw.seed}, d_k = {', '.join(map(str, other_d_ks))}, T = {other_T}",
                                  draw.seed, other_d_ks, other_T)):
        o = call(seed=seed, d_ks=list(d_ks), T=T)
        if stopped(part, call, o, "B5", on(label, f"returns {len(d_ks)} entropies")):
            return part
        h = floats(o)
        bound = math.log(T)  # -sum p log(p + 1e-12) dips to -1e-12 when one weight is 1: the lower bound allows it
        shape_ok = h.shape == (len(d_ks),) and bool(np.all(np.isfinite(h)))
        part.checks.append(SolutionCheck("B5", on(label, f"returns {len(d_ks)} entropies, one per d_k, each between "
                                                         f"0 and log {T}"),
                                         shape_ok and bool(np.all((h >= -1e-11) & (h <= bound + 1e-12))),
                                         listed(h.ravel())))
        if not shape_ok:
            continue
        ref = exercise2_reference(seed, tuple(d_ks), T, reseed=False)
        same = same_values(h, ref["unscaled"], 1e-9)  # the lesson's log(p + 1e-12) and an exact entropy: 8e-12 apart
        part.checks.append(SolutionCheck("B5", on(label, f"the draw: np.random.seed({seed}) once, then per d_k "
                                                         f"q = randn(d_k), Kmat = randn({T}, d_k)"), same,
                                         "equal to the grader's draw" if same else "not the entropies of that draw"))
        if not same and not part.mistakes and (says := exercise_2_scale(seed, tuple(d_ks), T, h)):
            part.mistakes.append("scaled_entropies")  # the scale, measured from the entropies and named by value
            part.diagnosis.append(f'{says}. Reread "{M.EXERCISE_2}" and "{M.LARGE_SCORES}".')
        if not same and not part.mistakes:
            for other, key, says in (
                    (exercise2_reference(seed, tuple(d_ks), T, reseed=True)["unscaled"], "reseeded",
                     "the stream is reseeded before each d_k: seed once, before the loop, so the draws continue "
                     "as in the lesson"),
                    (ref["unscaled"] / math.log(2), "bits", "the entropies are in bits (log2): the lesson uses the "
                     "natural log, np.log"),
                    (ref["unscaled"] / T, "entropy_mean", f"your entropies are the right ones divided by T = {T}: "
                     f"a mean instead of a sum? Mistake: {M.MISTAKES['entropy_mean'].title}. Fix: "
                     f"{M.MISTAKES['entropy_mean'].fix}")):
                if same_values(h, other, 1e-6):
                    part.mistakes.append(key)
                    part.diagnosis.append(f'measured: {says}. Reread "{M.EXERCISE_2}" and "{M.LARGE_SCORES}".')
        if seed == LESSON_SEED and same and np.any(np.diff(h) > 0):  # only where the entropies are the draw's
            part.notes.append("the entropy does not fall at every step: one draw need not (B5's caveat; the "
                              "lesson's own draw rises from d_k = 4 to 16). B5 is decided on the mean over many "
                              "draws")
    return part
