"""Exercise 2 graded: the entropies of one query's softmax weights per d_k (B5), and the draw against the
grader's; called on the lesson's values and on the grade's own, as every exercise (see check_exercise_1).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

import sdpa_lab.grading.mistakes as M
from sdpa_lab.attention import lesson_entropy
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.grading.diagnosis import exercise_2_scale
from sdpa_lab.grading.evidence import ENTROPY_CALLS, call_seeds, decide, entropy_evidence
from sdpa_lab.grading.parts import Draw, Part, SolutionCheck, floats, fresh_seed, on, same_values, stopped
from sdpa_lab.grading.runner import Calls, Outcome
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


# How close entropies must be to the grader's to be its draw: a guard eps in log(p + eps) moves each term by at most
# eps (1 + |log eps|) (p near eps or below), so T terms by T eps (1 + |log eps|); guards up to GUARD pass (1e-9 or
# 1e-10 as well as the lesson's 1e-12), and every named slip (bits, a scale, a reseed) is 1e-2 or more off, and
# the lesson's printed 4 decimals (5e-5) are not the draw.
GUARD = 1e-8


def drawn_tolerance(T: int) -> float:
    """The largest difference a guard up to GUARD makes in an entropy of T weights."""
    return T * GUARD * (1 + abs(math.log(GUARD)))


def _drew(call: Calls, seed: int) -> SolutionCheck | Outcome:
    """Whether exercise_2 draws: its entropies over ENTROPY_CALLS seeds at the lesson's sizes against their law
    (evidence.py); an Outcome where a call stopped."""
    what = (f"the draws, off the grader's: over {ENTROPY_CALLS} calls at d_k = 4, 16, 64, 256, T = 8, each with a "
            "seed of its own, the entropies per d_k follow a draw's law")
    rows = []
    for s in call_seeds(seed, "exercise_2", ENTROPY_CALLS):
        o = call(seed=s, d_ks=list(EXERCISE2_D_K), T=EXERCISE2_T)
        if call.lost is not None:
            return o
        h = floats(o) if o.status != "error" else np.array([])
        if h.shape != (len(EXERCISE2_D_K),) or not np.all(np.isfinite(h)):
            return SolutionCheck("B5", what, False, f"did not return {len(EXERCISE2_D_K)} entropies at seed {s}")
        rows.append(h)
    why = entropy_evidence(EXERCISE2_D_K, EXERCISE2_T, np.array(rows))
    return SolutionCheck("B5", what, not why, "; ".join(why) if why else "it is")


def _variant(h: np.ndarray, unscaled: np.ndarray, T: int) -> tuple[str, str] | None:
    """(mistake, what was measured) where the entropies are the grader's draw's under a mistaken unit or sum,
    else None."""
    for other, key, says in (
            (unscaled / math.log(2), "bits", "the entropies are in bits (log2): the lesson uses the natural log, "
             "np.log"),
            (unscaled / T, "entropy_mean", f"your entropies are the right ones divided by T = {T}: a mean instead "
             f"of a sum? Mistake: {M.MISTAKES['entropy_mean'].title}. Fix: {M.MISTAKES['entropy_mean'].fix}")):
        if same_values(h, other, 1e-6):
            return key, says
    return None


def grade_exercise_2(call: Calls, draw: Draw | None = None) -> Part:
    """Exercise 2 at the lesson's seed 42, d_k = 4, 16, 64, 256 and 8 keys, then at the grade's own; entropies off
    the grader's draw are decided over many calls (`_drew`)."""
    draw = draw if draw is not None else Draw(fresh_seed())
    part = Part("exercise_2", "exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8) -> unscaled entropies, one per d_k")
    other_d_ks, other_T = draw.exercise_2
    off_draw = False
    for label, seed, d_ks, T in (("the lesson's seed 42, d_k = 4, 16, 64, 256, T = 8", LESSON_SEED,
                                  EXERCISE2_D_K, EXERCISE2_T),
                                 (f"seed {draw.seed}, d_k = {', '.join(map(str, other_d_ks))}, T = {other_T}",
                                  draw.seed, other_d_ks, other_T)):
        o = call(seed=seed, d_ks=list(d_ks), T=T)
        if stopped(part, call, o, "B5", on(label, f"returns {len(d_ks)} entropies")):
            return part
        h = floats(o)
        bound = math.log(T)  # -sum p log(p + eps) dips to -eps when one weight is 1: the lower bound allows it
        shape_ok = h.shape == (len(d_ks),) and bool(np.all(np.isfinite(h)))
        part.checks.append(SolutionCheck("B5", on(label, f"returns {len(d_ks)} entropies, one per d_k, each between "
                                                         f"0 and log {T}"),
                                         shape_ok and bool(np.all((h >= -1e-11) & (h <= bound + 1e-12))),
                                         listed(h.ravel())))
        if not shape_ok:
            continue
        ref = exercise2_reference(seed, tuple(d_ks), T, reseed=False)
        same = same_values(h, ref["unscaled"], drawn_tolerance(T))
        if same:
            part.checks.append(SolutionCheck("B5", on(label, f"the draw: np.random.seed({seed}) once, then per d_k "
                                                             f"q = randn(d_k), Kmat = randn({T}, d_k)"), True,
                                             "equal to the grader's draw"))
        elif not part.mistakes and (says := exercise_2_scale(seed, tuple(d_ks), T, h)):
            part.mistakes.append("scaled_entropies")  # the scale, measured from the entropies and named by value
            part.diagnosis.append(f'{says}. Reread "{M.EXERCISE_2}" and "{M.LARGE_SCORES}".')
        elif not part.mistakes and (found := _variant(h, ref["unscaled"], T)):
            part.mistakes.append(found[0])
            part.diagnosis.append(f'measured: {found[1]}. Reread "{M.EXERCISE_2}" and "{M.LARGE_SCORES}".')
        elif same_values(h, exercise2_reference(seed, tuple(d_ks), T, reseed=True)["unscaled"], drawn_tolerance(T)):
            off_draw = True
            _note(part, "your stream is reseeded before each d_k: the lesson fixes no seed, so this is decided on "
                        "the statistics; seeding once, before the loop, gives the lesson's printed entropies")
        else:
            off_draw = True
        if part.mistakes and not same:
            part.checks.append(SolutionCheck("B5", on(label, "the entropies of the unscaled weights"), False,
                                             "not the entropies of that draw"))
        if seed == LESSON_SEED and same and np.any(np.diff(h) > 0):  # only where the entropies are the draw's
            part.notes.append("the entropy does not fall at every step: one draw need not (B5's caveat; the "
                              "lesson's own draw rises from d_k = 4 to 16). B5 is decided on the mean over many "
                              "draws")
    if off_draw and part.passed:
        decide(part, call, _drew(call, draw.seed), "B5", "the entropies of many draws",
               "your entropies are not np.random.seed's draw in the lesson's order (the keys drawn first, another "
               "generator, or no seed?): the lesson fixes neither, so B5 is decided on the entropies of many "
               "seeds")
    return part


def _note(part: Part, text: str) -> None:
    if text not in part.notes:
        part.notes.append(text)
