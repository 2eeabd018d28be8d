"""The claims registry: every claim of the lesson, how it is decided, and why its tolerance is what it is.

Each `Claim` restates one claim of the lesson in the project's words and
decides it from the result CSVs into one or more `Check`s. The checker
(`sdpa-lab check`), the claims table (results/claims.csv) and the report all
read this one registry; no claim's numbers are restated anywhere else.

Tolerances:
- replication (A): half a unit in the last digit the lesson printed;
- sample statistics (B): k standard errors of the estimator, with k from a
  Bonferroni split of ALPHA_FAMILY over every statistical check of the run,
  so that a correct pipeline run with fresh seeds fails by chance less than
  once in 1 / ALPHA_FAMILY runs;
- shapes, orderings and counts: exact; floating-point sums: a rounding bound.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist

import numpy as np
import pandas as pd

from sdpa_lab.results import Results, ResultsError
from sdpa_lab.scales import scale_difference

# A correct pipeline, re-run with fresh seeds, fails some statistical check by chance
# in fewer than one run in 10,000.
ALPHA_FAMILY = 1e-4

# Verdicts. Only FAILS makes the checker exit non-zero.
HOLDS = "holds"
FAILS = "fails"
NOT_PER_DRAW = "holds on average, not per draw"
NOT_MEASURED = "not measured"
INCONCLUSIVE = "inconclusive"  # a direction claimed, not contradicted, but within the noise: more samples needed

# How measured is compared with expected (deviation = measured - expected, tol = tolerance).
RELATIONS = {
    "equals": lambda dev, tol: dev == 0,  # exact
    "within": lambda dev, tol: abs(dev) <= tol,  # |measured - expected| <= tol
    "not above": lambda dev, tol: dev <= tol,  # measured <= expected + tol
    "not below": lambda dev, tol: dev >= -tol,  # measured >= expected - tol
    "above": lambda dev, tol: dev > tol,  # measured exceeds expected by more than the noise
    "below": lambda dev, tol: dev < -tol,  # measured falls short of expected by more than the noise
}

# For a claimed direction, only a significant deviation the other way contradicts the claim;
# in between, the sample is too small to tell.
CONTRADICTED = {
    "above": lambda dev, tol: dev < -tol,
    "below": lambda dev, tol: dev > tol,
}


@dataclass(frozen=True)
class Check:
    """One decided comparison: a measured number against an expected one."""

    claim: str
    check: str  # what is compared, in words
    parameters: str  # the sweep point, e.g. "d_k=64"
    relation: str  # a key of RELATIONS
    expected: float
    measured: float
    basis: str  # "printed" | "statistical" | "exact" | "rounding" | "missing"
    source: str  # the CSV the measured number comes from
    tolerance: float = 0.0
    se: float = float("nan")  # standard error, for statistical checks (tolerance = k * se)
    literal: bool = False  # the lesson's literal single-draw statement, not the general claim
    note: str = ""
    cell: tuple | None = None  # the CSV cell the measured number moves with (file, row selector, column)

    @property
    def deviation(self) -> float:
        return self.measured - self.expected

    @property
    def margin(self) -> float:
        """deviation / tolerance; for an exact check (no tolerance) 0 when it holds, +-inf when not."""
        if self.tolerance > 0:
            return self.deviation / self.tolerance
        if self.basis == "missing" or RELATIONS[self.relation](self.deviation, 0.0):
            return 0.0
        return math.copysign(math.inf, self.deviation)

    @property
    def verdict(self) -> str:
        if self.basis == "missing":
            return NOT_MEASURED
        if RELATIONS[self.relation](self.deviation, self.tolerance):
            return HOLDS
        if self.literal:
            return NOT_PER_DRAW
        contradicted = CONTRADICTED.get(self.relation)
        if contradicted and not contradicted(self.deviation, self.tolerance):
            return INCONCLUSIVE
        return FAILS


@dataclass(frozen=True)
class Claim:
    """A claim of the lesson: what it says, what is true, and how it is decided."""

    id: str
    title: str
    statement: str  # the claim in the project's words
    lesson_says: str  # what the lesson printed or wrote
    lesson_section: str  # where in the lesson
    reads: tuple[str, ...]  # result CSVs
    tolerance_reason: str
    decide: Callable[[Results], list[Check]] = field(repr=False)


# --------------------------------------------------------------------------
# Building checks

def _cell(measured, kw) -> tuple | None:
    return kw.pop("cell", None) or getattr(measured, "cell", None)


def printed(claim, check, parameters, measured, value, decimals, source) -> Check:
    """measured must round to the lesson's printed `value` at `decimals` places."""
    return Check(claim, check, parameters, "within", float(value), float(measured), "printed", source,
                 tolerance=0.5 * 10.0**-decimals, cell=_cell(measured, {}))


def statistical(claim, check, parameters, measured, expected, se, relation, source, **kw) -> Check:
    """A sample statistic against theory; the tolerance (k * se) is set once k is known."""
    cell = _cell(measured, kw)
    return Check(claim, check, parameters, relation, float(expected), float(measured), "statistical", source,
                 se=float(se), cell=cell, **kw)


