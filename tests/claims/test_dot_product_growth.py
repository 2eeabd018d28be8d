"""B1-B4 (and B8's variance checks) decided on small hand-made variance tables: every check's measured value,
expected value, standard error (hence tolerance), relation, sweep point and cell, against the formulas stated here."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims import model as M
from sdpa_lab.claims.dot_product_growth import decide_b1, decide_b2, decide_b3, decide_b4
from sdpa_lab.claims.registry import CLAIMS as REGISTRY
from sdpa_lab.claims.softmax_saturation import decide_b8
from sdpa_lab.claims.standard_errors import (
    log_std_excess_kurtosis,
    log_std_skewness,
    variance_excess_kurtosis,
    variance_skewness,
)
from sdpa_lab.results import Results, ResultsError

from tests.claims.tables import (
    D_K,
    assert_check,
    by_key,
    entropy_tables,
    lesson_tables,
    lesson_variance_1024,
    log_std_var,
    var_se,
    variance_skewness_d4,
    variance_table,
)


def cell_of(d, scale, statistic):
    return ("variance.csv", (("d_k", d), ("scale", scale), ("statistic", statistic)), "value")


def stat(t, d, scale, statistic):
    return float(t[(t.d_k == d) & (t.scale == scale) & (t.statistic == statistic)].value.iloc[0])


def test_b1_b2_b4_b8_variance_checks():
    t = variance_table()
    R = Results("mem", {"variance.csv": t, "lesson_variance.csv": lesson_variance_1024()})
    n = 1000
    b1, b2, b8 = by_key(decide_b1(R), "B1"), by_key(decide_b2(R), "B2"), by_key(decide_b8_variance_only(R), "B8")
    assert len(b1) == 2 * len(D_K) and len(b2) == len(D_K)
    for d in D_K:
        p = f"d_k={d}, n={n}"
        assert_check(b1["mean of raw scores", p], measured=stat(t, d, "none", "mean"), expected=0.0,
                     se=math.sqrt(d / n), relation="within", cell=cell_of(d, "none", "mean"))
        # a mean of n scores: excess kurtosis of one score (6d / d^2 from its 4th cumulant) over n; no skewness
        assert (b1["mean of raw scores", p].skewness, b1["mean of raw scores", p].excess_kurtosis) == pytest.approx(
            (0.0, 6.0 / d / n), rel=1e-12)
        raw = b1["variance of raw scores", p]
        assert_check(raw, measured=stat(t, d, "none", "variance"), expected=d,
                     se=var_se(d, n), relation="within", cell=cell_of(d, "none", "variance"))
        assert raw.skewness > 0 and raw.excess_kurtosis > 0  # a sample variance: long right tail
        # B2 and B8 are B1's variance times 1/d_k and 1/d_k^2: the same evidence, counted once
        of = f"derived from B1 variance of raw scores [{p}]"
        for c in (b2["variance of scores / sqrt(d_k)", p], b8["variance of scores / d_k", p]):
            assert c.note.startswith(of) and (c.skewness, c.excess_kurtosis) == (raw.skewness, raw.excess_kurtosis)
        assert_check(b2["variance of scores / sqrt(d_k)", p], measured=stat(t, d, "inv_sqrt_dk", "variance"),
                     expected=1.0, se=var_se(d, n) / d, relation="within", basis="derived",
                     cell=cell_of(d, "inv_sqrt_dk", "variance"))
        assert_check(b8["variance of scores / d_k", p], measured=stat(t, d, "inv_dk", "variance"),
                     expected=1.0 / d, se=var_se(d, n) / d**2, relation="within", basis="derived",
                     cell=cell_of(d, "inv_dk", "variance"))
    assert b1["variance of raw scores", "d_k=4, n=1000"].skewness == pytest.approx(variance_skewness_d4(n), rel=1e-12)
    b4 = by_key(decide_b4(R), "B4")
    assert len(b4) == 4
    ex = "d_k=1024, n=100000, lesson seed"
    lcell = ("lesson_variance.csv", (("d_k", 1024), ("quantity", "raw_variance")), "value")
    assert_check(b4["raw variance at d_k = 1024 (Exercise 1)", ex], measured=1030.0, expected=1024,
                 se=var_se(1024, 100000), relation="within", cell=lcell)
    scaled = b4["scaled variance at d_k = 1024 (Exercise 1)", ex]
    assert_check(scaled, measured=1030.0 / 1024, expected=1.0, se=var_se(1024, 100000) / 1024, relation="within",
                 basis="derived", cell=(lcell[0], (("d_k", 1024), ("quantity", "scaled_variance")), "value"))
    assert scaled.note.startswith(f"derived from B4 raw variance at d_k = 1024 (Exercise 1) [{ex}]")
    for c in b4.values():  # each a sample variance of n scores at d_k = 1024 (skewness and kurtosis: tested below)
        n_c = 100000 if c.source == "lesson_variance.csv" else n
        assert (c.skewness, c.excess_kurtosis) == (variance_skewness(1024, n_c), variance_excess_kurtosis(1024, n_c))
    assert b4["raw variance at d_k = 1024 (Exercise 1)", ex].note == (
        "the lesson's np.random.seed(42) stream continued past d_k = 256")
    assert_check(b4["raw variance at d_k = 1024", "d_k=1024, n=1000"], measured=stat(t, 1024, "none", "variance"),
                 expected=1024, se=var_se(1024, n), relation="within", basis="derived",
                 cell=cell_of(1024, "none", "variance"))
    assert_check(b4["scaled variance at d_k = 1024", "d_k=1024, n=1000"],
                 measured=stat(t, 1024, "inv_sqrt_dk", "variance"), expected=1.0, se=var_se(1024, n) / 1024,
                 relation="within", basis="derived", cell=cell_of(1024, "inv_sqrt_dk", "variance"))
    for name in ("raw variance at d_k = 1024", "scaled variance at d_k = 1024"):  # the sweep's point repeats B1's
        assert b4[name, "d_k=1024, n=1000"].note.startswith("derived from B1 variance of raw scores [d_k=1024, n=1000]")
    # decided, the derived checks are not counted in the Bonferroni split
    claims = [c for c in REGISTRY if c.id in ("B1", "B2")]
    decision = D.decide(R, claims)
    assert decision.n_statistical == 2 * len(D_K) and len(decision.checks) == 3 * len(D_K)
    # every check here has a known skewness or excess kurtosis: Cornish-Fisher widens it beyond k SEs
    assert all(c.tolerance > decision.k_of("B1") * c.se and c.k == decision.k_of("B1") for c in decision.checks)


def decide_b8_variance_only(R):
    return [c for c in decide_b8(Results("mem", {**R._tables, **entropy_tables()})) if c.source == "variance.csv"]


def test_b4_is_exercise_1_only_without_d_k_1024_in_the_sweep():
    R = Results("mem", {"variance.csv": variance_table(ds=(4, 16)), "lesson_variance.csv": lesson_variance_1024()})
    checks = decide_b4(R)
    assert [(c.check, c.source, c.basis) for c in checks] == [
        ("raw variance at d_k = 1024 (Exercise 1)", "lesson_variance.csv", "statistical"),
        ("scaled variance at d_k = 1024 (Exercise 1)", "lesson_variance.csv", "derived")]
    no_exercise = Results("mem", {"variance.csv": variance_table(), "lesson_variance.csv": lesson_tables()[
        "lesson_variance.csv"]})
    with pytest.raises(ResultsError, match="d_k=1024"):
        decide_b4(no_exercise)


@pytest.mark.parametrize("ds", [(4, 16, 64, 256, 1024), (4, 16, 256), (16, 64, 256)])
def test_b3_slope_and_std_ratios(ds):
    t = variance_table(ds=ds, n=500)
    R = Results("mem", {"variance.csv": t})
    b3 = by_key(decide_b3(R), "B3")
    x = np.log(ds)
    y = np.log([stat(t, d, "none", "std") for d in ds])
    slope = np.polyfit(x, y, 1)[0]
    w = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
    se = math.sqrt(sum(wi * wi * log_std_var(d, 500) for wi, d in zip(w, ds, strict=True)))
    assert_check(b3["slope of log std vs log d_k", f"d_k={ds[0]}..{ds[-1]}"], measured=slope, expected=0.5, se=se,
                 relation="within", cell=cell_of(ds[-1], "none", "std"))
    # third cumulants of the log stds add with the cube of each OLS weight (delta method)
    k3 = [log_std_skewness(d, 500) * log_std_var(d, 500) ** 1.5 for d in ds]
    assert b3["slope of log std vs log d_k", f"d_k={ds[0]}..{ds[-1]}"].skewness == pytest.approx(
        sum(wi**3 * k for wi, k in zip(w, k3, strict=True)) / se**3, rel=1e-9)
    k4 = [log_std_excess_kurtosis(d, 500) * log_std_var(d, 500) ** 2 for d in ds]  # fourth cumulants: weights^4
    assert b3["slope of log std vs log d_k", f"d_k={ds[0]}..{ds[-1]}"].excess_kurtosis == pytest.approx(
        sum(wi**4 * k for wi, k in zip(w, k4, strict=True)) / se**4, rel=1e-9)
    steps = list(pairwise(ds))
    if 16 in ds and 256 in ds and (16, 256) not in steps:
        steps.append((16, 256))  # the lesson's own comparison
    assert len(b3) == 1 + len(steps)
    for a, b in steps:
        expected = math.sqrt(b / a)
        assert_check(b3["std ratio", f"d_k={a}->{b}"], measured=stat(t, b, "none", "std") / stat(t, a, "none", "std"),
                     expected=expected, se=expected * math.sqrt(log_std_var(a, 500) + log_std_var(b, 500)),
                     relation="within", cell=cell_of(b, "none", "std"))
        v = log_std_var(a, 500) + log_std_var(b, 500)  # the ratio is exp(log std_b - log std_a)
        k3_diff = (log_std_skewness(b, 500) * log_std_var(b, 500) ** 1.5
                   - log_std_skewness(a, 500) * log_std_var(a, 500) ** 1.5)
        k4_sum = (log_std_excess_kurtosis(b, 500) * log_std_var(b, 500) ** 2
                  + log_std_excess_kurtosis(a, 500) * log_std_var(a, 500) ** 2)
        # exp(X) for a nearly normal X of sd s: skewness skew(X) + 3 s, kurtosis kurt(X) + 12 skew(X) s + 16 s^2
        skew_x, sd_x = k3_diff / v**1.5, math.sqrt(v)
        ratio = b3["std ratio", f"d_k={a}->{b}"]
        assert ratio.skewness == pytest.approx(skew_x + 3 * sd_x, rel=1e-9)
        assert ratio.excess_kurtosis == pytest.approx(k4_sum / v**2 + 12 * skew_x * sd_x + 16 * v, rel=1e-9)


def test_b3_needs_two_d_k():
    (c,) = decide_b3(Results("mem", {"variance.csv": variance_table(ds=(64,))}))
    assert c.verdict == M.NOT_MEASURED and c.note == "needs at least two d_k values" and c.claim == "B3"
    assert (c.check, c.parameters, c.source) == ("slope of log std vs log d_k", "", "variance.csv")
    two = by_key(decide_b3(Results("mem", {"variance.csv": variance_table(ds=(4, 16))})), "B3")
    assert set(two) == {("slope of log std vs log d_k", "d_k=4..16"), ("std ratio", "d_k=4->16")}
