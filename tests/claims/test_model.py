"""The claims' verdict logic at its edges: each relation exactly at its tolerance, the verdicts other
than holds/fails, the Bonferroni k and the standard errors against independent computation, and what
`decide` does with k. Written to kill mutmut's survivors in sdpa_lab.claims (CONTRIBUTING.md,
"Mutation testing"): a bug here changes a verdict without changing any number in the CSVs."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims import model as M
from sdpa_lab.claims import standard_errors as SE
from sdpa_lab.claims import verdicts as V
from sdpa_lab.claims.registry import lesson_sentence
from sdpa_lab.results import Results, ResultsError

from tests.check_table import claim_ks, table_rows


def check(relation, deviation, tolerance, basis="statistical", literal=False, expected=10.0, theory_says_false=False):
    return M.Check("B1", "c", "p", relation, expected, expected + deviation, basis, "variance.csv",
                   tolerance=tolerance, literal=literal, theory_says_false=theory_says_false)


# (relation, deviation in tolerances, verdict); at exactly +-1 tolerance, "within", "not above" and
# "not below" hold (<=), "above" and "below" do not (strict: more than the noise).
EDGES = [
    ("within", 1.0, M.HOLDS), ("within", -1.0, M.HOLDS), ("within", 1.001, M.FAILS), ("within", -1.001, M.FAILS),
    ("not above", 1.0, M.HOLDS), ("not above", -50.0, M.HOLDS), ("not above", 1.001, M.FAILS),
    ("not below", -1.0, M.HOLDS), ("not below", 50.0, M.HOLDS), ("not below", -1.001, M.FAILS),
    ("above", 1.001, M.HOLDS), ("above", 1.0, M.INCONCLUSIVE), ("above", -1.0, M.INCONCLUSIVE),
    ("above", -1.001, M.FAILS),
    ("below", -1.001, M.HOLDS), ("below", -1.0, M.INCONCLUSIVE), ("below", 1.0, M.INCONCLUSIVE),
    ("below", 1.001, M.FAILS),
]


@pytest.mark.parametrize("relation, factor, verdict", EDGES)
def test_each_relation_at_its_tolerance(relation, factor, verdict):
    tol = 0.25  # a power of two: deviation = factor * tol is exact
    c = check(relation, factor * tol, tol)
    assert c.verdict == verdict
    assert c.deviation == pytest.approx(factor * tol, rel=1e-12)
    # One meaning for every relation: the margin is how far toward failing, and 1 is the failing line.
    toward_fail = {"within": abs(factor), "not above": factor, "not below": -factor, "above": -factor,
                   "below": factor}[relation]
    assert c.margin == pytest.approx(toward_fail, rel=1e-12)
    assert (c.verdict == M.FAILS) == (c.margin > 1)


def test_exact_checks_and_their_margin():
    assert check("equals", 0.0, 0.0, basis="exact").verdict == M.HOLDS
    assert check("equals", 0.0, 0.0, basis="exact").margin == 0.0
    assert check("equals", 1.0, 0.0, basis="exact").verdict == M.FAILS
    assert check("equals", 1.0, 0.0, basis="exact").margin == math.inf
    assert check("equals", -1.0, 0.0, basis="exact").margin == math.inf  # past the failing line, either way
    assert check("not above", -3.0, 0.0, basis="exact").margin == 0.0  # holds: no distance to report
    assert check("not above", 3.0, 0.0, basis="exact").verdict == M.FAILS


@pytest.mark.parametrize("relation", ["above", "below"])
def test_a_check_without_spread_that_shows_no_difference_has_no_margin(relation, tmp_path):
    """A claimed direction on a statistic with SE 0 (two scales that coincide, as 1/d_k and the attention's own
    when the attention divides by d_k) and no difference: inconclusive, margin n/a (nan), never infinite; so in
    the checker's line, in claims.csv (an empty cell, read back to the same verdict) and in the report's row."""
    from sdpa_lab.io import write_csv
    from sdpa_lab.report.html import check_row

    c = M.statistical("B1", "mean entropy under 1/d_k minus under 1/sqrt(d_k)", "d_k=64, T=8", 0.0, 0.0, 0.0,
                      relation, "entropy_sweep.csv")
    d = D.decide(Results("mem", {}), claims=[_claim([c])])
    (c,) = d.checks
    assert c.tolerance == 0.0 and c.verdict == M.INCONCLUSIVE and math.isnan(c.margin)
    assert V.describe(c).endswith("(margin n/a; fails above 1)")
    assert check_row(c).margin == "n/a" and check_row(c).tolerance_why == "SE 0: the statistic has no spread"
    write_csv(d.table(), tmp_path / "claims.csv")
    row = (tmp_path / "claims.csv").read_text().splitlines()[1]
    assert ",0.0,,inconclusive," in row  # deviation 0, margin empty, verdict
    (back,) = D.read_claims(tmp_path / "claims.csv").checks
    assert back.verdict == M.INCONCLUSIVE and math.isnan(back.margin)
    moved = M.statistical("B1", "x", "p", -1e-9 if relation == "above" else 1e-9, 0.0, 0.0, relation, "e.csv")
    (moved,) = D.decide(Results("mem", {}), claims=[_claim([moved])]).checks
    assert moved.verdict == M.FAILS and math.isinf(moved.margin)  # the other way, with no spread: contradicted


def test_literal_and_missing_checks():
    assert check("within", 5.0, 1.0, literal=True).verdict == M.NOT_PER_DRAW
    assert check("within", 0.5, 1.0, literal=True).verdict == M.HOLDS
    gone = M.missing("B1", "c", "p", "variance.csv", "no such d_k")
    assert gone.verdict == M.NOT_MEASURED and gone.margin == 0.0 and gone.note == "no such d_k"
    assert (gone.claim, gone.check, gone.parameters, gone.source) == ("B1", "c", "p", "variance.csv")
    assert math.isnan(gone.expected) and math.isnan(gone.measured) and gone.relation == "equals"


def test_builders():
    p = M.printed("A1", "c", "p", 3.9884, 3.988, 3, "lesson_variance.csv")
    assert (p.basis, p.relation, p.tolerance, p.expected, p.measured) == ("printed", "within", 0.0005, 3.988, 3.9884)
    assert p.verdict == M.HOLDS
    assert M.printed("A1", "c", "p", 3.9886, 3.988, 3, "x.csv").verdict == M.FAILS
    s = M.statistical("B1", "c", "p", 4.1, 4.0, 0.05, "within", "variance.csv", note="n")
    assert (s.basis, s.se, s.tolerance, s.note, s.source) == ("statistical", 0.05, 0.0, "n", "variance.csv")
    e = M.exact("B9", "c", "p", 3, 3, "forward_shape.csv")
    assert (e.basis, e.relation, e.expected, e.measured) == ("exact", "equals", 3.0, 3.0)
    assert M.exact("B9", "c", "p", 2, 3, "f.csv", relation="not above").relation == "not above"


@pytest.mark.parametrize("got, want, n", [((2, 3, 4), (2, 3, 4), 0), ((2, 3, 5), (2, 3, 4), 1),
                                          ((2, 3), (2, 3, 4), 1), ((2, 3, 4, 1), (2, 3, 4), 1),
                                          ((1, 3, 5), (2, 3, 4), 2), ((), (2, 3), 2)])
def test_mismatched_axes(got, want, n):
    assert M.mismatched_axes(got, want) == n


@pytest.mark.parametrize("n", [1, 2, 13, 400])
def test_bonferroni_k_splits_alpha_over_the_checks(n):
    k = SE.bonferroni_k(n)
    tail = math.erfc(k / math.sqrt(2))  # P(|Z| > k)
    assert n * tail == pytest.approx(SE.ALPHA_FAMILY, rel=1e-9)
    assert SE.bonferroni_k(n, alpha_family=0.05) == pytest.approx(
        math.sqrt(2) * _erfcinv(0.05 / n), rel=1e-9)


def _erfcinv(y: float) -> float:
    """Inverse of erfc by bisection (independent of statistics.NormalDist)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erfc(mid) > y else (lo, mid)
    return (lo + hi) / 2


