"""What is checked in a learner's solutions, function by function and exercise by exercise, tied to the claims.

Each `grade_*` function calls one of the learner's functions (through
`runner.Calls`, in the learner's process) on probe inputs, checks the outputs
against the claims and the reference code (sdpa_lab.attention, the lesson's
seeded streams), and, where a check fails, names the mistake from the
measured outputs (sdpa_lab.grading.mistakes).
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from sdpa_lab.attention import lesson_entropy
from sdpa_lab.attention import scaled_dot_product_attention as reference_attention
from sdpa_lab.attention import softmax as reference_softmax
from sdpa_lab.claims.lesson_numbers import LESSON_WEIGHTS_6X6
from sdpa_lab.claims.standard_errors import ALPHA_FAMILY, bonferroni_k, variance_se
from sdpa_lab.experiments.replication import (
    A1_D_K,
    A1_N_SAMPLES,
    A2_D_K,
    A2_T,
    A3_SHAPE,
    _legacy_normal_chunks,
    lesson_variance_scores,
)
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading import scale as S
from sdpa_lab.grading.diagnosis import exercise_1_scale, exercise_2_scale
from sdpa_lab.grading.diagnosis import name_mistakes as _diagnose
from sdpa_lab.grading.runner import Calls, Outcome
from sdpa_lab.seeding import LESSON_SEED, lesson_default_rng, stream

EXERCISE1_D_K = 1024
EXERCISE2_D_K = (4, 16, 64, 256)
EXERCISE2_T = 8
LOST = {"timeout": "hangs", "memory": "runs out of memory", "died": "crashes", "not_written": "not written yet",
        "missing": "missing", "unusable": "unusable"}


def fresh_seed() -> int:
    """A seed for one grading, from the OS's entropy: a valid np.random.seed, never the lesson's 42."""
    while (seed := secrets.randbelow(2**32)) == LESSON_SEED:
        pass
    return seed


@dataclass(frozen=True)
class Draw:
    """The inputs one grading asks for, chosen at grade time: a fresh seed and sizes derived from it.

    Every exercise is called on the lesson's own values and on these, so an output written into
    the file (a constant, an argsort) fails; the seed is recorded, so the grade can be reproduced.
    """

    seed: int
    n_samples: int | None = None  # Exercise 1's pairs at both calls; None: QUICK_N_SAMPLES, the lesson's where needed

    def _rng(self) -> np.random.Generator:
        return stream(self.seed, "grading-sizes")

    @property
    def exercise_1_d_k(self) -> int:
        """Exercise 1's other d_k: smaller than the lesson's 1024, so it needs no more memory."""
        return int(self._rng().choice([64, 128, 256, 512]))

    @property
    def exercise_2(self) -> tuple[tuple[int, ...], int]:
        """(d_ks, T) of Exercise 2's other call: four increasing d_k and a number of keys."""
        rng = self._rng()
        rng.random(1)
        d_ks = np.sort(rng.choice(np.arange(2, 513), size=4, replace=False))
        return tuple(int(d) for d in d_ks), int(rng.integers(5, 17))

    @property
    def exercise_3(self) -> tuple[int, int]:
        """(d_k, T) of Exercise 3's other call."""
        rng = self._rng()
        rng.random(2)
        return int(rng.integers(16, 1025)), int(rng.integers(5, 17))


@dataclass(frozen=True)
class SolutionCheck:
    """One checked statement about a learner's function's outputs, with what was measured (a claim's decided
    comparison is sdpa_lab.claims.model.Check)."""

    claim: str  # the claim id it is tied to, or ""
    what: str
    passed: bool
    detail: str = ""


