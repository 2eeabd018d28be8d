"""Deciding a run: every claim of the registry decided from a run's CSVs, each statistical tolerance set
(k standard errors, each claim's k from a Bonferroni split of its own share of the run's false-fail budget over its
own statistical checks), and results/claims.csv written and read back.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

import sdpa_lab.claims.exact_laws as exact_laws
from sdpa_lab.claims.model import Check, Claim, Decision, derived_of
from sdpa_lab.claims.registry import CLAIMS
from sdpa_lab.claims.standard_errors import ALPHA_FAMILY, cornish_fisher
from sdpa_lab.io import write_csv
from sdpa_lab.numbers import number
from sdpa_lab.results import Results, ResultsError, size_limits, stale_errors


def _with_tolerance(c: Check, tolerance: float, **changes) -> Check:
    """`c` with its tolerance (and `changes`, in the same copy), saying so when the tolerance reaches past every
    value the statistic can take."""
    if tolerance < c.reach:
        return replace(c, tolerance=tolerance, **changes)
    why = (f"cannot be decided at this sample size: the tolerance {number(tolerance, digits=3)} is at least the "
           f"largest deviation the statistic can show ({number(c.reach, digits=3)}); more samples needed")
    return replace(c, tolerance=tolerance, note="; ".join(filter(None, (c.note, why))), **changes)


def _with_k(c: Check, k: float) -> Check:
    """A statistical check with its k' (k, widened by Cornish-Fisher on the side its statistic's known skewness
    stretches, or from its exact law where the check names one: claims.exact_laws) and its tolerance, k' standard
    errors plus k Monte Carlo SEs of its expected value; and, where it is held to a theory value besides
    (Check.theory), that one's tolerance the same way."""
    exact = exact_laws.k_prime(c.law, k, c.expected, c.se) if c.law else None  # the statistic's own law, where known
    k_prime = exact if exact is not None else cornish_fisher(k, c.skewness, c.excess_kurtosis)
    theory_tolerance = c.se * k_prime + k * c.theory_se if math.isfinite(c.theory) else math.nan
    return _with_tolerance(c, c.se * k_prime + k * c.expected_se, k=k, k_prime=k_prime,
                           theory_tolerance=theory_tolerance)


def shares(claims: Sequence[Claim], checks: Sequence[Check], alpha_family: float) -> dict[str, float]:
    """Each claim that made a statistical check, by id, and its share of the run's budget (Claim.alpha). ValueError,
    naming them, where a share is not in (0, alpha_family] or the shares sum above alpha_family: the union bound over
    claims would then no longer keep the run's promise."""
    making = {c.claim for c in checks if c.basis == "statistical"}
    out = {claim.id: claim.alpha for claim in claims if claim.id in making}
    bad = [f"{cid} ({alpha})" for cid, alpha in out.items() if not 0 < alpha <= alpha_family]
    if bad:
        raise ValueError(f"claims with statistical checks need a share of the run's false-fail budget in "
                         f"(0, {alpha_family}] (Claim.alpha): {', '.join(bad)}")
    if math.fsum(out.values()) > alpha_family:
        raise ValueError(f"the claims' shares of the false-fail budget sum to {math.fsum(out.values()):.6g}, above the "
                         f"run's {alpha_family} ({', '.join(f'{c} {a:g}' for c, a in out.items())}): lower some "
                         "Claim.alpha (docs/claims/README.md#k)")
    return out


def _k_for(c: Check, ks: Mapping[str, float]) -> float:
    """The k of a check: its claim's, or for a derived check the k of the claim whose check it repeats."""
    owner = c.of_claim or c.claim
    if owner not in ks:
        raise ValueError(f"claim {c.claim}'s check {c.check!r} ({c.parameters}) repeats claim {owner}'s evidence "
                         f"and takes its k: decide {owner} with it")
    return ks[owner]