def test_bonferroni_k_of_no_checks_is_undefined():
    assert math.isnan(SE.bonferroni_k(0)) and math.isnan(SE.bonferroni_k(-1))


def test_variance_se_formula():
    # Var(S^2) ~ (E q.k^4 - d^2) / n with E (q.k)^4 = 3 d^2 + 6 d: SE = sqrt((2 d^2 + 6 d) / n)
    for d, n in ((1, 10), (4, 1000), (64, 20000)):
        assert SE.variance_se(d, n) == pytest.approx(math.sqrt((2 * d * d + 6 * d) / n), rel=1e-14)


def test_log_std_var_matches_simulation():
    """Var(log s) of n scores q.k, against the spread of simulated sample stds."""
    rng = np.random.default_rng(1)
    d, n, reps = 4, 500, 3000
    s = np.einsum("rnd,rnd->rn", rng.standard_normal((reps, n, d)), rng.standard_normal((reps, n, d)))
    assert np.log(s.std(axis=1)).var() == pytest.approx(SE.log_std_var(d, n), rel=0.08)
    assert SE.log_std_var(d, n) == pytest.approx((2 + 6 / d) / (4 * n), rel=1e-14)


def _claim(checks):
    return M.Claim("B1", "t", "s", "l", "sec", ("variance.csv",), "r", decide=lambda R: list(checks),
                   alpha=SE.ALPHA_CLAIM)


