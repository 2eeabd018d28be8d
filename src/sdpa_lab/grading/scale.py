"""The scale a learner's forward applies to Q K^T, measured from its outputs, and named by its value.

Within one row of weights = softmax(c * Q K^T), log w_ij = c * s_ij + (a constant of the row), whatever
the softmax's max or sum: the differences of the log-weights along the row are c times those of the
scores s = Q K^T. A least-squares fit of those differences gives c on each probe (entries that
underflowed are left out), and the fit's residual says whether the weights are such a softmax at all.
c is then compared with what each candidate (1/sqrt(d_k), 1, 1/d_k, 1/sqrt(T_k), ...) gives for that
probe's shapes; one probe has B, T_q, T_k, d_k and d_v all different, so candidates that agree on square
probes differ there. A softmax applied before the scaling shows as c = 1 with rows that sum to the
scale (softmax(Q K^T) / sqrt(d_k)), or an output that is the scale times weights @ V.

Nothing here reads the learner's source: the numbers are measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from sdpa_lab.numbers import number

# How close a measured factor must be to a candidate's value: far above the fit's rounding (below 1e-5
# even on float32 inputs) and far below the gaps between the candidates on a probe whose sizes all
# differ (3% at the least on the grader's (2, 4, 8), (2, 7, 8), (2, 7, 3) probe).
MATCH = 1e-3


@dataclass(frozen=True)
class Shapes:
    """The sizes a forward's scale can be taken from: Q (B, T_q, d_k), K (B, T_k, d_k), V (B, T_k, d_v)."""

    B: int
    T_q: int
    T_k: int
    d_k: int
    d_v: int

    @classmethod
    def of(cls, Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> Shapes:
        return cls(Q.shape[0] if Q.ndim == 3 else 1, Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1])

    def __str__(self) -> str:
        return f"B = {self.B}, T_q = {self.T_q}, T_k = {self.T_k}, d_k = {self.d_k}, d_v = {self.d_v}"


@dataclass(frozen=True)
class Scale:
    """One candidate scale: its value on given shapes, how it reads, and the mistake it is (None: correct)."""

    value: Callable[[Shapes], float]
    label: str  # the factor, as a formula
    op: str  # how the formula of the forward writes it after Q K^T
    mistake: str | None


# The correct scale first; the rest are slips seen in learners' code. 1/d_k is also 1/sqrt(d_k) applied
# twice (the scores divided by sqrt(d_k), then again): the same number, so one name for both.
SCALES = {
    "sqrt_dk": Scale(lambda s: s.d_k ** -0.5, "1/sqrt(d_k)", " / sqrt(d_k)", None),
    "none": Scale(lambda s: 1.0, "1 (no scale)", "", "no_scale"),
    "dk": Scale(lambda s: 1.0 / s.d_k, "1/d_k (= 1/sqrt(d_k) applied twice)", " / d_k", "divides_by_dk"),
    "sqrt_dv": Scale(lambda s: s.d_v ** -0.5, "1/sqrt(d_v)", " / sqrt(d_v)", "divides_by_sqrt_dv"),
    "sqrt_tk": Scale(lambda s: s.T_k ** -0.5, "1/sqrt(T_k)", " / sqrt(T_k)", "divides_by_sqrt_tk"),
    "sqrt_tq": Scale(lambda s: s.T_q ** -0.5, "1/sqrt(T_q)", " / sqrt(T_q)", "divides_by_sqrt_tq"),
    "sqrt_b": Scale(lambda s: s.B ** -0.5, "1/sqrt(B)", " / sqrt(B)", "divides_by_sqrt_b"),
    "fourth_root_dk": Scale(lambda s: s.d_k ** -0.25, "1/d_k^(1/4)", " / d_k^(1/4)", "divides_by_fourth_root_dk"),
    "times_sqrt_dk": Scale(lambda s: s.d_k ** 0.5, "sqrt(d_k)", " * sqrt(d_k)", "multiplies_by_sqrt_dk"),
}
CLASSIC = ("sqrt_dk", "none", "dk", "sqrt_dv")  # the scales enumerated where none could be measured
WHERE = ("scores", "weights", "output")  # what the scale multiplies: the scores (correct), or after the softmax


def value(scale: str | float, shapes: Shapes) -> float:
    """A candidate's factor on these shapes; a float is a constant factor."""
    return float(scale) if isinstance(scale, float) else SCALES[scale].value(shapes)


def op(scale: str | float) -> str:
    return f" * {scale:.6g}" if isinstance(scale, float) else SCALES[scale].op


def matches(measured: float, want: float) -> bool:
    return math.isfinite(measured) and abs(measured - want) <= MATCH * abs(want)


# -- one probe --------------------------------------------------------------

