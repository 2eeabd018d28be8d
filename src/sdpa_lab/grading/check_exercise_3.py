"""Exercise 3 graded: the argsorts of the unscaled and scaled weights (B6), and the draw against the grader's;
called on the lesson's values and on the grade's own, as every exercise (see check_exercise_1).
"""

from __future__ import annotations

from functools import cache

import numpy as np

import sdpa_lab.grading.mistakes as M
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.experiments.replication import A2_D_K, A2_T
from sdpa_lab.grading.evidence import ARGSORT_CALLS, argsort_evidence, call_seeds, decide
from sdpa_lab.grading.learner_text import array_text
from sdpa_lab.grading.parts import Draw, Part, SolutionCheck, fresh_seed, on, stopped
from sdpa_lab.grading.runner import Calls, Outcome
from sdpa_lab.seeding import LESSON_SEED


@cache
def exercise3_reference(seed: int, d_k: int, T: int) -> np.ndarray:
    """argsort of the softmax weights of np.random.seed(seed), q = randn(d_k), K = randn(T, d_k)."""
    rs = np.random.RandomState(seed)
    q, K = rs.randn(d_k), rs.randn(T, d_k)
    return np.argsort(reference_softmax(K @ q))


def grade_exercise_3(call: Calls, draw: Draw | None = None) -> Part:
    """Exercise 3 at the lesson's seed 42, d_k = 256 and 8 keys, then at the grade's own."""
    draw = draw if draw is not None else Draw(fresh_seed())
    part = Part("exercise_3", "exercise_3(seed=42, d_k=256, T=8) -> (argsort of unscaled weights, argsort of "
                              "scaled weights)")
    other_d_k, other_T = draw.exercise_3
    off_draw = False
    for label, seed, d_k, T in (("the lesson's seed 42, d_k = 256, T = 8", LESSON_SEED, A2_D_K, A2_T),
                                (f"seed {draw.seed}, d_k = {other_d_k}, T = {other_T}", draw.seed, other_d_k, other_T)):
        o = call(seed=seed, d_k=d_k, T=T)
        if stopped(part, call, o, "B6", on(label, "returns two argsorts")):
            return part
        perm = np.arange(T)
        arrays = [np.asarray(v) for v in o.values] if o.sequence else []
        ok = len(arrays) == 2 and all(a.shape == (T,) and np.array_equal(np.sort(a), perm) for a in arrays)
        part.checks.append(SolutionCheck("B6", on(label, f"returns two argsorts, each an ordering of the {T} "
                                                         "positions"), ok,
                                         ", ".join(array_text(a) for a in arrays) if arrays else
                                         f"{len(o.values)} item(s)"))
        if not ok:
            continue
        unscaled, scaled = arrays
        ref = exercise3_reference(seed, d_k, T)
        same = np.array_equal(unscaled, scaled)
        part.checks.append(SolutionCheck("B6", on(label, "scaling does not change the ranking: the two argsorts "
                                                         "are equal"),
                                         same, f"unscaled {unscaled}, scaled {scaled}"))
        drawn = np.array_equal(unscaled, ref) or np.array_equal(scaled, ref)
        if drawn:
            part.checks.append(SolutionCheck("B6", on(label, f"the draw: np.random.seed({seed}), q = randn({d_k}), "
                                                             f"Kmat = randn({T}, {d_k})"), True,
                                             "the grader's argsort of that draw"))
        off_draw = off_draw or not drawn
        if part.mistakes or part.diagnosis:
            continue
        if not same:
            if np.array_equal(unscaled, scaled[::-1]):
                part.mistakes.append("reversed")
                part.diagnosis.append("measured: one argsort is the other reversed: sort both the same way")
            else:
                part.diagnosis.append("measured: the orders differ. A positive scale never reorders the scores; "
                                      "the argsort of the *weights* can differ only where exp underflowed to "
                                      "exactly 0 and weights tie (float32 at large d_k): rank the raw scores, or "
                                      f'sort with kind="stable". Reread "{M.EXERCISE_3}".')
        elif not drawn and np.array_equal(unscaled, ref[::-1]):
            part.mistakes.append("descending")
            part.diagnosis.append("measured: your argsorts are the draw's reversed (descending): use np.argsort's "
                                  "ascending order, as the exercise compares")
            part.checks.append(SolutionCheck("B6", on(label, "the argsorts are np.argsort's, ascending"), False,
                                             "the grader's draw, in descending order"))
    if off_draw and part.passed:
        decide(part, call, _drew(call, draw.seed), "B6", "the argsorts of many draws",
               "your argsorts are not those of np.random.seed's draw in the lesson's order (the keys drawn first, "
               "another generator, or no seed?): the lesson fixes neither, so the draw is decided over many seeds")
    return part


def _drew(call: Calls, seed: int) -> SolutionCheck | Outcome:
    """Whether exercise_3 draws: over ARGSORT_CALLS seeds at the lesson's sizes, two equal argsorts each time that
    change with the seed as a draw's ranking does (evidence.py); an Outcome where a call stopped."""
    what = (f"the draws, off the grader's: over {ARGSORT_CALLS} calls at d_k = {A2_D_K}, T = {A2_T}, each with a "
            "seed of its own, two equal argsorts that change with the seed")
    orders = []
    for s in call_seeds(seed, "exercise_3", ARGSORT_CALLS):
        o = call(seed=s, d_k=A2_D_K, T=A2_T)
        if call.lost is not None:
            return o
        arrays = [np.asarray(v) for v in o.values] if o.status == "ok" and o.sequence else []
        if len(arrays) != 2 or not all(a.shape == (A2_T,) and np.array_equal(np.sort(a), np.arange(A2_T))
                                       for a in arrays) or not np.array_equal(*arrays):
            return SolutionCheck("B6", what, False, f"not two equal argsorts of {A2_T} positions at seed {s}")
        orders.append(arrays[0])
    why = argsort_evidence(orders)
    return SolutionCheck("B6", what, not why, "; ".join(why) if why else "they do")