def test_decide_sets_statistical_tolerances_from_k():
    stat = M.statistical("B1", "c", "p", 4.1, 4.0, 0.05, "within", "variance.csv")
    ex = M.exact("B1", "e", "p", 1, 1, "variance.csv")
    pr = M.printed("B1", "q", "p", 1.0, 1.0, 2, "variance.csv")
    R = Results("mem", {})
    d = D.decide(R, claims=[_claim([stat, ex, pr])])
    # the claim's own share (ALPHA_CLAIM by default) over its one statistical check
    assert d.n_statistical == 1 and d.shares == {"B1": SE.ALPHA_CLAIM} and d.alpha_family == SE.ALPHA_FAMILY
    assert d.k_of("B1") == SE.bonferroni_k(1, SE.ALPHA_CLAIM) and d.ks == {"B1": d.k_of("B1")}
    got = {c.check: c for c in d.checks}
    assert got["c"].tolerance == pytest.approx(SE.bonferroni_k(1, SE.ALPHA_CLAIM) * 0.05, rel=1e-15)
    assert got["c"].k == d.k_of("B1")
    assert got["e"].tolerance == 0.0 and got["q"].tolerance == 0.005  # not statistical: untouched
    assert math.isnan(got["e"].k) and math.isnan(d.k_of("A1"))
    d2 = D.decide(R, claims=[_claim([stat, stat])], k=3.0)
    assert [c.k for c in d2.checks] == [3.0, 3.0] and d2.n_statistical == 2
    assert all(c.tolerance == pytest.approx(0.15, rel=1e-15) for c in d2.checks)
    d3 = D.decide(R, claims=[replace(_claim([stat]), alpha=0.05)], alpha_family=0.05)
    assert d3.k_of("B1") == pytest.approx(SE.bonferroni_k(1, 0.05)) and d3.alpha_family == 0.05


def test_decide_refuses_a_non_finite_measurement_naming_the_file():
    bad = M.statistical("B1", "variance of raw scores", "d_k=4", float("nan"), 4.0, 0.1, "within", "variance.csv")
    with pytest.raises(ResultsError, match=r"variance\.csv: claim B1 \(variance of raw scores, d_k=4\) measured a "
                                           r"non-finite value nan"):
        D.decide(Results("mem", {}), claims=[_claim([bad])])
    gone = M.missing("B1", "c", "p", "variance.csv", "why")  # missing: nan allowed
    assert D.decide(Results("mem", {}), claims=[_claim([gone])]).checks[0].verdict == M.NOT_MEASURED


def test_decision_table_and_failures():
    holds = M.statistical("B1", "a", "p", 4.0, 4.0, 0.1, "within", "variance.csv")
    fails = M.statistical("B1", "b", "p", 9.0, 4.0, 0.1, "within", "variance.csv")
    d = D.decide(Results("mem", {}), claims=[_claim([holds, fails])])
    assert [c.check for c in d.failed] == ["b"]
    t = d.table()
    assert list(t.columns) == ["id", "statement", "check", "parameters", "relation", "expected", "measured",
                               "tolerance", "deviation", "margin", "verdict", "basis", "standard_error", "expected_se",
                               "k", "k_prime", "literal", "theory_says_false", "premise_not_met", "theory_unclear",
                               "theory", "theory_se", "theory_tolerance", "source", "note"]
    assert t.verdict.tolist() == [M.HOLDS, M.FAILS] and t.statement.tolist() == ["s", "s"]
    assert t.deviation.tolist() == [0.0, 5.0] and t.standard_error.tolist() == [0.1, 0.1]
    assert t.k_prime.tolist() == t.k.tolist() == [d.k_of("B1")] * 2  # no known skewness: k' is k
    assert isinstance(t, pd.DataFrame)