def fit_exponent(scores: np.ndarray, weights: np.ndarray, axis: int, dtype) -> float | None:
    """c such that log(weights) = c * scores + a constant along `axis`, by least squares over the entries
    that did not underflow; nan where too few entries are left to tell, None where the weights are not of
    that form."""
    with np.errstate(all="ignore"):
        w = weights.astype(np.float64)
        use = np.isfinite(w) & (w > np.finfo(dtype).tiny * 1e3)  # subnormals have lost their digits
        logw = np.log(np.where(use, w, 1.0))
        count = use.sum(axis=axis, keepdims=True)
        mean_l = np.where(count > 0, (logw * use).sum(axis=axis, keepdims=True) / np.maximum(count, 1), 0.0)
        mean_s = np.where(count > 0, (scores * use).sum(axis=axis, keepdims=True) / np.maximum(count, 1), 0.0)
    dl, ds = (logw - mean_l) * use, (scores - mean_s) * use
    denominator = float(np.sum(ds * ds))
    if not np.all(np.isfinite(ds)):
        return None
    if denominator <= 0:  # no row has two entries left
        return float("nan")
    c = float(np.sum(dl * ds)) / denominator
    # Rounding of the learner's scores and weights in their dtype, against the spread being fitted.
    spread = max(1.0, float(np.max(np.abs(c * ds))))
    if float(np.max(np.abs(dl - c * ds))) > 10 * math.sqrt(np.finfo(dtype).eps) * spread:
        return None
    return c


def _uniform(x: np.ndarray) -> float:
    """The common value of x's entries (to MATCH), or nan where they differ or are not finite."""
    if x.size == 0 or not np.all(np.isfinite(x)):
        return float("nan")
    mid = float(np.mean(x))
    return mid if np.all(np.abs(x - mid) <= MATCH * max(abs(mid), 1e-300)) else float("nan")


@dataclass(frozen=True)
class Fit:
    """What one probe's outputs show: c inside the exponent, along which axis the weights are normalized,
    the common sum of their rows (nan when rows differ) and the factor of the output over weights @ V."""

    shapes: Shapes
    c: float
    axis: int
    row_sum: float
    out_factor: float

    @property
    def where(self) -> str:
        """What the scale multiplies, as this probe shows it: the scores, or (with 1 inside exp) the weights
        (their rows sum to it) or the output (it is that times weights @ V)."""
        if matches(self.c, 1.0) and math.isfinite(self.row_sum) and not matches(self.row_sum, 1.0):
            return "weights"
        if matches(self.c, 1.0) and math.isfinite(self.out_factor) and not matches(self.out_factor, 1.0):
            return "output"
        return "scores"

    @property
    def factor(self) -> float:
        return {"scores": self.c, "weights": self.row_sum, "output": self.out_factor}[self.where]

    def scales(self) -> set[tuple[str, str]]:
        """The (where, candidate) pairs this probe's numbers agree with (where all three are 1, with each
        placement of a candidate whose value is 1 here)."""
        wheres = WHERE if self.where == "scores" and matches(self.c, 1.0) else (self.where,)
        return {(where, k) for where in wheres for k, s in SCALES.items()
                if matches(self.factor, s.value(self.shapes))}


def fit_probe(Q: np.ndarray, K: np.ndarray, V: np.ndarray, values: Sequence[np.ndarray]) -> Fit | None:
    """The Fit of one forward call's returned arrays (output and weights, in either order), or None."""
    shapes = Shapes.of(Q, K, V)
    want = (*Q.shape[:-1], K.shape[-2])
    scores = Q.astype(np.float64) @ np.swapaxes(K.astype(np.float64), -1, -2)
    dtype = np.result_type(Q, K, V)
    for w, out in ((values[-1], values[0]), (values[0], values[-1])) if len(values) == 2 else ():
        if w.shape != want or w.dtype.kind != "f":
            continue
        for axis in (-1, -2, 0):
            c = fit_exponent(scores, w, axis, dtype)
            if c is not None and math.isnan(c):  # one-hot rows: nothing to measure in these weights, and
                break  # another axis could fit them spuriously
            if c is None or c <= 0:  # not a softmax along this axis (a positive scale keeps the order)
                continue
            with np.errstate(all="ignore"):
                sums = w.astype(np.float64).sum(axis=axis, keepdims=True)
                factor = float("nan")
                if axis == -1 and out.shape == (*Q.shape[:-1], V.shape[-1]) and np.all(np.isfinite(sums)):
                    pred = (w / sums) @ V.astype(np.float64)
                    factor = float(np.sum(out * pred) / np.sum(pred * pred))
                    off = float(np.max(np.abs(out - factor * pred) / np.maximum(1.0, np.abs(pred))))
                    factor = factor if off <= 10 * math.sqrt(np.finfo(dtype).eps) else float("nan")
            return Fit(shapes, c, axis, _uniform(sums), factor)
    return None


