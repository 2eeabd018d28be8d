"""The classic mistakes, as runnable variants of the lesson's code, and the diagnosis that names them.

A diagnosis is a measurement, never a reading of the learner's source: the
learner's outputs on probe inputs are compared with what each variant (the
lesson's forward with some of the mistakes made) returns on the same inputs.
The variant with the fewest mistakes that reproduces every output, errors
included, names the mistakes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from sdpa_lab.grading import scale as S
from sdpa_lab.grading.runner import Outcome

# Section titles of the lesson, to reread.
FULL_FORMULA = "The Full Formula, Piece by Piece"
DOT_PRODUCT_GROWS = "Why a Dot Product Grows With Dimension"
VARIANCE_TRACKS = "Proving It: Score Variance Tracks d_k"
LARGE_SCORES = "Why Large Scores Break Softmax"
CANONICAL_FORWARD = "The Canonical Forward in NumPy"
EXERCISE_1 = "Exercise 1: Measure the Variance at d_k = 1024"
EXERCISE_2 = "Exercise 2: Sweep the Softmax Entropy Across d_k"
EXERCISE_3 = "Exercise 3: Confirm Scaling Does Not Change the Ranking"


@dataclass(frozen=True)
class Mistake:
    """One classic mistake: what the code does, how to fix it, and where the lesson explains it."""

    title: str
    does: str
    fix: str
    reread: str


MISTAKES = {
    "no_scale": Mistake(
        "no scale", "the scores Q K^T go into the softmax undivided",
        "divide the scores by sqrt(d_k) before the softmax",
        f'"{FULL_FORMULA}" (Step 2) and "{LARGE_SCORES}"'),
    "divides_by_dk": Mistake(
        "divides by d_k (or by sqrt(d_k) twice) instead of sqrt(d_k)", "the scores are divided by d_k, which "
        "shrinks their variance to 1/d_k; dividing by sqrt(d_k) twice gives the same number, so the outputs cannot "
        "tell the two apart", "divide by sqrt(d_k), the standard deviation of the scores, once",
        f'"{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_dv": Mistake(
        "divides by sqrt(d_v) instead of sqrt(d_k)", "the scores are divided by the square root of V's width d_v "
        "(V.shape[-1]), which equals sqrt(d_k) only when d_v = d_k", "take d_k from the queries and keys: "
        "d_k = Q.shape[-1] (or K.shape[-1]), and divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_tk": Mistake(
        "divides by sqrt(T_k), the number of keys, instead of sqrt(d_k)", "the scale is taken from the wrong axis "
        "of a shape: K.shape[1] (or K.shape[-2]) is the number of key positions T_k, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[-1] (or K.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_tq": Mistake(
        "divides by sqrt(T_q), the number of queries, instead of sqrt(d_k)", "the scale is taken from the wrong "
        "axis of a shape: Q.shape[1] (or Q.shape[-2]) is the number of query positions T_q, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[-1] (or K.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_b": Mistake(
        "divides by sqrt(B), the batch size, instead of sqrt(d_k)", "the scale is taken from the wrong axis of a "
        "shape: Q.shape[0] is the batch size B, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[-1] (or K.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_fourth_root_dk": Mistake(
        "divides by the fourth root of d_k instead of sqrt(d_k)", "the scores are divided by d_k^(1/4), the square "
        "root taken twice (np.sqrt(np.sqrt(d_k)), or np.sqrt of a d_k that is already a square root), so their "
        "variance stays sqrt(d_k), not 1", "take the square root once: scores / np.sqrt(d_k), d_k = Q.shape[-1]",
        f'"{DOT_PRODUCT_GROWS}"'),
    "multiplies_by_sqrt_dk": Mistake(
        "multiplies by sqrt(d_k) instead of dividing", "the scores are multiplied by sqrt(d_k), which makes their "
        "variance d_k^2 and the softmax even more one-hot than with no scale", "divide: scores / np.sqrt(d_k)",
        f'"{DOT_PRODUCT_GROWS}" and "{LARGE_SCORES}"'),
    "divides_by_sqrt_n": Mistake(
        "divides by sqrt(n_samples) instead of sqrt(d_k)", "the scale is taken from the wrong axis of a shape: "
        "Q.shape[0] is the number of samples n_samples, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[1] (or Q.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{VARIANCE_TRACKS}" and "{DOT_PRODUCT_GROWS}"'),
    "other_scale": Mistake(
        "a scale that is not 1/sqrt(d_k)", "the scores are multiplied by a factor that matches none of the usual "
        "slips (measured above)", "divide the scores by sqrt(d_k), with d_k = Q.shape[-1] taken from the inputs",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "softmax_before_scale": Mistake(
        "softmax before the scaling", "the softmax gets the unscaled scores Q K^T, and the scale comes after it: on "
        "the weights (whose rows then sum to the scale, not to 1) or on the output, where it no longer keeps the "
        "softmax out of its one-hot regime", "scale the scores first, then take the softmax: "
        "softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_k), axis=-1)",
        f'"{FULL_FORMULA}" (Steps 2 and 3) and "{LARGE_SCORES}"'),
    "sums_over_samples": Mistake(
        "scores summed over the samples (axis=0)", "np.sum(Q * K, axis=0) adds up each feature's n_samples "
        "products: d_k sums of n_samples terms each, whose variance is about n_samples, not the n_samples scores "
        "q . k of length d_k whose variance is d_k", "sum over the features, the last axis: np.sum(Q * K, axis=1) "
        "(or axis=-1), one score per pair of rows",
        f'"{VARIANCE_TRACKS}"'),
    "wrong_axis": Mistake(
        "softmax over the wrong axis", "the softmax normalizes over the queries: the columns of the weights sum to 1, "
        "not the rows", "take the softmax over the last axis (axis=-1), the keys",
        f'"{FULL_FORMULA}" (Step 3)'),
    "batch_axis": Mistake(
        "softmax over the batch axis", "the softmax normalizes over axis 0, across the sequences of the batch",
        "take the softmax over the last axis (axis=-1), the keys", f'"{FULL_FORMULA}" (Step 3)'),
    "ignores_axis": Mistake(
        "softmax ignores its axis argument", "the softmax always normalizes over the last axis, whatever `axis` says",
        "pass `axis` on to max and sum", f'"{LARGE_SCORES}" (the softmax function)'),
    "no_max_subtraction": Mistake(
        "no max subtraction", "exp overflows on large scores: the weights come out inf or nan there, "
        "while small scores give the right weights",
        "subtract the row max (keepdims=True) before exp; softmax does not change",
        f'"{FULL_FORMULA}" (Step 3: the numerically stable softmax)'),
    "whole_array_max": Mistake(
        "softmax subtracts the whole array's max", "the max subtracted before exp is the largest score of the whole "
        "array (x.max()), not of each row: a row whose scores lie far below the array's max underflows to 0 / 0 = nan",
        "subtract each row's own max: x - x.max(axis=axis, keepdims=True)",
        f'"{FULL_FORMULA}" (Step 3: the numerically stable softmax)'),
    "whole_array_sum": Mistake(
        "softmax divides by the whole array's sum", "exp(x) is divided by the sum over the whole array (e.sum()), "
        "not over each row, so no row of weights sums to 1",
        "divide by each row's own sum: e / e.sum(axis=axis, keepdims=True)",
        f'"{FULL_FORMULA}" (Step 3)'),
    "k_transpose": Mistake(
        "K.T on a 3-D array", "K.T reverses all three axes, (B, T, d_k) -> (d_k, T, B), so the batch and feature "
        "axes trade places: the matmul fails on most shapes and mixes batches on the rest",
        "swap only the last two axes: K.transpose(0, 2, 1) or np.swapaxes(K, -1, -2)",
        f'"{FULL_FORMULA}" (Step 1: K^T has shape (B, d_k, T)) and "{CANONICAL_FORWARD}"'),
    "scaled_entropies": Mistake(
        "entropies of a scaled softmax in Exercise 2", "the exercise asks for the entropy of the *unscaled* "
        "softmax(K q) at each d_k, and these are the entropies of scores multiplied by a factor (measured above)",
        "take the softmax of the raw scores K @ q, with no scale, to watch it saturate as d_k grows",
        f'"{EXERCISE_2}" and "{LARGE_SCORES}"'),
    "reseeded": Mistake(
        "the stream reseeded before each d_k", "np.random.seed is called inside the loop, so every d_k starts the "
        "stream afresh instead of continuing it as the lesson does", "seed once, before the loop over d_k",
        f'"{EXERCISE_2}"'),
    "bits": Mistake(
        "entropies in bits", "the entropy is taken with log2, so every value is the lesson's divided by log 2",
        "use the natural log, np.log, as the lesson's entropy does", f'"{EXERCISE_2}"'),
    "reversed": Mistake(
        "one argsort reversed", "one of the two argsorts is taken in descending order and the other ascending, so "
        "equal rankings look different", "sort both the same way (np.argsort's ascending order)",
        f'"{EXERCISE_3}"'),
    "descending": Mistake(
        "argsorts in descending order", "both argsorts are reversed (descending), while the exercise compares "
        "np.argsort's ascending order", "use np.argsort(weights) as it comes, ascending", f'"{EXERCISE_3}"'),
    "swapped": Mistake(
        "output and weights swapped", "it returns (weights, output)",
        "return out, weights, in that order", f'"{CANONICAL_FORWARD}"'),
}


# What the lesson never claims is no mistake: the grader notes it, with its fix, and passes the function.
NOT_CLAIMED = {
    "upcast": Mistake(
        "float32 in, float64 out", "the float32 scores are scaled by a float64 scalar, which promotes them and "
        "everything after them to float64. The lesson's own `/ np.sqrt(d_k)` does this (np.sqrt returns a float64 "
        "NumPy scalar, and NumPy 2 promotes a float32 array divided by it), and the lesson never claims that the "
        "dtype is kept, so this is a note, not a fail",
        "to keep float32, scale by a Python float (math.sqrt(d_k)) or by a scalar of the input's dtype "
        "(Q.dtype.type(np.sqrt(d_k)))",
        f'"{CANONICAL_FORWARD}"'),
}


# -- comparing outputs ------------------------------------------------------

ERROR = "error"  # a variant that raises on a probe


def tolerance(dtype) -> float:
    """How close two computations of the same formula must agree: sqrt(eps) of the dtype
    (1.5e-8 for float64, 3.5e-4 for float32), far above rounding and far below any of the mistakes."""
    return float(np.sqrt(np.finfo(dtype).eps))


def max_difference(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |a - b| relative to max(1, |b|), where both are finite; inf where one is finite and the other not."""
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return float("inf")
    if not fa.any():
        return 0.0
    a64, b64 = a[fa].astype(np.float64), b[fb].astype(np.float64)
    return float(np.max(np.abs(a64 - b64) / np.maximum(1.0, np.abs(b64))))


