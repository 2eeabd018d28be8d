"""The claims' data model: a `Check` (one measured number against an expected one), a `Claim` (what the
lesson says and how it is decided), a `Decision` (every check of a run), the verdicts and relations, and
the builders the decisions use. Deciding a run is sdpa_lab.claims.deciding's.

Tolerances:
- replication (A): half a unit in the last digit the lesson printed;
- sample statistics (B): k standard errors of the estimator, each claim's k from a
  Bonferroni split of its own share of ALPHA_FAMILY (Claim.alpha) over its own
  statistical checks; the shares of a run's claims sum to at most ALPHA_FAMILY,
  so that a correct pipeline run with fresh seeds fails by chance less than
  once in 1 / ALPHA_FAMILY runs, and a claim added changes no other claim's k;
- shapes, orderings and counts: exact; floating-point sums: a rounding bound.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

import sdpa_lab.claims.standard_errors as standard_errors
from sdpa_lab.claims.declared import ExpectationKind
from sdpa_lab.claims.standard_errors import ALPHA_FAMILY
from sdpa_lab.claims.weight_statistics import Statistic
from sdpa_lab.results import Results

# Verdicts. Only FAILS makes the checker exit non-zero.
HOLDS = "holds"
FAILS = "fails"
NOT_PER_DRAW = "holds on average, not per draw"
NOT_MEASURED = "not measured"
# A direction claimed, not contradicted, but within the noise (more samples needed), or theory's own sign of it unclear;
# either way the measurement agrees with theory's value (one that departs from it fails).
INCONCLUSIVE = "inconclusive"
# Where theory says the lesson's sentence is false at this config: the measurement agrees with theory, so the
# sentence does not hold here, and the pipeline is right to show it (neither a pass nor a failure; exit 0).
NOT_HERE = "does not hold here, as theory predicts"
# Where the lesson's sentence does not speak: its premise does not hold at this point (B7: the unscaled softmax is not
# yet saturated, its Jacobian norm still rising with d_k), so the sentence is counted neither for nor against the
# claim; the measurement is still held to theory's value there, and departing from it fails.
CONDITION_NOT_MET = "condition not met"

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

# The deviation signed toward failing: a check fails exactly when this / tolerance is above 1 (the margin).
TOWARD_FAIL = {
    "equals": abs,
    "within": abs,
    "not above": lambda dev: dev,
    "not below": lambda dev: -dev,
    "above": lambda dev: -dev,  # a claimed rise fails when measured falls short by more than the tolerance
    "below": lambda dev: dev,
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
    basis: str  # "printed" | "statistical" | "derived" | "exact" | "rounding" | "missing"
    source: str  # the CSV the measured number comes from
    tolerance: float = 0.0
    se: float = float("nan")  # standard error, statistical and derived checks (tolerance = k' * se + k * expected_se)
    # the Monte Carlo SE of `expected` (a finite-d_k expectation): its error is fixed at this config, the same in every
    # run, so it is bounded as a bias (k of them added to the tolerance), not added to the noise in quadrature
    expected_se: float = 0.0
    skewness: float = 0.0  # of the statistic's sampling law, where known: k' = Cornish-Fisher(k, ...) >= k
    excess_kurtosis: float = 0.0
    k_prime: float = math.nan  # k', the standard errors the tolerance allows the measurement; set with the tolerance
    k: float = math.nan  # its claim's k (a derived check's: the k of the claim whose check it repeats); set with it too
    of_claim: str = ""  # a derived check's: the claim whose check it repeats (the same evidence, that claim's k)
    # where the statistic's own law gives k' (claims.exact_laws: its key), in place of Cornish-Fisher's from its shape
    law: tuple | None = None
    reach: float = math.inf  # the largest |measured - expected| the statistic can take at all
    literal: bool = False  # the lesson's literal single-draw statement, not the general claim
    # The three flags below leave the lesson's sentence undecided at this point; the check then holds the measurement
    # to theory's value (relation "within", expected = theory's value) all the same, and a departure fails.
    # theory says the lesson's sentence is false at this point: agreeing with theory is NOT_HERE, never HOLDS
    theory_says_false: bool = False
    # the lesson's premise does not hold at this point: agreeing with theory is CONDITION_NOT_MET
    premise_not_met: bool = False
    # theory's sign of the difference the sentence is about is within its own uncertainty of 0: agreeing with theory
    # is INCONCLUSIVE
    theory_unclear: bool = False
    # Theory's value of the measurement where the relation compares it with another (a claimed fall "above" 0): the
    # measurement is held to it too, whatever the relation says, so that a result the sentence leaves inconclusive is
    # still one theory expects (nan: no such value). Its Monte Carlo SE is bounded as a bias, like expected_se, and
    # its tolerance (k' SEs plus k of those) is set with the check's own.
    theory: float = math.nan
    theory_se: float = 0.0
    theory_tolerance: float = math.nan
    note: str = ""
    cell: tuple | None = None  # the CSV cell the measured number moves with (file, row selector, column)

    @property
    def deviation(self) -> float:
        return self.measured - self.expected

    @property
    def undecided(self) -> str:
        """The verdict a check whose lesson sentence theory leaves undecided here shows when its measurement agrees
        with theory's value (NOT_HERE, CONDITION_NOT_MET, INCONCLUSIVE); "" for a check that decides the sentence."""
        if self.premise_not_met:
            return CONDITION_NOT_MET
        if self.theory_unclear:
            return INCONCLUSIVE
        return NOT_HERE if self.theory_says_false else ""

    @property
    def theory_margin(self) -> float:
        """How far the measurement departs from theory's value, in its tolerance (|measured - theory| /
        theory_tolerance), for a check held to a theory value besides its relation's; nan for any other. Above 1 the
        check fails, whatever its relation says."""
        if not math.isfinite(self.theory) or not self.theory_tolerance > 0:
            return math.nan
        return abs(self.measured - self.theory) / self.theory_tolerance

    @property
    def departs_from_theory(self) -> bool:
        return self.theory_margin > 1

    @property
    def margin_toward_fail(self) -> float:
        """The larger of margin and theory_margin: the check fails exactly when this is above 1 (a literal per-draw
        check's margin is a shortfall that never fails: its theory_margin alone, nan without one)."""
        if self.literal:
            return self.theory_margin
        return max(self.margin, self.theory_margin) if math.isfinite(self.theory_margin) else self.margin

    @property
    def margin(self) -> float:
        """How far the check went toward failing, in tolerances: the deviation in the direction in which its
        relation fails (TOWARD_FAIL) / tolerance. Every check fails exactly when its margin is above 1; a
        claimed rise or fall ("above", "below") holds only below -1 (inconclusive in between). Without a
        tolerance: 0 when the check holds, nan ("n/a") when it is inconclusive (a statistic with no spread at
        all, e.g. two scales that coincide: nothing to measure the deviation against, and no reason to call it
        infinitely far), inf when it fails."""
        if self.tolerance > 0:
            return TOWARD_FAIL[self.relation](self.deviation) / self.tolerance
        if self.basis == "missing" or RELATIONS[self.relation](self.deviation, 0.0):  # holds, or agrees with theory
            return 0.0
        if self.verdict == INCONCLUSIVE:
            return math.nan
        return math.inf

    @property
    def verdict(self) -> str:
        if self.basis == "missing":
            return NOT_MEASURED
        agrees = RELATIONS[self.relation](self.deviation, self.tolerance)
        if self.undecided:  # the sentence left undecided by theory; the measurement is not
            return self.undecided if agrees else FAILS
        if self.departs_from_theory:
            return FAILS
        if agrees:
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
    tolerance_reason: str  # why its tolerances are what they are, in a few present-tense sentences
    decide: Callable[[Results], list[Check]] = field(repr=False)
    # the lesson's sentence each check decides, verbatim, by the check's name (a constant of the claim's module, the
    # same one its decide function makes the check with): a check decides that sentence and nothing more
    sentences: Mapping[str, str] = field(default_factory=dict, repr=False)
    page: str = ""  # its derivation in full: a page of docs/, from the repository's root
    # the checks (by name, keys of `sentences`) whose measured numbers the report's lead quotes: the claim's own
    # series; empty, or none of them made in a run: its first check's
    lead: tuple[str, ...] = ()
    # its share of the run's false-fail budget ALPHA_FAMILY, split over its own statistical checks (its k): a claim that
    # makes statistical checks declares one (standard_errors.ALPHA_CLAIM, unless it has a reason for another), a claim
    # without needs none. Never set from the other claims, so no claim changes another's k; the registry's shares sum
    # to at most ALPHA_FAMILY (the union bound over claims: the house lane checks it)
    alpha: float = 0.0
    # theory's finite-d_k expectations its decide function asks for (Results.expectation's keys, in the order asked) on
    # the tables of a config, and the settings they are made from (section -> its settings): a study computes them
    # once for all its runs, and the workflow's expectations job reruns when those settings change
    expectations: Callable[[Mapping], list[tuple[str, str, int, int]]] | None = field(default=None, repr=False)
    expectation_settings: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    # statistics of the softmax weights its expectations are of, beyond the built-in ones (expectations.STATISTICS)
    statistics: tuple[Statistic, ...] = field(default=(), repr=False)
    # kinds of expectation it computes itself, beyond claims.expectations' (a closed form, a Monte Carlo of its own)
    expectation_kinds: tuple[ExpectationKind, ...] = field(default=(), repr=False)

    def sentence(self, check: str) -> str:
        """The lesson's sentence the check named `check` decides; KeyError if the claim makes no such check."""
        return self.sentences[check]


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