@pytest.mark.parametrize("verdicts, claim", [
    ([M.HOLDS, M.HOLDS], M.HOLDS), ([M.HOLDS, M.FAILS, M.INCONCLUSIVE], M.FAILS),
    ([M.HOLDS, M.INCONCLUSIVE, M.NOT_PER_DRAW], M.INCONCLUSIVE), ([M.NOT_PER_DRAW, M.NOT_MEASURED], M.NOT_PER_DRAW),
    ([M.HOLDS, M.NOT_MEASURED], M.NOT_MEASURED), ([M.HOLDS, M.NOT_HERE, M.NOT_MEASURED], M.NOT_HERE),
    ([M.NOT_HERE, M.NOT_PER_DRAW], M.NOT_PER_DRAW), ([M.NOT_HERE, M.FAILS], M.FAILS)])
def test_a_claims_verdict_is_its_worst_checks(verdicts, claim):
    make = {M.HOLDS: check("within", 0.0, 1.0), M.FAILS: check("within", 3.0, 1.0),
            M.INCONCLUSIVE: check("above", 0.0, 1.0), M.NOT_PER_DRAW: check("within", 3.0, 1.0, literal=True),
            M.NOT_MEASURED: M.missing("B1", "c", "p", "x.csv", "w"),
            M.NOT_HERE: check("within", 0.5, 1.0, theory_says_false=True)}
    checks = [make[v] for v in verdicts]
    assert [c.verdict for c in checks] == verdicts
    assert V.claim_verdict(checks) == claim


@pytest.mark.parametrize("relation, factor, closeness", [
    ("within", 0.5, -0.5), ("within", -0.75, -0.25), ("not above", 0.5, -0.5), ("not above", -2.0, -3.0),
    ("not below", -0.5, -0.5), ("not below", 2.0, -3.0), ("above", 3.0, -2.0), ("below", -3.0, -2.0)])
def test_closeness_is_minus_the_distance_to_the_boundary(relation, factor, closeness):
    assert V.closeness(check(relation, factor * 0.25, 0.25)) == pytest.approx(closeness, rel=1e-12)


def test_closeness_of_failing_and_exact_checks():
    assert V.closeness(check("within", 2.0, 1.0)) == math.inf
    assert V.closeness(check("above", 0.0, 1.0)) == math.inf  # inconclusive
    assert V.closeness(check("within", 2.0, 1.0, literal=True)) == math.inf
    assert V.closeness(check("equals", 0.0, 0.0, basis="exact")) == -math.inf


def test_describe_one_check_in_a_line():
    c = M.Check("B1", "variance of raw scores", "d_k=4, n=100", "within", 4.0, 4.25, "statistical", "v.csv",
                tolerance=0.5)
    assert V.describe(c) == ("variance of raw scores [d_k=4, n=100]: measured 4.25 within 4 ± 0.5 "
                             "(margin 0.50; fails above 1)")
    s = M.Check("B1", "mean", "d_k=4", "within", 0.0, -0.8542718, "statistical", "v.csv", tolerance=1.0, se=0.21)
    assert V.describe(s) == "mean [d_k=4]: measured −0.85 within 0 ± 1 (margin 0.85; fails above 1)"
    e = M.Check("B9", "dtype kept", "p", "equals", 1.0, 0.0, "exact", "f.csv")
    assert V.describe(e) == "dtype kept [p]: measured 0 equals 1 (margin ∞; fails above 1)"
    small = M.Check("B7", "gap", "d_k=4", "within", 0.0, 2.2e-5, "statistical", "v.csv", tolerance=3.1e-5, se=6e-6)
    assert V.describe(small) == "gap [d_k=4]: measured 2.20 × 10⁻⁵ within 0 ± 3.1 × 10⁻⁵ (margin 0.71; fails above 1)"
    assert V.describe(M.missing("B4", "raw variance", "d_k=1024", "v.csv", "not swept")) == \
        "raw variance [d_k=1024]: not measured (not swept)"


