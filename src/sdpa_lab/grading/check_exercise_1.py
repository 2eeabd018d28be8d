"""Exercise 1 graded: the raw and scaled variance of q.k at d_k = 1024 against B4 and B2, and the draw against
the grader's.

Each exercise takes its seed and sizes as arguments (the skeleton's defaults are the
lesson's) and is called twice: on the lesson's values and on the grade's own draw. Its
outputs are compared with the grader's computation of the same draw, which the grade never
prints: only whether they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

import sdpa_lab.grading.mistakes as M
from sdpa_lab.claims.standard_errors import ALPHA_FAMILY, bonferroni_k, variance_se
from sdpa_lab.experiments.replication import A1_D_K, A1_N_SAMPLES, _legacy_normal_chunks, lesson_variance_scores
from sdpa_lab.grading.diagnosis import exercise_1_scale, exercise_1_variances
from sdpa_lab.grading.evidence import call_seeds, decide, evidence_sizes, variance_evidence
from sdpa_lab.grading.limits import QUICK_N_SAMPLES
from sdpa_lab.grading.parts import Draw, Part, SolutionCheck, floats, fresh_seed, on, same_values, stopped
from sdpa_lab.grading.runner import Calls, Outcome
from sdpa_lab.numbers import at_unit, listed, number
from sdpa_lab.seeding import LESSON_SEED

EXERCISE1_D_K = 1024


@cache
def exercise1_reference(seed: int, n_samples: int, d_k: int, continued: bool | str) -> tuple[float, float]:
    """Exercise 1's raw and scaled variance at d_k after np.random.seed(seed).

    continued: True, the lesson's d_k = 4, 16, 64, 256 smaller than d_k drawn first, in one stream
    (the exercise as written); SWEEP, all four of them first, whatever d_k is (a loop over
    [4, 16, 64, 256, d_k]); False, d_k alone.
    """
    rs = np.random.RandomState(seed)
    if continued:
        for d in A1_D_K:
            if d < d_k or continued == SWEEP:
                lesson_variance_scores(rs, n_samples, d)
    scores = lesson_variance_scores(rs, n_samples, d_k)
    return float(scores.var()), float((scores / np.sqrt(d_k)).var())


SWEEP = "sweep"  # exercise1_reference's stream with all of the lesson's d_k drawn before d_k


def orders(d_k: int) -> tuple:
    """The orders of a seeded stream a learner's draw at d_k is compared with, in that order: the lesson's smaller
    d_k first, d_k alone, and all of the lesson's d_k first where that is another stream (d_k <= 256)."""
    return (True, False, *((SWEEP,) if any(d >= d_k for d in A1_D_K) else ()))


# How close a variance must be to the grader's to be its draw, relative: float32 draws and sums round it by about
# 1e-6 at these sizes (raw / scaled = 1023.99994), and another draw lands this close with probability below 1e-3
# (its relative SE is 0.014 or more); every mistaken scale is a factor of 2 or more off.
DRAWN_TOL = 1e-5
DDOF = ((0, ""), (1, " (a variance with ddof=1)"))  # the lesson's np.var, and the unbiased one: both the draw's


@cache
def exercise1_over_samples(seed: int, n_samples: int, d_k: int, continued: bool) -> tuple[float, float]:
    """Exercise 1's variances with the mistake of summing Q * K over axis 0, the samples: d_k sums of
    n_samples products each (np.random.seed(seed), the lesson's smaller d_k first when continued)."""
    rs = np.random.RandomState(seed)
    if continued:
        for d in A1_D_K:
            if d < d_k:
                lesson_variance_scores(rs, n_samples, d)
    rs_k = np.random.RandomState()
    rs_k.set_state(rs.get_state())
    for _ in _legacy_normal_chunks(rs_k, n_samples, d_k):  # K's draws follow Q's
        pass
    sums = np.zeros(d_k)  # (d_k,): one sum of n_samples products per feature
    for q, k in zip(_legacy_normal_chunks(rs, n_samples, d_k), _legacy_normal_chunks(rs_k, n_samples, d_k),
                    strict=True):
        sums += np.sum(q * k, axis=0)
    return float(sums.var()), float((sums / np.sqrt(d_k)).var())


@dataclass
class _Exercise1Call:
    """One call of exercise_1 and what it came to."""

    n: int  # the pairs it drew
    checks: list[SolutionCheck]
    exact: str | None  # how its raw variance equals the grader's draw, or None
    mistakes: list[str]
    diagnosis: list[str]
    described: str = ""  # what the outputs show where no mistake is named