DERIVED_NOTE = "derived from {of}: the same evidence, counted once in the Bonferroni split"


def derived_of(note: str) -> str:
    """The claim id a derived check's note (DERIVED_NOTE, first) names as the one whose check it repeats; "" if none:
    how results/claims.csv gives back Check.of_claim."""
    found = re.match(r"derived from ([A-Z]+\d+) ", note)
    return found.group(1) if found else ""


def derived(claim, check, parameters, measured, expected, se, relation, source, of: str, **kw) -> Check:
    """A statistic that is a fixed function of another check's (`of`: "<claim id> <check> [<parameters>]"), so the
    same evidence: decided like a statistical check with the k of `of`'s claim, but not counted again in the
    Bonferroni split (it fails exactly when `of` does)."""
    cell = _cell(measured, kw)
    of_claim = of.split(" ", 1)[0]
    if not re.fullmatch(r"[A-Z]+\d+", of_claim):
        raise ValueError(f"derived check {claim} {check}: `of` must start with the claim id of the check it repeats, "
                         f"got {of!r}")
    note = DERIVED_NOTE.format(of=of)
    return Check(claim, check, parameters, relation, float(expected), float(measured), "derived", source,
                 se=float(se), cell=cell, note=note, of_claim=of_claim, **kw)


def exact(claim, check, parameters, measured, expected, source, relation="equals", **kw) -> Check:
    cell = _cell(measured, kw)
    return Check(claim, check, parameters, relation, float(expected), float(measured), "exact", source,
                 cell=cell, **kw)


