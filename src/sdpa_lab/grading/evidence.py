"""Whether an exercise's outputs off the grader's own draw come from real draws: decided over many calls.

The lesson fixes neither a generator nor a draw order, so a solution whose outputs are not
the grader's draw (np.random.default_rng, the keys drawn before the query) is decided on
statistics over many calls at small sizes, each with a seed of its own. The grader knows
the exact law of each output there by drawing it itself (LAW_DRAWS draws, from a fixed
stream, so every grade compares against the same laws); a function that does not draw must
reproduce those laws at sizes it cannot know in advance (docs/grading.md, "Off the
grader's draw").

Exercise 1 at small sizes: the sample variance of n scores, each the sum of d products of
two standard normals, has no closed law beyond n = 2; at n = 2 and 3 with d = 1 it is
heavily skewed with much of its mass near 0 (a normal, gamma or chi-square stand-in is
not), and at n = 64 with d = 1 its spread is twice that of a sample variance of normal
scores (products have fourth moment 9, not 3). Exercises 2 and 3: the entropies per d_k
against their law, and argsorts that change with the seed. Each test maps what comes back
through the law's CDF (to uniform, then normal scores), so its p-value is exact whatever the
law's shape.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from sdpa_lab.attention import lesson_entropy
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.claims.standard_errors import ALPHA_FAMILY
from sdpa_lab.seeding import stream

LAW_DRAWS = 20_000  # draws of each law: its CDF within 0.01, far inside the tests' margins at these call counts
CHUNK = 1_000  # draws of a law made at once
SHAPE_SIZES = ((2, 1), (3, 1))  # (n_samples, d_k) whose law's shape a stand-in misses
SPREAD_SIZE = (64, 1)  # (n_samples, d_k) whose law's spread a normal scores' stand-in halves
SHAPE_CALLS, SPREAD_CALLS = 48, 80  # enough that the stand-ins above fail (tests/grading/test_evidence.py)
ENTROPY_CALLS = 24  # Exercise 2's calls off the grader's draw
ENTROPY_FLOOR = 1e-6  # entropies below it count as equal: a guard eps in log(p + eps) moves them by about eps
ARGSORT_CALLS = 12  # Exercise 3's
TESTS = 2  # per exercise (Exercise 1: the law's shape, its spread): each gets ALPHA_FAMILY / TESTS of false fails
ALPHA = ALPHA_FAMILY / TESTS


def decide(part, call, drew, claim: str, what: str, note: str) -> None:
    """Add to `part` the check over many calls (`drew`, a SolutionCheck) and, where it passes, `note`; where one of the
    calls was lost (`drew` an Outcome), the part stops there (parts.stopped, `what` naming what was asked)."""
    from sdpa_lab.grading.parts import SolutionCheck, stopped

    if not isinstance(drew, SolutionCheck):
        stopped(part, call, drew, claim, what)
        return
    part.checks.append(drew)
    if drew.passed and note not in part.notes:
        part.notes.append(note)


def call_seeds(seed: int, name: str, n: int) -> list[int]:
    """n distinct seeds for an exercise's calls off the grader's draw, from the grade's seed."""
    return [int(s) for s in stream(seed, f"grading-evidence-{name}").choice(2**31, size=n, replace=False)]


def evidence_sizes() -> list[tuple[int, int]]:
    """(n_samples, d_k) of each of Exercise 1's calls off the grader's draw, in order."""
    shape = [SHAPE_SIZES[i % len(SHAPE_SIZES)] for i in range(SHAPE_CALLS)]
    return shape + [SPREAD_SIZE] * SPREAD_CALLS


@cache
def variance_law(n: int, d: int, ddof: int) -> np.ndarray:
    """LAW_DRAWS sample variances (ddof) of n scores q.k of length d, sorted: their law, drawn by the grader."""
    rng = stream(0, "grading-variance-law", n, d)
    q, k = rng.standard_normal((2, LAW_DRAWS, n, d))
    return np.sort(np.sum(q * k, axis=-1).var(axis=1, ddof=ddof))


def _pit(x: np.ndarray, law: np.ndarray) -> np.ndarray:
    """Each value's place in a law's draws (in (0, 1)): uniform where x follows the law."""
    return (np.searchsorted(law, x, side="left") + np.searchsorted(law, x, side="right") + 1) / (2 * len(law) + 2)


def _normal_scores(x: np.ndarray, law: np.ndarray) -> np.ndarray:
    """x mapped through the law's CDF to standard normal scores: independent N(0, 1) where x follows the law."""
    from scipy.stats import norm

    return norm.ppf(_pit(x, law))


