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

import sdpa_lab.grading.scale as S
from sdpa_lab.grading.catalogue import (  # noqa: F401 - the words, named here too
    CANONICAL_FORWARD,
    DOT_PRODUCT_GROWS,
    EXERCISE_1,
    EXERCISE_2,
    EXERCISE_3,
    FULL_FORMULA,
    LARGE_SCORES,
    MISTAKES,
    NOT_CLAIMED,
    VARIANCE_TRACKS,
    Mistake,
)
from sdpa_lab.grading.runner import Outcome

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
    """exp(x - max) / sum along `axis`; shift "row" (each row's max), "whole" (the array's), "flat" (each row's
    max without keepdims: ValueError where it does not broadcast) or "none"; total "row" (each row's sum) or
    "whole" (the array's)."""
    if shift != "none":
        x = x - {"whole": lambda: x.max(), "flat": lambda: x.max(axis=axis),
                 "row": lambda: x.max(axis=axis, keepdims=True)}[shift]()
    e = np.exp(x)
    return e / (e.sum() if total == "whole" else e.sum(axis=axis, keepdims=True))


SHIFT_MISTAKES = {"row": [], "whole": ["whole_array_max"], "flat": ["max_without_keepdims"],
                  "none": ["no_max_subtraction"]}
TOTAL_MISTAKES = {"row": [], "whole": ["whole_array_sum"]}


@dataclass(frozen=True)
class Softmax:
    """softmax(x, axis), with or without the mistakes a softmax can make (upcast: float64 out, not a mistake)."""

    shift: str = "row"  # or "whole" (x.max()), "flat" (x.max(axis) without keepdims), "none"
    total: str = "row"  # or "whole" (e.sum())
    ignores_axis: bool = False
    upcast: bool = False

    def mistakes(self) -> list[str]:
        return SHIFT_MISTAKES[self.shift] + TOTAL_MISTAKES[self.total] + (
            ["ignores_axis"] if self.ignores_axis else [])

    def __call__(self, x: np.ndarray, axis: int = -1):
        with np.errstate(all="ignore"):
            try:
                p = _softmax(x, -1 if self.ignores_axis else axis, self.shift, self.total)
            except ValueError:  # a max without keepdims that does not broadcast
                return ERROR
        return (p.astype(np.float64) if self.upcast else p,)