def test_summary_lists_each_claim_its_verdict_and_the_failures():
    b1 = [M.statistical("B1", "a", "d_k=4", 4.0, 4.0, 0.1, "within", "variance.csv"),
          M.statistical("B1", "b", "d_k=16", 16.9, 16.0, 0.1, "within", "variance.csv"),
          M.statistical("B1", "c", "d_k=64", 99.0, 64.0, 0.1, "within", "variance.csv")]
    b5 = [M.statistical("B5", "fall", "d_k=4->16", 0.0, 0.0, 0.1, "above", "entropy_sweep.csv")]
    b3 = [M.missing("B3", "slope", "", "variance.csv", "needs two d_k")]
    a1 = [M.printed("A1", "raw", "d_k=4", 3.988, 3.988, 3, "lesson_variance.csv")]
    claims = [M.Claim(cid, "t", "s", "l", "sec", (), "r", decide=lambda R, c=checks: list(c), alpha=SE.ALPHA_CLAIM)
              for cid, checks in (("B1", b1), ("B5", b5), ("B3", b3), ("A1", a1))]
    d = D.decide(Results("mem", {}), claims=claims, k=3.0)
    text = V.summary(d, width=100)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    rows = table_rows(text)
    assert rows[0] == ("claim", "checks", "verdict", "closest margin")
    assert [r[0] for r in rows[1:] if r[0]] == ["A1", "B1", "B3", "B5"]
    b1_row = next(r for r in rows if r[0] == "B1")
    b1_shown = V.shown_first([c for c in d.checks if c.claim == "B1"])
    assert b1_row[1:] == ("3", M.FAILS, V.margin(b1_shown.margin)) and b1_shown.verdict == M.FAILS
    # beneath their claims, in full: B1's two failing checks, B5's inconclusive one (the lesson's direction unseen)
    assert [r for r in rows if not r[0]] == [("", "", M.FAILS, V.describe(d.checks[i], rule=False)) for i in (1, 2)] \
        + [("", "", M.INCONCLUSIVE, V.describe(d.checks[3], rule=False))]
    footer = text.split("\n\n")[1]
    assert " ".join(footer.split("\nMargin:")[0].splitlines()) == (
        "statistical checks: 4, each within its claim's k standard errors (k: its share of the false-fail budget "
        "over its own checks), more on a skewed statistic's long side; a correct run fails by chance less than once "
        "in 10,000")
    assert claim_ks(text) == {"A1": "", "B1": "3.00", "B3": "", "B5": "3.00"}  # each claim's own k, in its row
    assert lines[-1] == f"4 claims: 1 holds, 1 {M.INCONCLUSIVE}, 1 {M.NOT_MEASURED}, 1 fails; FAILING: B1"
    b2 = [M.statistical("B2", "v", "d_k=4", 9.0, 1.0, 0.1, "within", "variance.csv")]
    b2_claim = M.Claim("B2", "t", "s", "l", "sec", (), "r", decide=lambda R: list(b2), alpha=SE.ALPHA_CLAIM)
    two = D.decide(Results("mem", {}), claims=[claims[0], b2_claim], k=3.0)
    assert V.summary(two).splitlines()[-1] == "2 claims: 2 fail; FAILING: B1, B2"
    fine = D.decide(Results("mem", {}), claims=[claims[3]], k=3.0)
    assert V.summary(fine).splitlines()[-1] == "1 claim: 1 holds"
    # show_all lists every check (6) under its claim, instead of only the failing and inconclusive ones (3)
    assert len(table_rows(V.summary(d, show_all=True))) == len(rows) + 3


@pytest.mark.parametrize("width", [40, 60, 80, 100, 132])
def test_the_checkers_table_fits_the_width_and_breaks_no_number_or_word(width):
    """Every line within `width`; read back (its wrapped lines joined by a space), every check's line is exactly as
    describe() wrote it, so no number or word was broken, at every width a terminal may have."""
    checks = [M.statistical("B1", "variance of raw scores", f"d_k={d}, n=100000", d * 1.0021, d, d * 0.0045,
                            "within", "variance.csv") for d in (4, 16, 64, 256, 1024)]
    checks.append(M.statistical("B1", "a tiny gap", "d_k=4", 2.2e-5, 0.0, 6e-6, "within", "variance.csv"))
    claims = [M.Claim("B1", "t", "s", "l", "sec", (), "r", decide=lambda R: list(checks), alpha=SE.ALPHA_CLAIM)]
    d = D.decide(Results("mem", {}), claims=claims, k=3.0)
    text = V.summary(d, show_all=True, width=width)
    assert max(map(len, text.splitlines())) <= width
    listed = [r[3] for r in table_rows(text) if not r[0]]
    assert listed == [V.describe(c, rule=False) for c in d.checks]