def exact(claim, check, parameters, measured, expected, source, relation="equals", **kw) -> Check:
    cell = _cell(measured, kw)
    return Check(claim, check, parameters, relation, float(expected), float(measured), "exact", source,
                 cell=cell, **kw)


def missing(claim, check, parameters, source, why) -> Check:
    return Check(claim, check, parameters, "equals", float("nan"), float("nan"), "missing", source, note=why)


def bonferroni_k(n_checks: int, alpha_family: float = ALPHA_FAMILY) -> float:
    """Two-sided normal quantile giving each of n_checks a false-alarm rate alpha_family / n_checks."""
    if n_checks < 1:
        return float("nan")
    return NormalDist().inv_cdf(1.0 - alpha_family / (2.0 * n_checks))


def variance_se(d: float, n: int) -> float:
    """Standard error of the sample variance of n independent q.k scores of length d (Var = d, E S^4 = 3d^2 + 6d)."""
    return d * math.sqrt((2.0 + 6.0 / d) / n)


# --------------------------------------------------------------------------
# The lesson's printed numbers (the expected values of the replication claims)

LESSON_VARIANCE = {  # d_k: (raw variance printed to 3 places, scaled to 4)
    4: (3.988, 0.9971), 16: (15.891, 0.9932), 64: (64.249, 1.0039), 256: (256.391, 1.0015)}
LESSON_RAW_SCORES = (-3.12, 13.41, -27.0, 12.41, 2.39, 24.29, -1.23, -2.77)  # 2 places
LESSON_SCALED_SCORES = (-0.2, 0.84, -1.69, 0.78, 0.15, 1.52, -0.08, -0.17)  # 2 places
LESSON_UNSCALED_WEIGHTS = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)  # 4 places
LESSON_SCALED_WEIGHTS = (0.0634, 0.1781, 0.0142, 0.1673, 0.0894, 0.3514, 0.0713, 0.0648)  # 4 places
LESSON_COLLAPSE = {  # quantity: (printed value, places)
    "unscaled_max_weight": (1.0, 4), "unscaled_entropy": (0.0003, 4),
    "scaled_max_weight": (0.3514, 4), "scaled_entropy": (1.7909, 4), "uniform_entropy": (2.0794, 4)}
LESSON_WEIGHTS_6X6 = (  # 3 places
    (0.057, 0.41, 0.13, 0.21, 0.104, 0.09),
    (0.072, 0.606, 0.025, 0.089, 0.079, 0.128),
    (0.172, 0.162, 0.096, 0.093, 0.185, 0.291),
    (0.116, 0.108, 0.216, 0.123, 0.173, 0.263),
    (0.056, 0.104, 0.27, 0.301, 0.05, 0.219),
    (0.1, 0.083, 0.496, 0.134, 0.107, 0.081),
)
LESSON_STRONGEST_LINKS = {1: 1, 5: 2}  # query row -> key it attends to most


# --------------------------------------------------------------------------
# A: replication

def _mismatched_axes(got: Sequence[int], want: Sequence[int]) -> int:
    """How many axes of a shape differ from the expected one (a missing or extra axis counts too)."""
    return sum(a != b for a, b in zip(got, want, strict=True)) + abs(len(got) - len(want))


def decide_a1(R: Results) -> list[Check]:
    src = "lesson_variance.csv"
    out = []
    for d, (raw, scaled) in LESSON_VARIANCE.items():
        out.append(printed("A1", "raw score variance", f"d_k={d}",
                           R.value(src, d_k=d, quantity="raw_variance"), raw, 3, src))
        out.append(printed("A1", "scaled score variance", f"d_k={d}",
                           R.value(src, d_k=d, quantity="scaled_variance"), scaled, 4, src))
    return out


def decide_a2(R: Results) -> list[Check]:
    src = "lesson_softmax_collapse.csv"
    out = []
    for j in range(8):
        for quantity, values, places in (("raw_score", LESSON_RAW_SCORES, 2),
                                         ("scaled_score", LESSON_SCALED_SCORES, 2),
                                         ("unscaled_weight", LESSON_UNSCALED_WEIGHTS, 4),
                                         ("scaled_weight", LESSON_SCALED_WEIGHTS, 4)):
            out.append(printed("A2", quantity.replace("_", " "), f"key={j}",
                               R.value(src, quantity=quantity, key=j), values[j], places, src))
    out.append(exact("A2", "unscaled weights one-hot on position", "d_k=256, T=8",
                     R.value(src, quantity="unscaled_argmax"), 5, src))
    for quantity, (value, places) in LESSON_COLLAPSE.items():
        out.append(printed("A2", quantity.replace("_", " "), "d_k=256, T=8", R.value(src, quantity=quantity),
                           value, places, src))
    return out