def missing(claim, check, parameters, source, why) -> Check:
    return Check(claim, check, parameters, "equals", float("nan"), float("nan"), "missing", source, note=why)


def mismatched_axes(got: Sequence[int], want: Sequence[int]) -> int:
    """How many axes of a shape differ from the expected one (a missing or extra axis counts too)."""
    # zip stops at the shorter shape; the missing or extra axes are counted apart
    return sum(a != b for a, b in zip(got, want, strict=False)) + abs(len(got) - len(want))


# --------------------------------------------------------------------------
# A decided run

@dataclass(frozen=True)
class Decision:
    """Every check of a run, with the share of the run's false-fail budget each claim with statistical checks spends
    (its k is that share split over its own statistical checks)."""

    checks: tuple[Check, ...]
    shares: Mapping[str, float]  # claim id -> its share (Claim.alpha), for each claim with statistical checks
    alpha_family: float = ALPHA_FAMILY  # the run's budget: the shares sum to at most this
    statements: Mapping[str, str] = field(default_factory=dict)  # claim id -> its statement, for the table

    def n_statistical_of(self, claim: str) -> int:
        """The claim's statistical checks: its share is split over these."""
        return sum(c.claim == claim and c.basis == "statistical" for c in self.checks)

    @property
    def n_statistical(self) -> int:
        return sum(c.basis == "statistical" for c in self.checks)

    def k_of(self, claim: str) -> float:
        """The claim's k: its share split over its statistical checks; nan for a claim without any."""
        if claim not in self.shares:
            return math.nan
        return standard_errors.bonferroni_k(self.n_statistical_of(claim), self.shares[claim])

    @property
    def ks(self) -> dict[str, float]:
        """Each claim's k, by id, for the claims with statistical checks."""
        return {claim: self.k_of(claim) for claim in self.shares}

    @property
    def alpha_spent(self) -> float:
        """The union bound on the run's false-fail rate: the claims' shares summed (at most alpha_family)."""
        return math.fsum(self.shares.values())

    def table(self) -> pd.DataFrame:
        """One row per check: the contents of results/claims.csv."""
        rows = [{
            "id": c.claim, "statement": self.statements[c.claim], "check": c.check, "parameters": c.parameters,
            "relation": c.relation, "expected": c.expected, "measured": c.measured, "tolerance": c.tolerance,
            "deviation": c.deviation, "margin": c.margin, "verdict": c.verdict, "basis": c.basis,
            "standard_error": c.se, "expected_se": c.expected_se, "k": c.k, "k_prime": c.k_prime, "literal": c.literal,
            "theory_says_false": c.theory_says_false, "premise_not_met": c.premise_not_met,
            "theory_unclear": c.theory_unclear, "theory": c.theory, "theory_se": c.theory_se,
            "theory_tolerance": c.theory_tolerance, "source": c.source, "note": c.note,
        } for c in self.checks]
        return pd.DataFrame(rows)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == FAILS]