def variance_evidence(sizes: list[tuple[int, int]], raw: np.ndarray, scaled: np.ndarray) -> list[str]:
    """Why Exercise 1's outputs at `sizes` (one call each, each its own seed) are not real draws' ([] when they
    are): a negative or repeated variance, a pair that is not one set of scores, the law's shape at SHAPE_SIZES
    (Kolmogorov-Smirnov) or its spread at SPREAD_SIZE (chi-square of their normal scores' variance), each
    against the sample variance with ddof 0 and 1 (a learner may use either)."""
    from scipy.stats import kstest  # the exact Kolmogorov-Smirnov p-value

    sizes = np.array(sizes)
    n, d = sizes[:, 0], sizes[:, 1]
    why = []
    if np.any(raw < 0) or not np.all(np.isfinite(raw)):
        why.append("a negative or non-finite variance: no sample variance is")
    if not np.allclose(raw, scaled * d, rtol=1e-5, atol=0):
        why.append("raw / scaled is not d_k at every call: not the variances of one set of scores")
    for size in {tuple(s) for s in sizes}:
        at = np.all(sizes == size, axis=1)
        if len(np.unique(raw[at])) < at.sum():
            why.append(f"the same variance for two seeds at n_samples = {size[0]}, d_k = {size[1]}: draws with "
                       "different seeds never repeat")
    if why:
        return why
    p = max(kstest(np.concatenate([_pit(raw[(n == a) & (d == b)], variance_law(a, b, ddof))
                                   for a, b in SHAPE_SIZES]), "uniform").pvalue for ddof in (0, 1))
    if p < ALPHA:
        why.append(f"at n_samples = 2 and 3, d_k = 1, their law is not a sample variance's (Kolmogorov-Smirnov "
                   f"p = {p:.1e} < {ALPHA:.1e})")
    spread = np.all(sizes == SPREAD_SIZE, axis=1)
    p = max(_spread_p(raw[spread], variance_law(*SPREAD_SIZE, ddof)) for ddof in (0, 1))
    if p < ALPHA:
        why.append(f"at n_samples = {SPREAD_SIZE[0]}, d_k = {SPREAD_SIZE[1]}, the variances spread unlike a sample "
                   f"variance's (p = {p:.1e} < {ALPHA:.1e}): products of normals spread twice as far as normal "
                   "scores")
    return why


def _spread_p(x: np.ndarray, law: np.ndarray) -> float:
    """Two-sided p-value of x spreading as the law does: x mapped through the law's CDF to normal scores, whose
    sample variance times (m - 1) is chi-square with m - 1 degrees of freedom where x follows the law."""
    from scipy.stats import chi2

    z = _normal_scores(x, law)
    q, df = (len(z) - 1) * z.var(ddof=1), len(z) - 1
    return float(min(1.0, 2 * min(chi2.cdf(q, df), chi2.sf(q, df))))


@cache
def entropy_law(d_ks: tuple[int, ...], T: int) -> np.ndarray:
    """LAW_DRAWS unscaled entropies per d_k of one query against T keys (the lesson's -sum p log(p + 1e-12)), each
    row sorted, floored at ENTROPY_FLOOR: their law, drawn by the grader."""
    rng = stream(0, "grading-entropy-law", T, *d_ks)
    out = []
    for d in d_ks:
        h = []
        for _ in range(LAW_DRAWS // CHUNK):  # in chunks: T x d_k x LAW_DRAWS at once would be gigabytes
            q, K = rng.standard_normal((CHUNK, 1, d)), rng.standard_normal((CHUNK, T, d))
            h.append(lesson_entropy(reference_softmax(np.sum(K * q, axis=-1))))
        out.append(np.sort(np.maximum(np.concatenate(h), ENTROPY_FLOOR)))
    return np.array(out)  # (len(d_ks), LAW_DRAWS)


def entropy_evidence(d_ks: tuple[int, ...], T: int, h: np.ndarray) -> list[str]:
    """Why Exercise 2's entropies (one row per call, each its own seed) are not those of real draws ([] when they
    are): rows that repeat, or entropies of a d_k whose normal scores under the law do not average 0 (their sum
    over m calls is N(0, m) where they follow it; two-sided, Bonferroni over the d_k)."""
    from scipy.stats import norm

    if len({tuple(row) for row in h}) < len(h):
        return ["the same entropies for two seeds: draws with different seeds never repeat"]
    law = entropy_law(tuple(d_ks), T)
    floored = np.maximum(h, ENTROPY_FLOOR)  # below it, a guard's size decides the value, not the draw
    z = [float(np.sum(_normal_scores(floored[:, i], law[i])) / math.sqrt(len(h))) for i in range(len(d_ks))]
    k = float(norm.isf(ALPHA / (2 * len(d_ks))))
    off = [f"d_k = {d}: median {np.median(h[:, i]):.3g} against {np.median(law[i]):.3g} ({z[i]:+.1f} SE)"
           for i, d in enumerate(d_ks) if abs(z[i]) > k]
    return [f"over {len(h)} seeds the entropies are not a draw's (beyond {k:.2f} SE): " + "; ".join(off)] if off \
        else []


def argsort_evidence(orders: list[np.ndarray]) -> list[str]:
    """Why Exercise 3's argsorts (one per call, each its own seed) are not those of real draws: a draw's ranking of
    T keys is a uniform permutation, so calls whose argsorts repeat more than ALPHA allows are not draws."""
    T = len(orders[0])
    m, distinct = len(orders), len({tuple(o) for o in orders})
    pairs = m * (m - 1) / 2 / math.factorial(T)  # expected repeated pairs of uniform permutations
    allowed = next(j for j in range(m) if _poisson_tail(pairs, j + 1) < ALPHA)
    if m - distinct > allowed:
        return [f"{m - distinct} of {m} calls with different seeds repeat an earlier argsort (draws repeat at most "
                f"{allowed}): they do not change with the seed as draws do"]
    return []


def _poisson_tail(mean: float, j: int) -> float:
    """P(X >= j) for a Poisson count of the given mean (repeats among few uniform permutations are one)."""
    return 1.0 - sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(j))