def decide_a3(R: Results) -> list[Check]:
    src = "lesson_forward.csv"
    table = R[src]
    out = []
    expected_shapes = {"input_shape": (1, 6, 16), "weights_shape": (1, 6, 6), "output_shape": (1, 6, 16)}
    for quantity, shape in expected_shapes.items():
        got = [R.value(src, quantity=quantity, col=axis) for axis in range(len(shape))]
        out.append(exact("A3", f"axes of the {quantity.split('_')[0]} whose size differs from {shape}",
                         "(B,T,d_k)=(1,6,16)", _mismatched_axes(got, shape), 0, src, cell=got[0].cell))
    for i in range(6):
        out.append(printed("A3", "weight row sum", f"row={i}", R.value(src, quantity="row_sum", row=i),
                           1.0, 6, src))
        for j in range(6):
            out.append(printed("A3", "attention weight", f"row={i}, key={j}",
                               R.value(src, quantity="weight", row=i, col=j), LESSON_WEIGHTS_6X6[i][j], 3, src))
    weights = table[table.quantity == "weight"]
    for row, key in LESSON_STRONGEST_LINKS.items():
        r = weights[weights.row == row]
        strongest = r["col"].to_numpy()[np.argmax(r["value"].to_numpy())]
        out.append(exact("A3", "key this query attends to most", f"row={row}", strongest, key, src,
                         cell=R.value(src, quantity="weight", row=row, col=key).cell))
    return out


# --------------------------------------------------------------------------
# B: general claims on the configured sweep

def _variance_points(R: Results):
    t = R["variance.csv"]
    return [(int(d), int(t[t.d_k == d].n_pairs.iloc[0])) for d in sorted(t.d_k.unique())]


def decide_b1(R: Results) -> list[Check]:
    src = "variance.csv"
    out = []
    for d, n in _variance_points(R):
        out.append(statistical("B1", "mean of raw scores", f"d_k={d}, n={n}",
                               R.value(src, d_k=d, scale="none", statistic="mean"), 0.0, math.sqrt(d / n),
                               "within", src))
        out.append(statistical("B1", "variance of raw scores", f"d_k={d}, n={n}",
                               R.value(src, d_k=d, scale="none", statistic="variance"), d, variance_se(d, n),
                               "within", src))
    return out


def decide_b2(R: Results) -> list[Check]:
    src = "variance.csv"
    return [
        statistical("B2", "variance of scores / sqrt(d_k)", f"d_k={d}, n={n}",
                    R.value(src, d_k=d, scale="inv_sqrt_dk", statistic="variance"), 1.0, variance_se(d, n) / d,
                    "within", src)
        for d, n in _variance_points(R)
    ]


def _log_std_var(d: int, n: int) -> float:
    """Variance of log(sample std) of n scores: Var(log s^2) / 4 = (2 + 6/d) / (4n) (delta method)."""
    return (2.0 + 6.0 / d) / (4.0 * n)


def decide_b3(R: Results) -> list[Check]:
    src = "variance.csv"
    points = _variance_points(R)
    if len(points) < 2:
        return [missing("B3", "slope of log std vs log d_k", "", src, "needs at least two d_k values")]
    d = np.array([p[0] for p in points], dtype=float)
    var_log = np.array([_log_std_var(*p) for p in points])
    stds = [R.value(src, d_k=int(di), scale="none", statistic="std") for di in d]
    x, y = np.log(d), np.log(stds)
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)  # OLS slope = sum c_i y_i
    out = [statistical("B3", "slope of log std vs log d_k", f"d_k={int(d[0])}..{int(d[-1])}",
                       float(c @ y), 0.5, math.sqrt(float(c**2 @ var_log)), "within", src, cell=stds[-1].cell)]
    pairs = list(itertools.pairwise(points))  # each step of the sweep, plus the lesson's 16 -> 256
    n_of = dict(points)
    if {16, 256} <= set(n_of) and (16, 256) not in {(a[0], b[0]) for a, b in pairs}:
        pairs.append(((16, n_of[16]), (256, n_of[256])))
    for (da, na), (db, nb) in pairs:
        std_b = R.value(src, d_k=db, scale="none", statistic="std")
        ratio = std_b / R.value(src, d_k=da, scale="none", statistic="std")
        expected = math.sqrt(db / da)
        se = expected * math.sqrt(_log_std_var(da, na) + _log_std_var(db, nb))
        out.append(statistical("B3", "std ratio", f"d_k={da}->{db}", ratio, expected, se, "within", src,
                               cell=std_b.cell))
    return out


def decide_b4(R: Results) -> list[Check]:
    src = "variance.csv"
    points = dict(_variance_points(R))
    if 1024 not in points:
        why = "d_k = 1024 is not in the configured variance sweep"
        return [missing("B4", "raw variance at d_k = 1024", "d_k=1024", src, why),
                missing("B4", "scaled variance at d_k = 1024", "d_k=1024", src, why)]
    n = points[1024]
    return [
        statistical("B4", "raw variance at d_k = 1024", f"d_k=1024, n={n}",
                    R.value(src, d_k=1024, scale="none", statistic="variance"), 1024, variance_se(1024, n),
                    "within", src),
        statistical("B4", "scaled variance at d_k = 1024", f"d_k=1024, n={n}",
                    R.value(src, d_k=1024, scale="inv_sqrt_dk", statistic="variance"), 1.0,
                    variance_se(1024, n) / 1024, "within", src),
    ]


