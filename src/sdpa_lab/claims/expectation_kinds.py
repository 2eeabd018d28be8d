"""Every expectation the claims ask for, by kind (Results.expectation's key: kind, statistic, d_k, T): those of
claims.expectations (the scaled and the unscaled softmax's statistics and their laws), and those a claim computes
itself and declares beside its decide function (`Claim.expectation_kinds`; gathered by claims.declared), e.g. the
mean entropy under 1/d_k (B8), the chance that Exercise 2 as written falls at every step (B5), the unscaled over the
scaled mean gradient at the scores (B7): claims.saturation_expectations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sdpa_lab.claims.expectations as base
from sdpa_lab.claims.declared import declared_kinds


def _declared(kind: str, name: str, d_k: int, T: int, unit_means: Mapping | None) -> tuple[float, float]:
    """Expectation `kind`, one a claim declares, and its Monte Carlo SE; ValueError on a statistic it is not of."""
    declared = declared_kinds()[kind]
    if name != declared.statistic:
        raise ValueError(f"expectation {kind!r} is of {declared.statistic!r}, not of {name!r}")
    return declared.compute(d_k, T, unit_means)


def expectation(kind: str, name: str, d_k: int, T: int, unit_means: Mapping | None = None) -> tuple[float, float]:
    """Expectation `kind` of statistic `name` at head size d_k over T keys, and its Monte Carlo SE: what the claims
    compare with (sdpa_lab.results.Results.expectation). `unit_means`: as claims.expectations.mean_statistic's."""
    if kind in declared_kinds():
        return _declared(kind, name, d_k, T, unit_means)
    return base.expectation(kind, name, d_k, T, unit_means=unit_means)


def expectations(keys: Iterable[tuple[str, str, int, int]], unit_means: Mapping | None = None) -> dict:
    """expectation(*key) of each key, in the order given (claims.expectations.expectations makes its own kinds')."""
    keys, declared = list(keys), declared_kinds()
    made = base.expectations([key for key in keys if key[0] not in declared], unit_means)
    return {key: made[key] if key in made else _declared(*key, unit_means) for key in keys}


def unit_variance_asked(keys: Iterable[tuple[str, str, int, int]]) -> set[tuple[str, int]]:
    """The (statistic, T) whose unit-variance mean the expectations `keys` are built on (claims.expectations'
    unit_variance_asked), those of the declared kinds built on it included."""
    keys, declared = list(keys), declared_kinds()
    return base.unit_variance_asked(keys) | {(name, T) for kind, name, _, T in keys
                                             if kind in declared and declared[kind].unit_variance}