@pytest.mark.parametrize("factor, verdict", [(0.0, M.NOT_HERE), (0.99, M.NOT_HERE), (-0.99, M.NOT_HERE),
                                             (1.01, M.FAILS), (-1.01, M.FAILS)])
def test_where_theory_says_the_sentence_is_false_agreeing_with_theory_never_holds(factor, verdict):
    """A check held to theory's value where theory says the lesson's sentence is false: agreeing with theory is
    NOT_HERE (not HOLDS: the sentence does not hold here), departing from it FAILS (a broken pipeline), never
    INCONCLUSIVE; its margin is the usual one."""
    c = check("within", factor, 1.0, theory_says_false=True)
    assert c.verdict == verdict and c.margin == pytest.approx(abs(factor), rel=1e-12)
    stat = M.statistical("B1", "c", "p", 10.0 + factor, 10.0, 1.0, "within", "variance.csv", theory_says_false=True)
    d = D.decide(Results("mem", {}), claims=[_claim([stat])], k=1.0)
    assert [x.verdict for x in d.checks] == [verdict]
    assert [x.check for x in d.failed] == (["c"] if verdict == M.FAILS else [])
    assert d.table().theory_says_false.tolist() == [True]


def test_the_summary_says_where_the_sentence_does_not_hold_and_why():
    here = M.statistical("B7", "fall", "d_k=4->16, T=1024", -0.2, -0.19, 0.01, "within", "gradient.csv",
                         theory_says_false=True)
    holds = M.statistical("B7", "gap", "d_k=4, T=1024", 0.0, 0.0, 0.01, "within", "gradient.csv")
    d = D.decide(Results("mem", {}), claims=[M.Claim("B7", "t", "s", "l", "sec", (), "r",
                                                     decide=lambda R: [holds, here], alpha=SE.ALPHA_CLAIM)], k=3.0)
    text = V.summary(d)
    row, beneath = table_rows(text)[1:]
    assert row[:3] == ("B7", "2", M.NOT_HERE) and beneath == ("", "", M.NOT_HERE, V.describe(d.checks[1], rule=False))
    footer = text.split("\n\n")[1]
    assert f"'{M.NOT_HERE}': at this config theory says the lesson's" in " ".join(footer.split())
    assert footer.splitlines()[-1] == f"1 claim: 1 {M.NOT_HERE}"
    assert not d.failed


def test_an_expectations_monte_carlo_error_is_bounded_as_a_bias():
    """k Monte Carlo SEs of the expected value are added to k' SEs of the measurement: the expectation's error is the
    same in every run at a config, an offset, not noise to add in quadrature."""
    c = M.statistical("B7", "m", "p", 1.0, 1.0, 0.5, "within", "gradient.csv", expected_se=0.1, skewness=0.3)
    (got,) = D.decide(Results("mem", {}), claims=[_claim([c])], k=3.0).checks
    assert got.tolerance == pytest.approx(0.5 * SE.cornish_fisher(3.0, 0.3) + 3.0 * 0.1, rel=1e-15)
    assert replace(got, measured=1.0 + got.tolerance * 1.001).verdict == M.FAILS
    assert replace(got, measured=1.0 + got.tolerance * 0.999).verdict == M.HOLDS


