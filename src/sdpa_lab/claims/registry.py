"""The claims registry: every claim of the lesson, in the lesson's order.

Each claim is declared once, beside its decide function (its words, the lesson's sentence each check decides,
its tolerance reason and its docs/ page: `model.Claim`), and listed in its module's `CLAIMS`: a section
module's closing `CLAIMS` (replication, dot_product_growth, softmax_saturation, ...), or a module of its own
under claims/. `CLAIMS` here gathers them from every module of the sdpa_lab.claims package (`pkgutil`; a
module without `CLAIMS` declares none), ordered by id (`lesson_order`), so the order the modules are found in
changes nothing. A claim that several modules name (deciding imports this `CLAIMS`) is gathered once; two
claims of one id are refused, naming both modules. The checker (`sdpa-lab check`), the claims table
(results/claims.csv), the report and the calibration study read the list made here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import ModuleType

import sdpa_lab.expectation_inputs as inputs
from sdpa_lab.claims.declared import package_modules
from sdpa_lab.claims.model import Claim


def lesson_order(claim: Claim) -> tuple[str, int]:
    """A claim's place: by its id's letter, then its number (A1 .. A3, B1 .. B10, then a project's own C1 ..)."""
    letter, number = re.fullmatch(r"([A-Z]+)(\d+)", claim.id).groups()
    return letter, int(number)


def registry() -> dict[str, Claim]:
    """The claims by id, in the lesson's order."""
    return {c.id: c for c in CLAIMS}


def lesson_sentence(claim: str, check: str) -> str:
    """The lesson's sentence the check `check` of claim `claim` decides (its Claim's `sentences`); KeyError if
    none."""
    return registry()[claim].sentence(check)


def expectations_asked(config: Mapping) -> list[tuple[str, str, int, int]]:
    """Theory's finite-d_k expectations every claim asks for on the tables of `config` (each claim's own
    `expectations`, in the lesson's order): a study computes them once for all its runs."""
    return [key for claim in CLAIMS if claim.expectations is not None for key in claim.expectations(config)]


def expectation_settings() -> dict[str, tuple[str, ...]]:
    """The settings the claims' expectations are made from (each claim's `expectation_settings`), section ->
    its settings, in the lesson's order of the claims."""
    out: dict[str, tuple[str, ...]] = {}
    for claim in CLAIMS:
        for section, keys in claim.expectation_settings.items():
            out[section] = (*out.get(section, ()), *(k for k in keys if k not in out.get(section, ())))
    return out


def expectation_sweep(sweep: Mapping) -> dict:
    """The part of `sweep` the claims' expectations read (expectation_settings), in that order: the workflow's
    `expectations` job takes it as its params, so a change elsewhere does not rerun it, and computes from it
    alone, so reading an undeclared setting fails at once instead of going stale."""
    return inputs.expectation_sweep(sweep, expectation_settings())


def gather(modules: Iterable[ModuleType]) -> tuple[Claim, ...]:
    """The claims of `modules` (each one's `CLAIMS`, if it has one), each once, in the lesson's order.
    ValueError on two claims of one id."""
    where: dict[str, tuple[Claim, str]] = {}
    for module in modules:
        for claim in getattr(module, "CLAIMS", ()):
            seen, first = where.setdefault(claim.id, (claim, module.__name__))
            if seen is not claim:
                raise ValueError(f"claim {claim.id} is declared twice: in {first} and in {module.__name__}")
    return tuple(sorted((claim for claim, _ in where.values()), key=lesson_order))


# Last: a claims module this imports may import `registry` or `lesson_sentence` from here (verdicts does).
CLAIMS: tuple[Claim, ...] = gather(package_modules())