@dataclass
class Part:
    """The verdict on one function or exercise of the solutions file."""

    name: str
    signature: str
    checks: list[SolutionCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the verdict rests on, not pass/fail
    lost: Outcome | None = None  # a hang, memory blow-up, crash, or a function not written
    error: str = ""  # the learner's traceback, from the first probe that raised
    diagnosis: list[str] = field(default_factory=list)
    mistakes: list[str] = field(default_factory=list)  # keys of mistakes.MISTAKES, measured

    @property
    def passed(self) -> bool:
        return self.lost is None and all(c.passed for c in self.checks)

    @property
    def verdict(self) -> str:
        if self.lost is not None:
            return LOST[self.lost.status]
        if self.passed:
            return "pass"
        return f"FAIL ({sum(not c.passed for c in self.checks)} of {len(self.checks)} checks)"


def _shape(a) -> str:
    return "(" + ", ".join(str(n) for n in a.shape) + ")"


def _first_error(part: Part, names, outcomes) -> None:
    for name, o in zip(names, outcomes, strict=True):
        if o.status == "error":
            part.error = f"on {name}:\n{o.message}"
            return


def _check(claim: str, what: str, failures: list[str], measured: str = "") -> SolutionCheck:
    """A check that passes when there is no failure; the detail is the first failure, or what was measured."""
    detail = failures[0] + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else "") if failures else measured
    return SolutionCheck(claim, what, not failures, detail)


def _why_not(name: str, o: Outcome, n_items: int | None) -> str | None:
    """Why an outcome has no usable arrays (raised, or returned the wrong number of things), or None."""
    if o.status == "error":
        return f"raised an error on {name}"
    if n_items is None and o.sequence:
        return f"returned a {len(o.values)}-item sequence on {name}, not one array"
    if n_items is not None and (not o.sequence or len(o.values) != n_items):
        return f"returned {len(o.values) if o.sequence else 'one'} item(s) on {name}, not {n_items}"
    return None


def _dtype_note(part: Part, dtypes: list[str]) -> None:
    """A note, never a fail, when float32 inputs come back in another dtype: the lesson never claims the dtype
    is kept (its own `/ np.sqrt(d_k)` returns float64)."""
    if dtypes and any(d != "float32" for d in dtypes):
        m = M.NOT_CLAIMED["upcast"]
        part.notes.append(f"{m.title} ({', '.join(dtypes)}): {m.does}. {m.fix[0].upper() + m.fix[1:]}.")


# -- softmax ------------------------------------------------------------------

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
    part = Part("softmax", "softmax(x, axis=-1)")
    probes = softmax_probes(draw.seed if draw is not None else 0)
    outcomes = []
    for _, args, kwargs in probes:
        outcomes.append(call(*args, **kwargs))
        if call.lost is not None:
            part.lost = call.lost
            return part
    names = [p[0] for p in probes]
    _first_error(part, names, outcomes)

    shape, rows, agree, finite = [], [], [], []
    worst_sum = worst_diff = 0.0
    for (name, (x,), kwargs), o in zip(probes, outcomes, strict=True):
        why = _why_not(name, o, None)
        p, axis = (o.values[0], kwargs.get("axis", -1)) if why is None else (None, None)
        if why is None and p.shape != x.shape:
            why = f"shape {_shape(p)} for x of shape {_shape(x)} on {name}"
        if why:
            shape.append(why)
            rows.append(f"not measured on {name}")
            agree.append(f"not measured on {name}")
            finite.append(f"not measured on {name}")
            continue
        with np.errstate(all="ignore"):
            off = float(np.max(np.abs(p.sum(axis=axis, dtype=np.float64) - 1.0)))
        if not (np.all(p >= 0) and off <= M.tolerance(x.dtype)):
            rows.append(f"on {name}: min {np.min(p):.3g}, largest |sum - 1| = {off:.3g} along axis {axis}")
        worst_sum = max(worst_sum, off)
        diff = M.max_difference(p, reference_softmax(x, axis=axis))
        if diff > M.tolerance(x.dtype):
            agree.append(f"on {name}: largest difference {diff:.3g}")
        worst_diff = max(worst_diff, diff)
        if np.abs(x).max() > 100 and not np.all(np.isfinite(p)):
            finite.append(f"{int(np.sum(~np.isfinite(p)))} non-finite values (inf or nan) on {name}")
    f32 = outcomes[4]
    part.checks = [
        _check("B9", "returns one array of x's shape", shape, f"on all {len(probes)} probes"),
        _check("B9", "non-negative, sums to 1 along `axis` (including axis=0 and axis=1)", rows,
               f"largest |sum - 1| = {worst_sum:.2g}"),
        _check("", "agrees with the reference softmax (sdpa_lab.attention)", agree,
               f"largest relative difference {worst_diff:.2g}"),
        _check("", "large inputs (up to about 3000, rows 1600 apart): no overflow, no nan", finite, "finite"),
    ]
    _dtype_note(part, [str(f32.values[0].dtype)] if f32.ok and len(f32.values) == 1 else [])
    _diagnose(part, M.SOFTMAX_VARIANTS, probes, outcomes, reread=SOFTMAX_SECTION)
    return part