def _entropy(R: Results, d: int, scale: str, statistic: str, quantity: str = "entropy") -> float:
    return R.value("entropy_sweep.csv", d_k=d, scale=scale, quantity=quantity, statistic=statistic)


def _entropy_d_k(R: Results) -> list[int]:
    return [int(d) for d in sorted(R["entropy_sweep.csv"].d_k.unique())]


def decide_b5(R: Results) -> list[Check]:
    src = "entropy_sweep.csv"
    ds = _entropy_d_k(R)
    T = int(R[src]["T"].iloc[0])
    out = []
    for a, b in itertools.pairwise(ds):  # the unscaled entropy falls at every step of the sweep
        later = _entropy(R, b, "none", "mean")
        drop = _entropy(R, a, "none", "mean") - later
        se = math.hypot(_entropy(R, a, "none", "se"), _entropy(R, b, "none", "se"))
        out.append(statistical("B5", "fall of mean unscaled entropy", f"d_k={a}->{b}, T={T}", drop, 0.0, se,
                               "above", src, cell=later.cell))
    if len(ds) >= 2:  # ... toward 0, like a power of d_k: fit log mean = a + b log d_k
        x = np.log(ds)
        cells = [_entropy(R, d, "none", "mean") for d in ds]
        means = np.array(cells)
        var_log = np.array([(_entropy(R, d, "none", "se") / m) ** 2 for d, m in zip(ds, means, strict=True)])
        c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
        out.append(statistical("B5", "power-law exponent of mean unscaled entropy vs d_k",
                               f"d_k={ds[0]}..{ds[-1]}, T={T}", float(c @ np.log(means)), 0.0,
                               math.sqrt(float(c**2 @ var_log)), "below", src, cell=cells[-1].cell))
    paired = scale_difference("inv_sqrt_dk", "unit_variance_reference")  # same trials: the per-trial difference
    for d in ds:  # the scaled entropy stays at least at its d_k -> infinity limit (unit-variance scores)
        out.append(statistical("B5", "mean scaled entropy minus its unit-variance limit", f"d_k={d}, T={T}",
                               _entropy(R, d, paired, "mean"), 0.0, _entropy(R, d, paired, "se"), "not below", src))
    single = R["entropy_single_draw.csv"]
    single = single[single.scale == "none"].sort_values("d_k")
    entropies = single.entropy.to_numpy()
    rises = int(np.sum(np.diff(entropies) >= 0))
    drawn = ", ".join(f"{h:.3g}" for h in entropies)
    out.append(exact("B5", "steps where one draw's unscaled entropy does not fall (Exercise 2, literal)",
                     "d_k=" + ",".join(str(d) for d in single.d_k), rises, 0, "entropy_single_draw.csv",
                     literal=True,
                     note=f"one continuing np.random.seed(42) stream, one draw per d_k: entropies {drawn}"))
    return out


def decide_b6(R: Results) -> list[Check]:
    src = "ranking_invariance.csv"
    t = R[src]
    out = []
    for (d, dtype), g in t.groupby(["d_k", "dtype"], sort=True):
        trials = int(g.trials.iloc[0])
        agree = R.value(src, "count", d_k=d, dtype=dtype, quantity="logit_rank_agrees")
        out.append(exact("B6", "trials whose ranking of the logits is the same scaled and unscaled",
                         f"d_k={d}, {dtype}", agree, trials, src))
        bad = R.value(src, "count", d_k=d, dtype=dtype, quantity="weight_argsort_disagrees_without_ties")
        naive = trials - int(R.value(src, "count", d_k=d, dtype=dtype, quantity="weight_argsort_agrees"))
        ties = int(R.value(src, "count", d_k=d, dtype=dtype, quantity="unscaled_weight_ties"))
        note = (f"a naive argsort of the weights disagrees in {naive} of {trials} trials; {ties} trials have "
                "exactly tied unscaled weights (exp underflowed to 0)") if naive or ties else ""
        out.append(exact("B6", "trials where argsort of the weights disagrees without a tie", f"d_k={d}, {dtype}",
                         bad, 0, src, note=note))
    return out