def same_arrays(got: Sequence[np.ndarray], want: Sequence[np.ndarray], tol: float) -> bool:
    """Same number of arrays, each of the same shape and dtype and equal to `tol` (non-finite entries alike)."""
    if len(got) != len(want):
        return False
    for a, b in zip(got, want, strict=True):
        if a.shape != b.shape or a.dtype != b.dtype or a.dtype.kind != "f":
            return False
        if max_difference(a, b) > tol:
            return False
    return True


def reproduces(outcome: Outcome, predicted, tol: float) -> bool:
    """Whether a learner's outcome on a probe is what a variant predicts: both raise, or the same arrays."""
    if isinstance(predicted, str):
        return outcome.status == "error"
    return outcome.ok and same_arrays(outcome.values, predicted, tol)


# -- the variants -----------------------------------------------------------

def _softmax(x: np.ndarray, axis: int, shift: str = "row", total: str = "row") -> np.ndarray:
    """exp(x - max) / sum along `axis`; shift "row" (each row's max), "whole" (the array's) or "none";
    total "row" (each row's sum) or "whole" (the array's)."""
    if shift != "none":
        x = x - (x.max() if shift == "whole" else x.max(axis=axis, keepdims=True))
    e = np.exp(x)
    return e / (e.sum() if total == "whole" else e.sum(axis=axis, keepdims=True))