# -- scaled_dot_product_attention ---------------------------------------------

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
        why = _why_not(name, o, 2)
        want_out, want_w = (*Q.shape[:-1], V.shape[-1]), (*Q.shape[:-1], K.shape[-2])
        if why is None:
            out, w = o.values
            if out.shape != want_out or w.shape != want_w:
                why = (f"output {_shape(out)}, weights {_shape(w)} on {name}; expected output "
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
            rows.append(f"on {name}: min weight {np.min(w):.3g}, largest |row sum - 1| = {off:.3g}")
        worst_sum = max(worst_sum, off)
        ref_out, ref_w = reference_attention(Q, K, V)
        diff = max(M.max_difference(out, ref_out), M.max_difference(w, ref_w))
        if diff > M.tolerance(Q.dtype):
            agree.append(f"on {name}: largest relative difference {diff:.3g}")
        worst_diff = max(worst_diff, diff)

    if 0 in good:
        printed = np.array(LESSON_WEIGHTS_6X6)
        dev = np.abs(good[0][1][0] - printed)
        a3 = [] if np.all(dev <= 0.0005) else [
            f"{int(np.sum(dev > 0.0005))} of 36 entries of weights[0] differ from the printed matrix "
            f"by more than 0.0005 (largest {dev.max():.3f})"]
    else:
        a3 = ["no (1, 6, 6) weights on the lesson's inputs"]
    large = good.get(4)
    checks = [
        _check("B9", "shapes: Q (B, T_q, d_k) -> weights (B, T_q, T_k), output (B, T_q, d_v)", shapes,
               f"on all {len(probes)} probes"),
        _check("A3", "the lesson's printed forward: weights[0] on default_rng(42) Q, K, V of (1, 6, 16), "
               "to the 3 places printed", a3, "all 36 entries"),
        _check("B9", "weight rows are non-negative and sum to 1", rows, f"largest |row sum - 1| = {worst_sum:.2g}"),
        _check("", "agrees with the reference forward (sdpa_lab.attention), batches, T_q != T_k, d_v != d_k",
               agree, f"largest relative difference {worst_diff:.2g}"),
        _check("", "large scores: no overflow, no nan",
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

    def run(**helpers) -> list[Outcome] | None:
        outcomes = []
        for _, args, _ in probes:
            outcomes.append(call(*args, **helpers))
            if call.lost is not None:
                part.lost = call.lost
                return None
        return outcomes

    outcomes = run()
    if outcomes is None:
        return part
    part.checks, dtypes = _attention_checks(probes, outcomes)
    if not part.passed:
        again = run(reference_softmax=True)
        if again is None:
            return part
        if not _same_outcomes(outcomes, again):  # the forward calls the file's softmax, and it changed the outputs
            failing = [c.what for c in part.checks if not c.passed]
            own, own_dtypes = _attention_checks(probes, again)
            fixed = all(c.passed for c in own)
            part.notes.append(
                f"with your softmax, {len(failing)} check(s) fail ({'; '.join(failing)}); graded here with a "
                "correct softmax in its place, " + (
                    "every check passes: your scaled_dot_product_attention is right, fix softmax (above)" if fixed
                    else "so only this function's own mistakes count"))
            outcomes, part.checks, dtypes = again, own, own_dtypes
    names = [p[0] for p in probes]
    _first_error(part, names, outcomes)
    _dtype_note(part, dtypes)
    reading = S.read(probes, outcomes)  # the scale, named by its measured value
    _diagnose(part, M.forward_variants(reading), probes, outcomes, reading=reading)
    return part


# -- the exercises ------------------------------------------------------------
# Each exercise takes its seed and sizes as arguments (the skeleton's defaults are the
# lesson's) and is called twice: on the lesson's values and on the grade's own draw. Its
# outputs are compared with the grader's computation of the same draw, which the grade never
# prints: only whether they agree.

def _floats(o: Outcome) -> np.ndarray:
    """Everything a function returned, as one flat float64 array (nan if it is not numbers)."""
    try:
        return np.concatenate([np.ravel(v) for v in o.values]).astype(np.float64) if o.values else np.array([])
    except (TypeError, ValueError):
        return np.array([np.nan])


@cache
def exercise1_reference(seed: int, n_samples: int, d_k: int, continued: bool) -> tuple[float, float]:
    """Exercise 1's raw and scaled variance at d_k after np.random.seed(seed).

    continued: the lesson's d_k = 4, 16, 64, 256 smaller than d_k drawn first, in one stream
    (the exercise as written); otherwise d_k alone.
    """
    rs = np.random.RandomState(seed)
    if continued:
        for d in A1_D_K:
            if d < d_k:
                lesson_variance_scores(rs, n_samples, d)
    scores = lesson_variance_scores(rs, n_samples, d_k)
    return float(scores.var()), float((scores / np.sqrt(d_k)).var())


def _same(a: np.ndarray, b, tol: float) -> bool:
    return a.shape == np.shape(b) and M.max_difference(a, np.asarray(b, dtype=np.float64)) <= tol


def _stopped(part: Part, call: Calls, o, claim: str, returns: str) -> bool:
    """Whether an exercise's grade ends at its call: the call was lost (time or memory) or raised an error."""
    if call.lost is not None:
        part.lost = call.lost
        return True
    if o.status == "error":
        part.error = o.message
        part.checks.append(SolutionCheck(claim, returns, False, "raised an error"))
        return True
    return False


def _on(label: str, what: str) -> str:
    return f"{label}: {what}"


QUICK_N_SAMPLES = 10_000  # Exercise 1's pairs by default: an exact match with the grader's draw decides as much


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


def _exercise_1_call(call: Calls, label: str, seed: int, d: int, n_asked: int, k: float) -> _Exercise1Call | Outcome:
    """exercise_1(seed, n_asked, d) decided: the variances against the claims (B4, B2), the draw against the
    grader's, and, where a check fails, the mistake the numbers show. An Outcome where the call stopped."""
    o = call(seed=seed, n_samples=n_asked, d_k=d)
    if call.lost is not None or o.status == "error":
        return o
    n = n_asked if "n_samples" in o.kwargs else A1_N_SAMPLES
    v = _floats(o)
    if v.shape != (2,) or not np.all(np.isfinite(v)):
        returns = _on(label, "returns (raw variance, scaled variance), two finite numbers")
        return _Exercise1Call(n, [SolutionCheck("B4", returns, False, f"returned {v.size} number(s): "
                                                                      f"{np.array2string(v, precision=4)}")],
                              None, [], [])
    tol = M.tolerance(np.float64)
    raw, scaled = v
    se = variance_se(d, n)
    ratio = raw / scaled if scaled else float("inf")
    # The draw is judged on the raw variance alone: a wrong scale or axis is named below, not blamed on it.
    stream_of = {True: f"np.random.seed({seed}), the lesson's smaller d_k, then d_k = {d}, in one stream",
                 False: f"np.random.seed({seed}), then d_k = {d} alone"}
    exact = next((stream_of[c] for c in (True, False) if _same(v[:1], exercise1_reference(seed, n, d, c)[:1], tol)),
                 None)
    mistakes, diagnosis = [], []
    if exact is None and abs(raw - d) > k * se:
        over = next((c for c in (True, False) if _same(v[:1], exercise1_over_samples(seed, n, d, c)[:1], tol)), None)
        if over is not None or abs(raw - n) <= k * variance_se(n, d):  # d sums of n products each: variance n
            if over is not None:
                exact = stream_of[over] + ", summed over axis 0"
            m = M.MISTAKES["sums_over_samples"]
            mistakes.append("sums_over_samples")
            diagnosis.append(
                f"measured: raw variance {raw:,.4g}, about n_samples = {n:,} rather than d_k = {d}"
                + (" (exactly the variance of the grader's draw summed over axis 0)" if over is not None else "")
                + f". Mistake: {m.title}: {m.does}. Fix: {m.fix}. Reread {m.reread}.")
    # The lesson claims the variances, not a generator: another one's draw passes on the statistics.
    near, z = abs(raw - d) <= k * se and raw != d, (raw - d) / se  # exactly d_k is no draw's variance
    drawn = f"your draws are {exact}" if exact else (
        f"not np.random.seed({seed})'s stream (another generator, or no seed?): {z:+.1f} SE from d_k, as a draw's"
        if near else "exactly d_k: no draw's variance is" if raw == d else
        f"neither np.random.seed({seed})'s draw nor within {k:.2f} SE of d_k ({z:+.1f} SE)")
    checks = [
        SolutionCheck("B4", _on(label, f"raw variance near d_k = {d}"), abs(raw - d) <= k * se,
                      f"{_round(raw, se)}: {(raw - d) / se:+.1f} SE from {d}"),
        SolutionCheck("B4", _on(label, "scaled variance near 1"), abs(scaled - 1) <= k * se / d,
                      f"{_round(scaled, se / d)}: {(scaled - 1) / (se / d):+.1f} SE from 1"),
        SolutionCheck("B2", _on(label, f"scaled = raw / {d}: the same scores divided by sqrt(d_k)"),
                      abs(ratio / d - 1) <= tol, f"raw / scaled = {ratio:.6g}"),
        SolutionCheck("B4", _on(label, f"the draws: Q, K = randn(n_samples, d_k) each, np.random.seed({seed})'s, "
                                       f"or another generator's within {k:.2f} SE of d_k"), exact is not None or near,
                      drawn),
    ]
    if not checks[2].passed:  # the scale, named by its value
        for key, text in exercise_1_scale(ratio, d, n):
            mistakes.append(key)
            diagnosis.append(text)
    return _Exercise1Call(n, checks, exact, mistakes, diagnosis)


def _round(x: float, se: float) -> str:
    """x to the digits its standard error leaves meaningful (two significant digits of the SE)."""
    digits = max(0, 1 - math.floor(math.log10(se))) if se > 0 else 6
    return f"{x:,.{digits}f}"


def grade_exercise_1(call: Calls, draw: Draw | int | None = None) -> Part:
    """Exercise 1 at the lesson's seed 42 and d_k = 1024, then at the grade's seed and another d_k.

    With draw.n_samples None (the default) each call draws QUICK_N_SAMPLES pairs, and the lesson's own
    100,000 only where that decides more: at seed 42, when the variances are not the grader's draw (so
    B4 is decided statistically, and the lesson's size gives it the lesson's power).
    """
    if not isinstance(draw, Draw):
        draw = Draw(fresh_seed(), draw)
    part = Part("exercise_1", "exercise_1(seed=42, n_samples=100_000, d_k=1024) -> (raw variance, scaled variance)")
    k = bonferroni_k(2)  # two draws; raw and scaled are one piece of evidence each (the scaled is the raw / d_k)
    n_asked = draw.n_samples or QUICK_N_SAMPLES
    drawn, escalated, exact, ignored = [], False, True, False
    for label, seed, d in (("the lesson's seed 42, d_k = 1024", LESSON_SEED, EXERCISE1_D_K),
                           (f"seed {draw.seed}, d_k = {draw.exercise_1_d_k}", draw.seed, draw.exercise_1_d_k)):
        got = _exercise_1_call(call, label, seed, d, n_asked, k)
        if (isinstance(got, _Exercise1Call) and draw.n_samples is None and seed == LESSON_SEED
                and got.n < A1_N_SAMPLES and got.exact is None and not got.mistakes and got.checks[0].passed):
            small, escalated = got.n, True
            got = _exercise_1_call(call, label, seed, d, A1_N_SAMPLES, k)
            if isinstance(got, _Exercise1Call):
                part.notes.append(f"at seed 42 your variances of {small:,} pairs are not the grader's draw, so B4 "
                                  f"is decided statistically, on the lesson's own {A1_N_SAMPLES:,} pairs (SE "
                                  f"{variance_se(d, A1_N_SAMPLES):.2g} rather than {variance_se(d, small):.2g}; "
                                  f"--n-samples {small} skips that draw)")
        if isinstance(got, Outcome):
            _stopped(part, call, got, "B4", _on(label, "returns (raw variance, scaled variance)"))
            return part
        part.checks += got.checks
        exact, ignored = exact and got.exact is not None, ignored or got.n != n_asked and not escalated
        drawn.append(f"{got.n:,} pairs at {label} (SE of the raw variance {variance_se(d, got.n):.2g})")
        for key, text in zip(got.mistakes, got.diagnosis, strict=True):
            if key not in part.mistakes:
                part.mistakes.append(key)
                part.diagnosis.append(text)
    note = (f"drawn: {'; '.join(drawn)}. Tolerance k = {k:.2f} SE, so a correct solution fails by chance less "
            f"than once in {1 / ALPHA_FAMILY:,.0f} grades")
    if ignored:
        note += (". Your exercise_1 takes no n_samples, so it drew the lesson's 100,000 pairs at every call: give "
                 "it the skeleton's n_samples=100_000 parameter for a quicker grade")
    elif draw.n_samples is None and exact:
        note += (f". The lesson draws {A1_N_SAMPLES:,} pairs; with your draws equal to the grader's, a "
                 f"larger one decides nothing more (--n-samples {A1_N_SAMPLES} draws it anyway)")
    part.notes.insert(0, note)
    if not exact and part.passed:
        part.notes.append("your variances are not those of np.random.seed's stream (np.random.default_rng, or "
                          "np.random.randn without np.random.seed?): they verify the lesson's claim (B4), decided "
                          "statistically; the lesson's printed digits need np.random.seed(42) and np.random.randn "
                          "in the lesson's order")
    return part


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
        if _stopped(part, call, o, "B5", _on(label, f"returns {len(d_ks)} entropies")):
            return part
        h = _floats(o)
        bound = math.log(T)  # -sum p log(p + 1e-12) dips to -1e-12 when one weight is 1: the lower bound allows it
        shape_ok = h.shape == (len(d_ks),) and bool(np.all(np.isfinite(h)))
        part.checks.append(SolutionCheck("B5", _on(label, f"returns {len(d_ks)} entropies, one per d_k, each between "
                                                          f"0 and log {T}"),
                                         shape_ok and bool(np.all((h >= -1e-11) & (h <= bound + 1e-12))),
                                         np.array2string(h, precision=4)))
        if not shape_ok:
            continue
        ref = exercise2_reference(seed, tuple(d_ks), T, reseed=False)
        same = _same(h, ref["unscaled"], 1e-9)  # the lesson's log(p + 1e-12) and an exact entropy: 8e-12 apart
        part.checks.append(SolutionCheck("B5", _on(label, f"the draw: np.random.seed({seed}) once, then per d_k "
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
                     "natural log, np.log")):
                if _same(h, other, 1e-6):
                    part.mistakes.append(key)
                    part.diagnosis.append(f'measured: {says}. Reread "{M.EXERCISE_2}" and "{M.LARGE_SCORES}".')
        if seed == LESSON_SEED and not part.mistakes and np.any(np.diff(h) > 0):  # only where it explains the draw
            part.notes.append("the entropy does not fall at every step: one draw need not (B5's caveat; the "
                              "lesson's own draw rises from d_k = 4 to 16). B5 is decided on the mean over many "
                              "draws")
    return part


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
    for label, seed, d_k, T in (("the lesson's seed 42, d_k = 256, T = 8", LESSON_SEED, A2_D_K, A2_T),
                                (f"seed {draw.seed}, d_k = {other_d_k}, T = {other_T}", draw.seed, other_d_k, other_T)):
        o = call(seed=seed, d_k=d_k, T=T)
        if _stopped(part, call, o, "B6", _on(label, "returns two argsorts")):
            return part
        perm = np.arange(T)
        arrays = [np.asarray(v) for v in o.values] if o.sequence else []
        ok = len(arrays) == 2 and all(a.shape == (T,) and np.array_equal(np.sort(a), perm) for a in arrays)
        part.checks.append(SolutionCheck("B6", _on(label, f"returns two argsorts, each an ordering of the {T} "
                                                          "positions"), ok,
                                         ", ".join(np.array2string(a) for a in arrays) if arrays else
                                         f"{len(o.values)} item(s)"))
        if not ok:
            continue
        unscaled, scaled = arrays
        ref = exercise3_reference(seed, d_k, T)
        same = np.array_equal(unscaled, scaled)
        part.checks.append(SolutionCheck("B6", _on(label, "scaling does not change the ranking: the two argsorts "
                                                          "are equal"),
                                         same, f"unscaled {unscaled}, scaled {scaled}"))
        drawn = np.array_equal(unscaled, ref) or np.array_equal(scaled, ref)
        part.checks.append(SolutionCheck("B6", _on(label, f"the draw: np.random.seed({seed}), q = randn({d_k}), "
                                                          f"Kmat = randn({T}, {d_k})"), drawn,
                                         "the grader's argsort of that draw" if drawn else
                                         "not the argsort of that draw"))
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
    return part