def test_decide_widens_by_the_skewness_and_the_kurtosis_of_each_check():
    # Cornish-Fisher by hand at k = 3 (z + (z^2 - 1) S / 6 + (z^3 - 3z) K / 24 - (2z^3 - 5z) S^2 / 36, the wider
    # side): kurtosis 0.48 alone -> 3 + 18 * 0.48 / 24 = 3.36; skewness 0.3 alone -> 3 + 0.4 - 39 * 0.09 / 36
    kurt = M.statistical("B1", "kurtosis only", "p", 4.0, 4.0, 0.5, "within", "variance.csv", excess_kurtosis=0.48)
    skew = M.statistical("B1", "skewness only", "p", 4.0, 4.0, 0.5, "within", "variance.csv", skewness=0.3)
    got = {c.check: c for c in D.decide(Results("mem", {}), claims=[_claim([kurt, skew])], k=3.0).checks}
    assert got["kurtosis only"].tolerance == pytest.approx(0.5 * 3.36, rel=1e-12)
    assert got["skewness only"].tolerance == pytest.approx(0.5 * (3.4 - 39 * 0.09 / 36), rel=1e-12)


def test_a_tolerance_exactly_at_the_statistics_reach_cannot_decide_and_keeps_the_checks_note():
    # reach 1.0: a tolerance of exactly k * se = 1.0 already covers every deviation the statistic can show
    c = M.statistical("B1", "c", "p", 0.5, 0.5, 0.25, "within", "variance.csv", reach=1.0, note="a note")
    (at,) = D.decide(Results("mem", {}), claims=[_claim([c])], k=4.0).checks
    assert at.tolerance == 1.0
    assert at.note == ("a note; cannot be decided at this sample size: the tolerance 1 is at least the largest "
                       "deviation the statistic can show (1); more samples needed")
    (below,) = D.decide(Results("mem", {}), claims=[_claim([c])], k=3.999).checks
    assert below.note == "a note"


def test_why_not_here_quotes_each_sentence_once_and_counts_the_points():
    fall = M.Check("B7", "fall of mean unscaled Jacobian norm ||diag(p) - p p^T||_F", "d_k=4->16, T=1024", "within",
                   -0.14, -0.139, "statistical", "gradient.csv", tolerance=0.04, se=0.01, theory_says_false=True)
    typical = replace(fall, check="fall of mean log10 unscaled Jacobian norm (the typical trial)")
    widest = replace(fall, check="mean scaled minus unscaled Jacobian norm at the widest head", parameters="d_k=64")
    held = replace(fall, check="mean scaled Jacobian norm ||diag(p) - p p^T||_F", theory_says_false=False,
                   expected=0.05, measured=0.05)
    text = V.why_not_here([fall, typical, widest, held])
    saturated, responsive = (lesson_sentence("B7", c.check) for c in (fall, widest))
    assert sorted([saturated, responsive]) == [responsive, saturated]  # quoted in sorted order, each once
    assert text.startswith(f"At this config theory says the lesson's sentences “{responsive}” and “{saturated}” "
                           "are false at 3 points")
    assert text.endswith("1 of the claim's 4 checks hold.")
    assert V.why_not_here([held]) == ""
    one = V.why_not_here([widest])
    assert one.startswith(f"At this config theory says the lesson's sentence “{responsive}” is false at 1 point,")