def _exercise_1_call(call: Calls, label: str, seed: int, d: int, n_asked: int, k: float) -> _Exercise1Call | Outcome:
    """exercise_1(seed, n_asked, d) decided: the variances against the claims (B4, B2), the draw against the
    grader's, and, where a check fails, the mistake the numbers show. An Outcome where the call stopped."""
    o = call(seed=seed, n_samples=n_asked, d_k=d)
    if call.lost is not None or o.status == "error":
        return o
    n = n_asked if "n_samples" in o.kwargs else A1_N_SAMPLES
    v = floats(o)
    if v.shape != (2,) or not np.all(np.isfinite(v)):
        returns = on(label, "returns (raw variance, scaled variance), two finite numbers")
        return _Exercise1Call(n, [SolutionCheck("B4", returns, False, f"returned {v.size} number(s): "
                                                                      f"{listed(v.ravel())}")],
                              None, [], [])
    tol = DRAWN_TOL
    raw, scaled = v
    se = variance_se(d, n)
    ratio = raw / scaled if scaled else float("inf")
    # The draw is judged on the raw variance alone: a wrong scale or axis is named below, not blamed on it.
    stream_of = {True: f"np.random.seed({seed}), the lesson's smaller d_k, then d_k = {d}, in one stream",
                 False: f"np.random.seed({seed}), then d_k = {d} alone",
                 SWEEP: f"np.random.seed({seed}), the lesson's d_k = 4, 16, 64, 256, then d_k = {d}, in one stream"}
    exact = next((stream_of[c] + said for c in orders(d) for ddof, said in DDOF
                  if same_values(v[:1], np.array([n / (n - ddof) * exercise1_reference(seed, n, d, c)[0]]), tol)),
                 None)
    mistakes, diagnosis = [], []
    if exact is None and abs(raw - d) > k * se:
        over = next((c for c in (True, False)
                     if same_values(v[:1], exercise1_over_samples(seed, n, d, c)[:1], tol)), None)
        if over is not None or abs(raw - n) <= k * variance_se(n, d):  # d sums of n products each: variance n
            if over is not None:
                exact = stream_of[over] + ", summed over axis 0"
            m = M.MISTAKES["sums_over_samples"]
            mistakes.append("sums_over_samples")
            diagnosis.append(
                f"measured: raw variance {number(raw, digits=4)}, about n_samples = {n:,} rather than d_k = {d}"
                + (" (exactly the variance of the grader's draw summed over axis 0)" if over is not None else "")
                + f". Mistake: {m.title}: {m.does}. Fix: {m.fix}. Reread {m.reread}.")
    # The lesson claims the variances, not a generator: another one's draw passes on the statistics.
    near, z = abs(raw - d) <= k * se and raw != d, _signed((raw - d) / se)  # exactly d_k is no draw's variance
    drawn = f"your draws are {exact}" if exact else (
        f"not np.random.seed({seed})'s draw in the lesson's order (another generator, another order, or no "
        f"seed?): {z} SE from d_k, as a draw's"
        if near else "exactly d_k: no draw's variance is" if raw == d else
        f"neither np.random.seed({seed})'s draw nor within {_k(k)} SE of d_k ({z} SE)")
    checks = [
        SolutionCheck("B4", on(label, f"raw variance near d_k = {d}"), abs(raw - d) <= k * se,
                      f"{at_unit(raw, se)}: {_signed((raw - d) / se)} SE from {d}"),
        SolutionCheck("B4", on(label, "scaled variance near 1"), abs(scaled - 1) <= k * se / d,
                      f"{at_unit(scaled, se / d)}: {_signed((scaled - 1) / (se / d))} SE from 1"),
        SolutionCheck("B2", on(label, f"scaled = raw / {d}: the same scores divided by sqrt(d_k)"),
                      abs(ratio / d - 1) <= tol, f"raw / scaled = {number(ratio)}"),
        SolutionCheck("B4", on(label, f"the draws: Q, K = randn(n_samples, d_k) each, np.random.seed({seed})'s, "
                                      f"or another generator's within {_k(k)} SE of d_k"), exact is not None or near,
                      drawn),
    ]
    if exact is None and not checks[0].passed and not mistakes:  # what the variances are, if not d_k's
        for key, text in exercise_1_variances(raw, scaled, d, n, k,
                                              [exercise1_reference(seed, n, d, c) for c in orders(d)]):
            mistakes.append(key)
            diagnosis.append(text)
    if not checks[2].passed and (exact is not None or checks[0].passed):  # the scale, named by its value
        for key, text in exercise_1_scale(ratio, d, n):
            mistakes.append(key)
            diagnosis.append(text)
    described = ""
    if not checks[2].passed and not mistakes and exact is None and not checks[0].passed:
        # A ratio over a wrong raw variance tells no scale apart (a standard deviation's is a d_k^(-1/4) scale's).
        described = (f"measured: raw / scaled = {number(ratio)} where it is d_k = {d}, and the raw variance "
                     f"{number(raw, digits=4)} is not near d_k either: the ratio names a scale only where the raw "
                     "variance is right, so fix the raw variance first")
    return _Exercise1Call(n, checks, exact, mistakes, diagnosis, described)


def _signed(z: float) -> str:
    """A distance in standard errors, signed, to one decimal."""
    return number(z, decimals=1, integers=False, sign=True)