def decide_b8(R: Results) -> list[Check]:
    out = []
    src = "variance.csv"
    for d, n in _variance_points(R):
        out.append(statistical("B8", "variance of scores / d_k", f"d_k={d}, n={n}",
                               R.value(src, d_k=d, scale="inv_dk", statistic="variance"), 1.0 / d,
                               variance_se(d, n) / d**2, "within", src))
    src = "entropy_sweep.csv"
    ds = _entropy_d_k(R)
    T = int(R[src]["T"].iloc[0])
    for a, b in itertools.pairwise(ds):  # 1/d_k flattens attention toward uniform as d_k grows
        later = _entropy(R, b, "inv_dk", "mean")
        rise = later - _entropy(R, a, "inv_dk", "mean")
        se = math.hypot(_entropy(R, a, "inv_dk", "se"), _entropy(R, b, "inv_dk", "se"))
        out.append(statistical("B8", "rise of mean entropy under 1/d_k", f"d_k={a}->{b}, T={T}", rise, 0.0, se,
                               "above", src, cell=later.cell))
    d = ds[-1]
    paired = scale_difference("inv_dk", "inv_sqrt_dk")  # same trials: the per-trial difference
    out.append(statistical("B8", "mean entropy under 1/d_k minus under 1/sqrt(d_k)", f"d_k={d}, T={T}",
                           _entropy(R, d, paired, "mean"), 0.0, _entropy(R, d, paired, "se"), "above", src,
                           note=f"uniform bound log T = {math.log(T):.4f}"))
    return out


def _eps(dtype: str) -> float:
    return float(np.finfo(np.dtype(dtype)).eps)


def _row_sum_bound(T: int, dtype: str) -> float:
    """Rounding bound on |sum of a softmax row - 1|: T additions and one division, each within eps."""
    return (T + 1) * _eps(dtype)


def decide_b9(R: Results) -> list[Check]:
    src = "forward_shape.csv"
    t = R[src]
    out = []
    for (B, T, d, dtype), _ in t.groupby(["B", "T", "d_k", "dtype"], sort=True):
        p = f"(B,T,d_k)=({B},{T},{d}), {dtype}"

        def v(quantity: str, B=B, T=T, d=d, dtype=dtype) -> float:
            return R.value(src, B=B, T=T, d_k=d, dtype=dtype, quantity=quantity)

        weights = [v(q) for q in ("weights_B", "weights_T_q", "weights_T_k")]
        output = [v(q) for q in ("output_B", "output_T", "output_d")]
        out.append(exact("B9", "axes of the weights whose size differs from (B, T, T)", p,
                         _mismatched_axes(weights, (B, T, T)), 0, src, cell=weights[0].cell))
        out.append(exact("B9", "axes of the output whose size differs from (B, T, d_k)", p,
                         _mismatched_axes(output, (B, T, d)), 0, src, cell=output[0].cell))
        out.append(exact("B9", "output and weights keep the input dtype", p, v("dtype_kept"), 1, src))
        out.append(exact("B9", "smallest weight is non-negative", p, v("min_weight"), 0, src, relation="not below"))
        err = v("max_row_sum_error")
        out.append(Check("B9", "largest |row sum - 1|", p, "not above", 0.0, float(err), "rounding",
                         src, tolerance=_row_sum_bound(T, dtype), cell=err.cell))
    return out


def _gradient(R: Results, d: int, scale: str, quantity: str, statistic: str):
    return R.value("gradient.csv", d_k=d, scale=scale, quantity=quantity, statistic=statistic)


def decide_b7(R: Results) -> list[Check]:
    src = "gradient.csv"
    t = R[src]
    ds = [int(d) for d in sorted(t.d_k.unique())]
    T = int(t["T"].iloc[0])
    out = []
    for a, b in itertools.pairwise(ds):  # the unscaled softmax passes less and less gradient
        later = _gradient(R, b, "none", "jacobian_norm", "mean")
        drop = _gradient(R, a, "none", "jacobian_norm", "mean") - later
        se = math.hypot(_gradient(R, a, "none", "jacobian_norm", "se"), _gradient(R, b, "none", "jacobian_norm", "se"))
        out.append(statistical("B7", "fall of mean unscaled Jacobian norm ||diag(p) - p p^T||_F",
                               f"d_k={a}->{b}, T={T}", drop, 0.0, se, "above", src, cell=later.cell))
    # The scaled one does not collapse: at the widest head it sits at the d_k -> infinity limit (scores of unit
    # variance, K q / |q|), a fixed positive value, and above the unscaled one. Both compare scales on the same
    # trials, so each uses the per-trial difference and its own standard error.
    d = ds[-1]
    limit = _gradient(R, d, "unit_variance_reference", "jacobian_norm", "mean")
    for other, check, relation, note in (
            ("unit_variance_reference", "mean scaled Jacobian norm minus its unit-variance limit", "within",
             f"the limit itself: {float(limit):.4f}"),
            ("none", "mean scaled minus unscaled Jacobian norm at the widest head", "above", "")):
        paired = scale_difference("inv_sqrt_dk", other)
        out.append(statistical("B7", check, f"d_k={d}, T={T}", _gradient(R, d, paired, "jacobian_norm", "mean"),
                               0.0, _gradient(R, d, paired, "jacobian_norm", "se"), relation, src, note=note))

    def grad_ratio(d: int):
        """Unscaled / scaled mean gradient at the scores, with its delta-method SE."""
        u, s = (_gradient(R, d, sc, "score_grad_norm", "mean") for sc in ("none", "inv_sqrt_dk"))
        su, ss = (_gradient(R, d, sc, "score_grad_norm", "se") for sc in ("none", "inv_sqrt_dk"))
        r = u / s
        return r, r * math.hypot(su / u, ss / s), u

    for a, b in itertools.pairwise(ds):  # the gradient reaching the scores, relative to the scaled head's, falls
        (ra, sa, _), (rb, sb, ub) = grad_ratio(a), grad_ratio(b)
        out.append(statistical("B7", "fall of unscaled / scaled gradient norm at the scores", f"d_k={a}->{b}, T={T}",
                               ra - rb, 0.0, math.hypot(sa, sb), "above", src, cell=ub.cell))
    return out