@dataclass(frozen=True)
class Attention:
    """The lesson's forward softmax(Q K^T / sqrt(d_k)) V, with or without each classic mistake
    (upcast: float64 out of float32 in, the lesson's own code, not a mistake)."""

    scale: str | float = "sqrt_dk"  # a key of scale.SCALES ("none", "dk", "sqrt_tk", ...), or a constant factor
    where: str = "scores"  # what the scale multiplies: the scores, or after the softmax the "weights", "output"
    axis: int = -1  # or -2 (the queries), 0 (the batch)
    shift: str = "row"  # the softmax's max: or "whole", "flat", "none"
    total: str = "row"  # the softmax's sum: or "whole"
    keys: str = "swap"  # K^T as the last two axes swapped, or "T" (K.T, all three reversed), "none" (K itself)
    v_transpose: bool = False  # weights @ V^T
    causal: bool = False  # the scores above the diagonal masked out before the softmax
    swapped: bool = False
    upcast: bool = False

    def mistakes(self) -> list[str]:
        named = ["other_scale"] if isinstance(self.scale, float) else [m for m in [S.SCALES[self.scale].mistake] if m]
        named += [] if self.where == "scores" or self.scale == "none" else ["softmax_before_scale"]  # 1 after: none
        named += {-1: [], -2: ["wrong_axis"], 0: ["batch_axis"]}[self.axis]
        named += SHIFT_MISTAKES[self.shift] + TOTAL_MISTAKES[self.total]
        named += {"swap": [], "T": ["k_transpose"], "none": ["k_not_transposed"]}[self.keys]
        named += ["v_transposed"] if self.v_transpose else []
        named += ["causal_mask"] if self.causal else []
        named += ["swapped"] if self.swapped else []
        return named

    def formula(self) -> str:
        kt = {"swap": "K^T", "T": "K.T", "none": "K"}[self.keys]
        v = "V^T" if self.v_transpose else "V"
        axis = "" if self.axis == -1 else f", axis={self.axis}"
        soft = {"row": "softmax", "whole": "softmax_minus_whole_max", "flat": "softmax_max_without_keepdims",
                "none": "naive_softmax"}[self.shift]
        soft += "_over_whole_sum" if self.total == "whole" else ""
        scale = S.op(self.scale)
        scores = f"Q {kt}{scale if self.where == 'scores' else ''}"
        w = f"{soft}({f'causal_mask({scores})' if self.causal else scores}{axis})"
        w += scale if self.where == "weights" else ""
        out = {"scores": f"{w} {v}", "weights": f"({w}) {v}", "output": f"({w} {v}){scale}"}[self.where]
        pair = f"({w}, {out})" if self.swapped else f"({out}, {w})"
        return pair + (" in float64 from float32 inputs" if self.upcast else "")

    def __call__(self, Q: np.ndarray, K: np.ndarray, V: np.ndarray):
        c = S.value(self.scale, S.Shapes.of(Q, K, V))
        # The lesson's upcast: the scores are multiplied in the input dtype, then scaled by a float64 scalar.
        c = np.float64(c) if self.upcast else Q.dtype.type(c)
        Kt = {"swap": lambda: np.swapaxes(K, -1, -2), "T": lambda: K.T, "none": lambda: K}[self.keys]()
        with np.errstate(all="ignore"):
            try:
                scores = Q @ Kt
                scores = scores * c if self.where == "scores" else scores
                if self.causal:  # a decoder's mask: key j > query i left out
                    scores = np.where(np.triu(np.ones(scores.shape[-2:], dtype=bool), k=1), -np.inf, scores)
                weights = _softmax(scores, self.axis, self.shift, self.total)
                weights = weights * c if self.where == "weights" else weights
                out = weights @ (np.swapaxes(V, -1, -2) if self.v_transpose else V)
                out = out * c if self.where == "output" else out
            except ValueError:  # shapes that do not multiply
                return ERROR
        return (weights, out) if self.swapped else (out, weights)


OPTIONS = {
    "scale": S.CLASSIC, "where": ("scores",), "axis": (-1, -2, 0),
    "shift": ("row", "whole", "flat", "none"), "total": ("row", "whole"), "ignores_axis": (False, True),
    "keys": ("swap", "T", "none"), "v_transpose": (False, True), "causal": (False, True),
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
    """The mistakes whose variant alone reproduces every output of the learner's function ([] for the correct one).

    A mistake is named only where one set of mistakes explains the outputs: where variants with different
    mistakes, as few of them, reproduce the outputs alike, `variant` is None and `tied` holds them.
    """

    mistakes: tuple[str, ...]
    variant: object | None  # the variant that matched; None when none, or more than one set of mistakes, does
    tied: tuple = ()  # variants with as few, but different, mistakes that all reproduce the outputs


def diagnose(variants: Sequence, probes: Sequence[tuple[tuple, dict]], outcomes: Sequence[Outcome]) -> Diagnosis:
    """The variant with the fewest mistakes that reproduces the learner's outcome on every probe, where it is the
    only set of mistakes that does.

    probes[i] = (args, kwargs) of call i, outcomes[i] what the learner's function gave for them.
    """
    # Agreement to the rounding of the coarsest dtype going in (float32 inputs upcast later carry float32 rounding).
    tols = [max(tolerance(a.dtype) for a in args) for args, _ in probes]
    cases = list(zip(probes, outcomes, tols, strict=True))
    matching = [v for v in variants if all(reproduces(o, v(*args, **kwargs), tol) for (args, kwargs), o, tol in cases)]
    if not matching:
        return Diagnosis((), None)
    fewest = min(len(v.mistakes()) for v in matching)
    best = list({tuple(v.mistakes()): v for v in reversed(matching) if len(v.mistakes()) == fewest}.values())[::-1]
    if len(best) > 1:
        return Diagnosis((), None, tuple(best))
    return Diagnosis(tuple(best[0].mistakes()), best[0])


def returns_none(outcomes: Sequence[Outcome]) -> bool:
    """Whether every call returned None (the learner's process says so for a value that is not numbers)."""
    return bool(outcomes) and all(o.status == "error" and o.message.startswith("returned NoneType None")
                                  for o in outcomes)