def _k(k: float) -> str:
    """The grade's k, as the report writes it."""
    return number(k, decimals=2, integers=False)


NO_SMALL_DRAWS = ("exercise_1 takes no n_samples or no d_k, so it cannot be asked for small draws to show that it "
                  "draws: give it the skeleton's parameters")


def _drew(call: Calls, seed: int) -> SolutionCheck | Outcome:
    """Whether exercise_1 draws, decided over many calls at small sizes with seeds of their own (evidence.py); an
    Outcome where a call stopped."""
    what = (f"the draws, off the grader's: over {len(evidence_sizes())} calls at small sizes, each with a seed of "
            "its own, the variances follow a sample variance's law")
    sizes, values = evidence_sizes(), []
    for s, (n, d) in zip(call_seeds(seed, "exercise_1", len(sizes)), sizes, strict=True):
        o = call(seed=s, n_samples=n, d_k=d)
        if call.lost is not None:
            return o
        if o.status == "error":
            return SolutionCheck("B4", what, False, f"raised an error at n_samples = {n}, d_k = {d}")
        if not {"n_samples", "d_k"} <= set(o.kwargs):
            return SolutionCheck("B4", what, False, NO_SMALL_DRAWS)
        values.append(floats(o))
    if any(v.shape != (2,) for v in values):
        return SolutionCheck("B4", what, False, "did not return two numbers at every call")
    raw, scaled = np.array(values).T
    why = variance_evidence(sizes, raw, scaled)
    return SolutionCheck("B4", what, not why, "; ".join(why) if why else "they do")


def grade_exercise_1(call: Calls, draw: Draw | int | None = None) -> Part:
    """Exercise 1 at the lesson's seed 42 and d_k = 1024, then at the grade's seed and another d_k, each drawing
    draw.n_samples pairs (None: QUICK_N_SAMPLES); where the variances are not the grader's draw, whether the
    function draws at all is decided over many calls at small sizes (`_drew`)."""
    if not isinstance(draw, Draw):
        draw = Draw(fresh_seed(), draw)
    part = Part("exercise_1", "exercise_1(seed=42, n_samples=100_000, d_k=1024) -> (raw variance, scaled variance)")
    k = bonferroni_k(2)  # two draws; raw and scaled are one piece of evidence each (the scaled is the raw / d_k)
    n_asked = draw.n_samples or QUICK_N_SAMPLES
    drawn, exact, ignored = [], True, False
    for label, seed, d in (("the lesson's seed 42, d_k = 1024", LESSON_SEED, EXERCISE1_D_K),
                           (f"seed {draw.seed}, d_k = {draw.exercise_1_d_k}", draw.seed, draw.exercise_1_d_k)):
        got = _exercise_1_call(call, label, seed, d, n_asked, k)
        if isinstance(got, Outcome):
            stopped(part, call, got, "B4", on(label, "returns (raw variance, scaled variance)"))
            return part
        part.checks += got.checks
        exact, ignored = exact and got.exact is not None, ignored or got.n != n_asked
        drawn.append(f"{got.n:,} pairs at {label} (SE of the raw variance {number(variance_se(d, got.n), digits=2)})")
        for key, text in zip(got.mistakes, got.diagnosis, strict=True):
            if key not in part.mistakes:
                part.mistakes.append(key)
                part.diagnosis.append(text)
        if got.described and not part.diagnosis:  # said once, at the first call that shows it
            part.diagnosis.append(got.described)
    note = (f"drawn: {'; '.join(drawn)}. Tolerance k = {_k(k)} SE, so a correct solution fails by chance less "
            f"than once in {number(1 / ALPHA_FAMILY, decimals=0)} grades")
    if ignored:
        note += (". Your exercise_1 takes no n_samples, so it drew the lesson's 100,000 pairs at every call: give "
                 "it the skeleton's n_samples=100_000 parameter for a quicker grade")
    elif draw.n_samples is None and exact:
        note += (f". The lesson draws {A1_N_SAMPLES:,} pairs; with your draws equal to the grader's, a "
                 f"larger one decides nothing more (--n-samples {A1_N_SAMPLES} draws it anyway)")
    part.notes.insert(0, note)
    if not exact and part.passed:
        drew = _drew(call, draw.seed) if not ignored else SolutionCheck(
            "B4", "the draws, off the grader's, at small sizes", False, NO_SMALL_DRAWS)
        decide(part, call, drew, "B4", "the draws at small sizes",
               "your variances are not those of np.random.seed's draw in the lesson's order (Q, then K, "
               "= np.random.randn(n_samples, d_k), after the lesson's smaller d_k or alone): another generator, "
               "another order of the draws, or no seed? They verify the lesson's claim (B4), decided statistically, "
               "and they change with the seed as draws do; the lesson's printed digits need np.random.seed(42) and "
               "np.random.randn in the lesson's order")
    return part