SHIFT_MISTAKES = {"row": [], "whole": ["whole_array_max"], "none": ["no_max_subtraction"]}
TOTAL_MISTAKES = {"row": [], "whole": ["whole_array_sum"]}


@dataclass(frozen=True)
class Softmax:
    """softmax(x, axis), with or without the mistakes a softmax can make (upcast: float64 out, not a mistake)."""

    shift: str = "row"  # or "whole" (x.max()), "none"
    total: str = "row"  # or "whole" (e.sum())
    ignores_axis: bool = False
    upcast: bool = False

    def mistakes(self) -> list[str]:
        return SHIFT_MISTAKES[self.shift] + TOTAL_MISTAKES[self.total] + (
            ["ignores_axis"] if self.ignores_axis else [])

    def __call__(self, x: np.ndarray, axis: int = -1):
        with np.errstate(all="ignore"):
            p = _softmax(x, -1 if self.ignores_axis else axis, self.shift, self.total)
        return (p.astype(np.float64) if self.upcast else p,)


@dataclass(frozen=True)
class Attention:
    """The lesson's forward softmax(Q K^T / sqrt(d_k)) V, with or without each classic mistake
    (upcast: float64 out of float32 in, the lesson's own code, not a mistake)."""

    scale: str | float = "sqrt_dk"  # a key of scale.SCALES ("none", "dk", "sqrt_tk", ...), or a constant factor
    where: str = "scores"  # what the scale multiplies: the scores, or after the softmax the "weights", "output"
    axis: int = -1  # or -2 (the queries), 0 (the batch)
    shift: str = "row"  # the softmax's max: or "whole", "none"
    total: str = "row"  # the softmax's sum: or "whole"
    k_transpose: bool = False  # K.T instead of swapping the last two axes
    swapped: bool = False
    upcast: bool = False

    def mistakes(self) -> list[str]:
        named = ["other_scale"] if isinstance(self.scale, float) else [m for m in [S.SCALES[self.scale].mistake] if m]
        named += [] if self.where == "scores" or self.scale == "none" else ["softmax_before_scale"]  # 1 after: none
        named += {-1: [], -2: ["wrong_axis"], 0: ["batch_axis"]}[self.axis]
        named += SHIFT_MISTAKES[self.shift] + TOTAL_MISTAKES[self.total]
        named += ["k_transpose"] if self.k_transpose else []
        named += ["swapped"] if self.swapped else []
        return named

    def formula(self) -> str:
        kt = "K.T" if self.k_transpose else "K^T"
        axis = "" if self.axis == -1 else f", axis={self.axis}"
        soft = {"row": "softmax", "whole": "softmax_minus_whole_max", "none": "naive_softmax"}[self.shift]
        soft += "_over_whole_sum" if self.total == "whole" else ""
        scale = S.op(self.scale)
        w = f"{soft}(Q {kt}{scale if self.where == 'scores' else ''}{axis})"
        w += scale if self.where == "weights" else ""
        out = {"scores": f"{w} V", "weights": f"({w}) V", "output": f"({w} V){scale}"}[self.where]
        pair = f"({w}, {out})" if self.swapped else f"({out}, {w})"
        return pair + (" in float64 from float32 inputs" if self.upcast else "")

    def __call__(self, Q: np.ndarray, K: np.ndarray, V: np.ndarray):
        c = S.value(self.scale, S.Shapes.of(Q, K, V))
        # The lesson's upcast: the scores are multiplied in the input dtype, then scaled by a float64 scalar.
        c = np.float64(c) if self.upcast else Q.dtype.type(c)
        Kt = K.T if self.k_transpose else np.swapaxes(K, -1, -2)
        with np.errstate(all="ignore"):
            try:
                scores = Q @ Kt
                weights = _softmax(scores * c if self.where == "scores" else scores, self.axis, self.shift,
                                   self.total)
                weights = weights * c if self.where == "weights" else weights
                out = weights @ V
                out = out * c if self.where == "output" else out
            except ValueError:  # shapes that do not multiply
                return ERROR
        return (weights, out) if self.swapped else (out, weights)