def _success(R: Results, d: int, scale: str):
    """Success fraction at the best learning rate of (d_k, scale), and that learning rate."""
    t = R["learning.csv"]
    best = t[(t.d_k == d) & (t.scale == scale) & (t.best_lr == 1) & (t.statistic == "success_fraction")]
    if len(best) != 1:
        raise ResultsError(f"{R.dir / 'learning.csv'}: expected one best learning rate for d_k={d}, scale={scale}")
    lr = float(best.lr.iloc[0])
    return R.value("learning.csv", d_k=d, scale=scale, lr=lr, statistic="success_fraction"), lr


def decide_b10(R: Results) -> list[Check]:
    src = "learning.csv"
    t = R[src]
    ds = [int(d) for d in sorted(t.d_k.unique())]
    runs = int(t.runs.iloc[0])
    lrs = sorted(t.lr.unique())
    se_diff = math.sqrt(0.25 / runs + 0.25 / runs)  # two success fractions, worst-case binomial p = 1/2
    (u0, _), (s0, _) = _success(R, ds[0], "none"), _success(R, ds[0], "inv_sqrt_dk")
    (u1, lr_u), (s1, lr_s) = _success(R, ds[-1], "none"), _success(R, ds[-1], "inv_sqrt_dk")
    edge = [f"{sc} at d_k={d}" for d in ds for sc in ("none", "inv_sqrt_dk")
            if _success(R, d, sc)[1] in (lrs[0], lrs[-1])]
    note = ("best learning rate at the edge of the grid for " + ", ".join(edge)) if edge else ""
    span = f"d_k={ds[0]}->{ds[-1]}, runs={runs}"
    return [
        statistical("B10", "fall of unscaled success fraction (best learning rate each)", span, u0 - u1, 0.0,
                    se_diff, "above", src, cell=u1.cell, note=note),
        statistical("B10", f"scaled success fraction minus its value at d_k={ds[0]}", span, s1 - s0, 0.0,
                    se_diff, "not below", src, cell=s1.cell),
        statistical("B10", "scaled minus unscaled success fraction at the widest head",
                    f"d_k={ds[-1]}, runs={runs}, lr={lr_s:g} vs {lr_u:g}", s1 - u1, 0.0, se_diff, "above", src,
                    cell=s1.cell),
    ]


# --------------------------------------------------------------------------
# The registry

SE_VARIANCE = ("k standard errors of the sample variance of n independent scores: SE = d sqrt((2 + 6/d) / n), "
               "from Var S = d and E[S^4] = 3d^2 + 6d; each score uses a fresh query, so the scores are independent")