def decide(results: Results | str, claims: Sequence[Claim] | None = None,
           alpha_family: float = ALPHA_FAMILY, k: float | None = None) -> Decision:
    """Decide every claim from the CSVs in `results`; statistical tolerances are k * SE, each claim's k from its own
    share of the run's budget `alpha_family` (Claim.alpha) split over its own statistical checks (Bonferroni;
    widened on the side a known skewness of the statistic stretches, by Cornish-Fisher, or from its exact law),
    plus k Monte Carlo SEs of an expected value computed by Monte Carlo (a bias bound: Check.expected_se).

    A claim's k depends on its own share and checks alone, so a subset of the claims is decided with the k each has
    in the whole run. `k` may be given to decide every check at that k instead (a test's; the shares are still
    checked, and Decision.ks still gives each claim's own k: each check's k is the one it was decided with).
    """
    claims = CLAIMS if claims is None else claims
    R = results if isinstance(results, Results) else Results(results)
    checks: list[Check] = []
    for claim in claims:
        checks.extend(claim.decide(R))
    for c in checks:
        if not (np.isfinite(c.measured) or c.basis == "missing"):
            raise ResultsError(f"{R.dir / c.source}: claim {c.claim} ({c.check}, {c.parameters}) "
                               f"measured a non-finite value {c.measured}")
    # derived checks repeat one of these: not counted. A check whose sentence theory leaves undecided still holds its
    # measurement to theory's value, two-sided, so it counts. One held to a theory value besides its one-sided
    # relation ("above" 0, where theory's difference is positive) counts once: it fails below the higher of -tolerance
    # and theory - its tolerance, or above theory + its tolerance, one tail each, together within the two-sided share
    # (docs/checker.md).
    decision = Decision(tuple(checks), shares(claims, checks, alpha_family), alpha_family,
                        {c.id: c.statement for c in claims})
    ks = decision.ks
    return replace(decision, checks=tuple(_with_k(c, _k_for(c, ks) if k is None else k)
                                          if c.basis in ("statistical", "derived") else c for c in decision.checks))


def refuse_stale(results: Results, config: Mapping | None) -> None:
    """Raise ResultsError, naming every setting, when the CSVs in `results` were made with another config."""
    errors = stale_errors(results, config) if config is not None else []
    if errors:
        raise ResultsError("\n".join(errors))


def decide_checked(results_dir: str | Path, config: dict | None, expectations: Mapping | None = None) -> Decision:
    """Decide the claims after refusing results that do not match `config` (or are larger than it makes).
    `expectations`: the finite-d_k expectations the claims ask for (expectation_table.read_expectations), else
    computed here."""
    results = Results(results_dir, limits=size_limits(config), expectations=expectations)
    refuse_stale(results, config)
    return decide(results)


def write_claims(results_dir: str | Path, out: str | Path, config: dict | None = None,
                 expectations: Mapping | None = None) -> Decision:
    """Decide every claim and write results/claims.csv (one row per check); `expectations` as decide_checked."""
    decision = decide_checked(results_dir, config, expectations)
    write_csv(decision.table(), out)
    return decision


def _number(text: str) -> float:
    """A number of claims.csv: shortest round-trip text, so float() gives back the decided value; empty is nan."""
    return float(text) if text else math.nan


def read_claims(path: str | Path) -> Decision:
    """The decision results/claims.csv holds (write_claims), for the figures and the report, which show it
    rather than deciding again: every check's numbers as decided, with the k it was decided with, and each claim's
    share from the registry. A row whose verdict does not follow from its numbers is an error.
    """
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    checks = tuple(Check(r["id"], r["check"], r["parameters"], r["relation"], _number(r["expected"]),
                         _number(r["measured"]), r["basis"], r["source"], tolerance=_number(r["tolerance"]),
                         se=_number(r["standard_error"]), expected_se=_number(r["expected_se"]),
                         k=_number(r.get("k", "")), k_prime=_number(r["k_prime"]),
                         of_claim=derived_of(r["note"]) if r["basis"] == "derived" else "",
                         literal=r["literal"] == "True",
                         theory_says_false=r["theory_says_false"] == "True",
                         premise_not_met=r.get("premise_not_met") == "True",
                         theory_unclear=r.get("theory_unclear") == "True",
                         theory=_number(r.get("theory", "")), theory_se=_number(r.get("theory_se") or "0"),
                         theory_tolerance=_number(r.get("theory_tolerance", "")),
                         note=r["note"])
                   for r in rows)
    for row, (c, r) in enumerate(zip(checks, rows, strict=True), start=2):
        if c.verdict != r["verdict"]:
            raise ResultsError(f"{path}: row {row} ({c.claim}, {c.check}, {c.parameters}) says {r['verdict']!r}, "
                               f"but its numbers give {c.verdict!r}: rerun the claims rule")
    return Decision(checks, shares(list(CLAIMS), checks, ALPHA_FAMILY), ALPHA_FAMILY,
                    {r["id"]: r["statement"] for r in rows})