# -- across the probes ---------------------------------------------------------

@dataclass(frozen=True)
class Reading:
    """The scale measured on every probe where it could be: the candidates that agree on all of them."""

    fits: tuple[tuple[str, Fit], ...]  # (probe name, its fit)
    where: str = ""  # "scores", "weights" or "output"; "" where no candidate agrees on every probe
    scales: tuple[str | float, ...] = ()  # the candidates (keys of SCALES), or one constant factor

    @property
    def named(self) -> bool:
        return bool(self.scales)

    def mistakes(self) -> list[str]:
        """The mistakes the reading alone shows (the first candidate's, and a softmax before the scale)."""
        if not self.named:
            return ["other_scale"] if self.fits else []
        s = self.scales[0]
        named = ["other_scale"] if isinstance(s, float) else [m for m in [SCALES[s].mistake] if m]
        return named + (["softmax_before_scale"] if self.where != "scores" else [])


def read(probes: Sequence[tuple[str, tuple, dict]], outcomes) -> Reading:
    """The scale of a forward's outcomes on the probes (name, (Q, K, V), kwargs)."""
    fits = []
    for (name, (Q, K, V), _), o in zip(probes, outcomes, strict=True):
        if o.ok and o.sequence and len(o.values) == 2:
            fit = fit_probe(Q, K, V, o.values)
            if fit is not None:
                fits.append((name, fit))
    if not fits:
        return Reading(())
    agree = set.intersection(*(f.scales() for _, f in fits))
    for where in WHERE:
        keys = tuple(k for k in SCALES if (where, k) in agree)
        if keys:
            return Reading(tuple(fits), where, keys)
    wheres = {f.where for _, f in fits}
    constant = _uniform(np.array([f.factor for _, f in fits]))
    if len(wheres) == 1 and math.isfinite(constant) and constant > 0:  # the same factor whatever the shapes
        return Reading(tuple(fits), wheres.pop(), (constant,))
    return Reading(tuple(fits))


def _most_telling(reading: Reading) -> tuple[str, Fit]:
    """The probe whose shapes tell the candidates apart best: the most distinct sizes."""
    return max(reading.fits, key=lambda nf: len({nf[1].shapes.B, nf[1].shapes.T_q, nf[1].shapes.T_k,
                                                 nf[1].shapes.d_k, nf[1].shapes.d_v}))


def _applied(where: str, factor: float) -> str:
    """What the measured factor is, in words."""
    if where == "scores":
        return f"the factor your code applies to Q K^T before the softmax is c = {number(factor, digits=4)}"
    after = "the weights' rows sum to" if where == "weights" else "the output is weights @ V times"
    return f"the softmax gets the unscaled scores Q K^T (c = 1 inside exp) and {after} {number(factor, digits=4)}"


def describe(reading: Reading) -> list[str]:
    """What the measurement shows, in words, for the diagnosis (nothing where the scale is right)."""
    if not reading.fits or reading.scales[:1] == ("sqrt_dk",) and reading.where == "scores":
        return []
    name, fit = _most_telling(reading)
    on = f"on {name} ({fit.shapes}), where 1/sqrt(d_k) = {number(SCALES['sqrt_dk'].value(fit.shapes), digits=4)}"
    n = f"all {len(reading.fits)} probes" if len(reading.fits) > 1 else "the one probe"
    n += " it was measured on"
    candidates = ", ".join(s.label for s in SCALES.values())
    if not reading.named:
        each = "; ".join(f"{number(f.factor, digits=4)} ({f.shapes})" for _, f in reading.fits)
        return [f"measured: {_applied(fit.where, fit.factor)} {on}: a scale that matches none of {candidates} "
                f"on {n} ({each}). The lesson's scale is 1 / np.sqrt(d_k), d_k = Q.shape[-1]"]
    s = reading.scales[0]
    if isinstance(s, float):
        return [f"measured: {_applied(reading.where, s)} on {n}, whatever the shapes "
                f"(1/{number(s, digits=4)} = {number(1 / s, digits=4)}): a scale that matches none of {candidates}; "
                "a number written into the code rather than taken from Q's shape? The lesson's scale is "
                "1 / np.sqrt(d_k), d_k = Q.shape[-1]"]
    label = " or ".join(SCALES[k].label for k in reading.scales)
    placed = "" if reading.where == "scores" else ", applied after the softmax"
    factor = {"scores": fit.c, "weights": fit.row_sum, "output": fit.out_factor}[reading.where]
    return [f"measured: {_applied(reading.where, factor)} {on}: {label}{placed}, on {n}"]