CLAIMS: tuple[Claim, ...] = (
    Claim("A1", "The lesson's variance table, reproduced",
          "With the lesson's own seed and single random stream, the raw score variances for d_k = 4, 16, 64, 256 "
          "come out as the lesson printed them, and so do the variances after dividing by sqrt(d_k).",
          "raw 3.988, 15.891, 64.249, 256.391; scaled 0.9971, 0.9932, 1.0039, 1.0015",
          "Proving It: Score Variance Tracks d_k", ("lesson_variance.csv",),
          "the lesson's printed precision: half a unit in the last printed digit", decide_a1),
    Claim("A2", "The lesson's softmax collapse at d_k = 256, reproduced",
          "For one query against 8 keys at d_k = 256 (lesson seed), the raw scores, both softmaxes, their maximum "
          "weights and entropies come out as printed: unscaled, all weight on position 5; scaled, spread out.",
          "raw scores [-3.12 13.41 -27. 12.41 2.39 24.29 -1.23 -2.77]; unscaled max weight 1.0000, entropy 0.0003; "
          "scaled max weight 0.3514, entropy 1.7909; uniform log 8 = 2.0794",
          "Why Large Scores Break Softmax", ("lesson_softmax_collapse.csv",),
          "the lesson's printed precision; the one-hot position exactly", decide_a2),
    Claim("A3", "The lesson's forward on (1, 6, 16), reproduced",
          "The forward with default_rng(42) maps (1, 6, 16) to weights (1, 6, 6) and output (1, 6, 16); every "
          "weight row sums to 1; the 6x6 weights match the printed matrix; query 1 attends most to key 1 and "
          "query 5 to key 2.",
          "shapes (1,6,16) -> (1,6,6) -> (1,6,16); row sums 1; strongest links 0.606 (row 1 -> key 1) and 0.496 "
          "(row 5 -> key 2)",
          "The Canonical Forward in NumPy", ("lesson_forward.csv",),
          "shapes and strongest links exactly; weights and row sums at the printed precision", decide_a3),
    Claim("B1", "A dot product's variance grows like d_k",
          "The dot product of two independent zero-mean unit-variance vectors of length d_k has mean 0 and "
          "variance d_k, at every d_k of the sweep.",
          "the score has variance d_k", "Why a Dot Product Grows With Dimension", ("variance.csv",),
          SE_VARIANCE + "; the mean's SE is sqrt(d / n)", decide_b1),
    Claim("B2", "Dividing by sqrt(d_k) brings the variance back to 1",
          "After dividing the scores by sqrt(d_k), their variance is 1 at every d_k.",
          "dividing by sqrt(d_k) keeps the score variance at roughly 1 no matter how wide the head is",
          "Why a Dot Product Grows With Dimension", ("variance.csv",), SE_VARIANCE + ", divided by d", decide_b2),
    Claim("B3", "Score magnitude grows like sqrt(d_k)",
          "The standard deviation of the scores grows like sqrt(d_k): the slope of log std against log d_k is 1/2, "
          "and each step of the sweep spreads the scores by sqrt of the ratio of the d_k (16 -> 256: 4x).",
          "double the head size and the scores spread out by sqrt(2); from d_k = 16 to 256 the typical magnitude "
          "grows four-fold", "Why a Dot Product Grows With Dimension", ("variance.csv",),
          "k standard errors from the delta method: Var(log s) = (2 + 6/d) / (4n) per d_k, independent across d_k",
          decide_b3),
    Claim("B4", "Exercise 1: d_k = 1024",
          "At d_k = 1024 the raw variance is 1024 and the scaled variance 1.",
          "confirm the raw variance is near 1024 while the scaled variance stays near 1", "Exercise 1",
          ("variance.csv",), SE_VARIANCE, decide_b4),
    Claim("B5", "Exercise 2: unscaled entropy collapses as d_k grows; scaled stays high",
          "Averaged over many independent draws, the entropy of the unscaled softmax falls at every step of the "
          "sweep, toward 0 like a negative power of d_k, while the scaled softmax keeps at least the entropy of "
          "unit-variance scores (its d_k -> infinity limit). A single draw need not fall monotonically.",
          "for d_k in [4, 16, 64, 256], build one query against eight keys, take the softmax of the unscaled "
          "raw scores, and print its entropy: watch the entropy fall toward 0 as d_k grows",
          "Exercise 2", ("entropy_sweep.csv", "entropy_single_draw.csv"),
          "k standard errors of the mean entropy over independent trials (sample std / sqrt(trials)); "
          "differences between d_k values (independent draws) use the root-sum-square of the two SEs, "
          "differences between two scales of the same trials the SE of their per-trial difference; "
          "the fitted exponent's SE by the delta method",
          decide_b5),
    Claim("B6", "Exercise 3: scaling changes the sharpness, not the ranking",
          "A positive scale never changes the order of the logits, so scaled and unscaled attention rank the keys "
          "the same in every trial. An argsort of the *weights* can disagree, but only where exp underflowed and "
          "weights tied exactly.",
          "confirm that the unscaled and scaled softmax weights produce the same argsort", "Exercise 3",
          ("ranking_invariance.csv",), "exact: counts of trials", decide_b6),
    Claim("B7", "A saturated softmax passes almost no gradient",
          "As d_k grows, the unscaled softmax saturates: the norm of its Jacobian diag(p) - p p^T falls toward 0, "
          "and so does the gradient reaching the scores from a loss on the attention output, relative to the "
          "scaled head's. The scaled softmax keeps a Jacobian norm that does not depend on d_k: at the widest head it "
          "equals that of unit-variance scores (its d_k -> infinity limit) and stays far above the unscaled one.",
          "the softmax is saturated and passes essentially no gradient backward; the scale keeps softmax in its "
          "responsive, high-gradient regime", "Why Large Scores Break Softmax", ("gradient.csv",),
          "k standard errors of mean norms over independent trials; differences between d_k values by "
          "root-sum-square, between two scales of the same trials by the SE of the per-trial difference; ratios "
          "by the delta method (ignoring the positive correlation of the two scales' norms on the same trials, "
          "which overstates the ratio's SE)", decide_b7),
    Claim("B8", "Divide by sqrt(d_k), not by d_k",
          "Dividing by d_k over-shrinks the scores to variance 1/d_k and flattens attention toward uniform as d_k "
          "grows, while dividing by sqrt(d_k) keeps the variance at 1 (B2) and the entropy stable (B5).",
          "divide by sqrt(d_k), not d_k: the standard deviation grows like sqrt(d_k)", "Summary",
          ("variance.csv", "entropy_sweep.csv"),
          SE_VARIANCE + ", divided by d^2; entropy differences between d_k values: k root-sum-square SEs; "
          "between 1/d_k and 1/sqrt(d_k) on the same trials: k SEs of the per-trial difference", decide_b8),
    Claim("B9", "Softmax rows are distributions; the forward's shapes",
          "For any B, T, d_k, the forward maps (B, T, d_k) to weights (B, T, T) and output (B, T, d_k), keeps the "
          "input dtype, and every weight row is non-negative and sums to 1 up to rounding.",
          "every row is non-negative and sums to 1; shapes (B, T, d_k) -> (B, T, T) -> (B, T, d_k)",
          "The Full Formula, Piece by Piece", ("forward_shape.csv",),
          "shapes and dtype exactly; row sums within (T + 1) machine epsilons (T additions and a division)",
          decide_b9),
    Claim("B10", "Without the scale, a wide head stops learning",
          "In a small training task (gradient descent on a query so the attention output picks a target value "
          "among T), with the learning rate tuned separately for each, the unscaled head succeeds less and less "
          "often as d_k grows while the scaled head keeps succeeding.",
          "without it, a self-attention layer stops learning as soon as the head grows wide",
          "Welcome to Scaled Dot-Product Attention", ("learning.csv",),
          "k standard errors of a difference of two success fractions over `runs` runs each, using the "
          "worst-case binomial SE sqrt(1/4 / runs) per fraction", decide_b10),
)