OPTIONS = {
    "scale": S.CLASSIC, "where": ("scores",), "axis": (-1, -2, 0),
    "shift": ("row", "whole", "none"), "total": ("row", "whole"), "ignores_axis": (False, True),
    "k_transpose": (False, True),
    "swapped": (False, True), "upcast": (False, True),
}


def _all(cls, **fixed) -> list:
    """Every combination of a variant class's settings (those in `fixed` given), correct one first."""
    names = [f.name for f in fields(cls)]
    combos = itertools.product(*(fixed.get(n, OPTIONS[n]) for n in names))
    return [cls(**dict(zip(names, combo, strict=True))) for combo in combos]


SOFTMAX_VARIANTS = _all(Softmax)
ATTENTION_VARIANTS = _all(Attention)


def forward_variants(reading: S.Reading) -> list:
    """The variants of the forward to compare with: with the scale measured (its candidates, where it is
    applied), or, where none could be measured, with each classic scale."""
    return _all(Attention, scale=reading.scales, where=(reading.where,)) if reading.named else ATTENTION_VARIANTS


@dataclass(frozen=True)
class Diagnosis:
    """The mistakes whose variant reproduces every output of the learner's function ([] for the correct one)."""

    mistakes: tuple[str, ...]
    variant: object | None  # the variant that matched; None when no variant reproduces the outputs
    alternatives: int = 0  # other variants with as few mistakes that match too


def diagnose(variants: Sequence, probes: Sequence[tuple[tuple, dict]], outcomes: Sequence[Outcome]) -> Diagnosis:
    """The variant with the fewest mistakes that reproduces the learner's outcome on every probe.

    probes[i] = (args, kwargs) of call i, outcomes[i] what the learner's function gave for them.
    """
    # Agreement to the rounding of the coarsest dtype going in (float32 inputs upcast later carry float32 rounding).
    tols = [max(tolerance(a.dtype) for a in args) for args, _ in probes]
    cases = list(zip(probes, outcomes, tols, strict=True))
    matching = [v for v in variants if all(reproduces(o, v(*args, **kwargs), tol) for (args, kwargs), o, tol in cases)]
    if not matching:
        return Diagnosis((), None)
    fewest = min(len(v.mistakes()) for v in matching)
    best = [v for v in matching if len(v.mistakes()) == fewest]
    return Diagnosis(tuple(best[0].mistakes()), best[0], len(best) - 1)