@pytest.mark.parametrize("measured", [10.0, 10.5, 12.9, 7.1, 13.1, 2.0, -0.93])
def test_a_point_outside_the_sentence_is_held_to_theory_and_survives_claims_csv(measured, tmp_path):
    """Where the lesson's premise does not hold, a check agreeing with theory's value (within k SEs) is "condition not
    met", and where theory's sign is unclear "inconclusive": the sentence counts neither for nor against its claim.
    A measurement departing from theory's value fails there, with the reason in words. Each is in the Bonferroni
    split (it can fail); both read back from claims.csv as written, and the checker names them."""
    from sdpa_lab.io import write_csv

    unmet = M.statistical("B7", "fall", "d_k=1->2, T=64", measured, 10.0, 1.0, "within", "gradient.csv",
                          premise_not_met=True, note="theory says the unscaled softmax is not yet saturated here")
    unclear = M.statistical("B7", "widest", "d_k=2, T=64", measured, 10.0, 1.0, "within", "gradient.csv",
                            theory_unclear=True)
    holds = M.statistical("B7", "gap", "d_k=2, T=64", 0.0, 0.0, 0.01, "within", "gradient.csv")
    agrees = abs(measured - 10.0) <= 3.0  # k = 3 SEs of 1
    d = D.decide(Results("mem", {}), claims=[_claim([unmet, holds])], k=3.0)
    assert [c.verdict for c in d.checks] == [M.CONDITION_NOT_MET if agrees else M.FAILS, M.HOLDS]
    assert d.n_statistical == 2 and d.checks[0].margin == pytest.approx(abs(measured - 10.0) / 3.0)
    assert V.claim_verdict(d.checks) == (M.HOLDS if agrees else M.FAILS)
    text = V.summary(replace(d, statements={"B1": "s", "B7": "s"}))
    if agrees:
        assert V.claim_verdict(d.checks[:1]) == M.CONDITION_NOT_MET
        assert "premise does not hold (fall [d_k=1->2, T=64])" in V.why_condition_not_met(d.checks)
        assert any(row[2] == M.CONDITION_NOT_MET and "premise does not hold here" in row[3]
                   for row in table_rows(text))
        assert f"'{M.CONDITION_NOT_MET}' (1 check)" in text
    else:  # the reason in words: the measurement, theory's value and tolerance
        expected_words = (f"the measurement departs from theory: measured {V.at_unit(measured, 1.0)} where theory "
                          "expects 10 ± 3")
        assert expected_words in V.describe(d.checks[0])
        assert "FAILING: B7" in text
    both = D.decide(Results("mem", {}), claims=[_claim([unmet, unclear, holds])], k=3.0)
    assert V.claim_verdict(both.checks) == (M.INCONCLUSIVE if agrees else M.FAILS) and both.n_statistical == 3
    write_csv(replace(both, statements={"B7": "s"}).table(), tmp_path / "claims.csv")
    back = D.read_claims(tmp_path / "claims.csv").checks
    assert [c.verdict for c in back] == ([M.CONDITION_NOT_MET, M.INCONCLUSIVE] if agrees else [M.FAILS] * 2) + [M.HOLDS]


@pytest.mark.parametrize("measured, verdict", [(0.5, M.HOLDS), (0.25, M.INCONCLUSIVE), (0.1, M.FAILS),
                                               (0.9, M.FAILS), (-0.4, M.FAILS)])
def test_a_claimed_rise_held_to_theory_is_inconclusive_only_while_it_agrees_with_theory(measured, verdict):
    """A claimed rise ("above" 0) whose value theory gives (0.5): it holds above its tolerance and within theory's;
    within the noise of 0 it is inconclusive only while it agrees with theory, and a departure from theory fails
    either way (0.1: inconclusive without theory; 0.9: holding without it). Counted once in the split."""
    c = M.statistical("B7", "fall", "d_k=4->16, T=8", measured, 0.0, 0.1, "above", "gradient.csv", theory=0.5)
    d = D.decide(Results("mem", {}), claims=[_claim([c])], k=3.0)
    (decided,) = d.checks
    assert (decided.tolerance, decided.theory_tolerance, d.n_statistical) == (pytest.approx(0.3), pytest.approx(0.3), 1)
    assert decided.verdict == verdict
    assert (decided.margin_toward_fail > 1) == (verdict == M.FAILS)
    assert ("departs from theory" in V.describe(decided)) == (abs(measured - 0.5) > 0.3)  # the reason in words
    assert "held to theory's 0.50 ± 0.3 too" in V.describe(decided)  # to the digits its SE leaves


@pytest.mark.parametrize("measured, verdict", [(0.4, M.NOT_PER_DRAW), (0.3, M.NOT_PER_DRAW), (0.1, M.FAILS),
                                               (0.7, M.FAILS), (1.0, M.FAILS)])
def test_a_per_draw_check_held_to_theorys_chance_reads_not_per_draw_only_while_it_agrees(measured, verdict):
    """The lesson's literal every-draw statement (a fraction "not below" 1) whose chance theory gives (0.4): short of
    1 it reads "holds on average, not per draw" only within theory's tolerance of 0.4, and fails beyond it (every
    draw falling too, where theory says 0.4 of them do); its margin (the shortfall) never fails, so the margin toward
    failing is the theory margin alone."""
    c = M.statistical("B5", "fraction", "d_k=4,16", measured, 1.0, 0.05, "not below", "entropy_exercise2.csv",
                      literal=True, theory=0.4)
    (decided,) = D.decide(Results("mem", {}), claims=[_claim([c])], k=3.0).checks
    assert decided.verdict == verdict and decided.theory_tolerance == pytest.approx(0.15)
    assert (decided.margin_toward_fail > 1) == (verdict == M.FAILS)
    assert decided.margin_toward_fail == pytest.approx(abs(measured - 0.4) / 0.15)