CLAIM_ORDER = ("A1", "A2", "A3", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10")


def registry() -> dict[str, Claim]:
    """The claims by id, in the lesson's order."""
    by_id = {c.id: c for c in CLAIMS}
    return {i: by_id[i] for i in CLAIM_ORDER if i in by_id}


@dataclass(frozen=True)
class Decision:
    """Every check of a run, with the k used for the statistical ones."""

    checks: tuple[Check, ...]
    k: float
    n_statistical: int
    alpha_family: float = ALPHA_FAMILY

    def table(self) -> pd.DataFrame:
        """One row per check: the contents of results/claims.csv."""
        titles = {c.id: c.statement for c in CLAIMS}
        rows = [{
            "id": c.claim, "statement": titles[c.claim], "check": c.check, "parameters": c.parameters,
            "relation": c.relation, "expected": c.expected, "measured": c.measured, "tolerance": c.tolerance,
            "deviation": c.deviation, "margin": c.margin, "verdict": c.verdict, "basis": c.basis,
            "standard_error": c.se, "literal": c.literal, "source": c.source, "note": c.note,
        } for c in self.checks]
        return pd.DataFrame(rows)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == FAILS]


def decide(results: Results | str, claims: Sequence[Claim] | None = None,
           alpha_family: float = ALPHA_FAMILY, k: float | None = None) -> Decision:
    """Decide every claim from the CSVs in `results`; statistical tolerances are k * SE with a Bonferroni k.

    `k` may be given to decide a subset of the claims with the k of the whole run.
    """
    R = results if isinstance(results, Results) else Results(results)
    checks: list[Check] = []
    for claim in claims or registry().values():
        checks.extend(claim.decide(R))
    for c in checks:
        if not (np.isfinite(c.measured) or c.basis == "missing"):
            raise ResultsError(f"{R.dir / c.source}: claim {c.claim} ({c.check}, {c.parameters}) "
                               f"measured a non-finite value {c.measured}")
    n_stat = sum(c.basis == "statistical" for c in checks)
    k = bonferroni_k(n_stat, alpha_family) if k is None else k
    checks = [replace(c, tolerance=k * c.se) if c.basis == "statistical" else c for c in checks]
    return Decision(tuple(checks), k, n_stat, alpha_family)


def stale_errors(results: Results, config: Mapping) -> list[str]:
    """Where the parameters recorded in the CSVs differ from `config` (results from another config)."""
    errors = []
    for name, section in (("variance.csv", "variance"), ("entropy_sweep.csv", "entropy_sweep"),
                          ("ranking_invariance.csv", "ranking_invariance"), ("forward_shape.csv", "forward_shape"),
                          ("gradient.csv", "gradient"), ("learning.csv", "learning")):
        if section not in config or not (results.dir / name).exists():
            continue
        t = results[name]
        expected = {"seed": config["seed"], **config[section]}
        for key, value in expected.items():
            if key == "shapes":
                got = {tuple(r) for r in t[["B", "T", "d_k"]].drop_duplicates().to_numpy().tolist()}
                want = {tuple(s) for s in value}
            elif key not in t.columns:
                continue
            elif isinstance(value, list):
                got, want = set(t[key].unique().tolist()), set(value)
            else:
                got, want = set(t[key].unique().tolist()), {value}
            if got != want:
                errors.append(f"{results.dir / name}: column '{key}' holds {sorted(got)}, but the config's "
                              f"{section}.{key} is {value!r}: these results come from another config "
                              "(rerun `snakemake --cores 4`)")
    return errors

