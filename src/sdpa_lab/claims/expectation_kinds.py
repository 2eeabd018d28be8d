"""Every expectation the claims ask for, by kind (Results.expectation's key: kind, statistic, d_k, T): those of
claims.expectations (the scaled and the unscaled softmax's statistics and their laws), and those of the modules built
on it beside it, each for a check that holds its measurement to theory's value where the lesson's sentence may be
left undecided: the mean entropy under 1/d_k and its gap to 1/sqrt(d_k)'s (B8; claims.entropy_expectations), the
chance that Exercise 2 as written falls at every step (B5; there too, at the exercise's own d_k and T), and the
unscaled over the scaled mean gradient at the scores (B7; claims.gradient_expectation).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sdpa_lab.claims.expectations as base
from sdpa_lab.claims.entropy_expectations import one_draw_falls, over_d_k_entropy, over_d_k_gap
from sdpa_lab.claims.gradient_expectation import gradient_ratio
from sdpa_lab.experiments.sizes import EXERCISE2_D_K, EXERCISE2_T

OVER_D_K, OVER_D_K_GAP, ONE_DRAW_FALLS = "inv_dk", "inv_dk_minus_scaled", "one_draw_falls"
GRADIENT_RATIO = "unscaled_over_scaled"
# The kinds computed beside claims.expectations, and the statistic each is of.
OTHER_KINDS = {OVER_D_K: "entropy", OVER_D_K_GAP: "entropy", ONE_DRAW_FALLS: "entropy",
               GRADIENT_RATIO: "score_grad_norm"}


def _other(kind: str, name: str, d_k: int, T: int, unit_means: Mapping | None) -> tuple[float, float]:
    """Expectation `kind` of OTHER_KINDS and its Monte Carlo SE; ValueError on a statistic or size it is not of."""
    if name != OTHER_KINDS[kind]:
        raise ValueError(f"expectation {kind!r} is of {OTHER_KINDS[kind]!r}, not of {name!r}")
    if kind == GRADIENT_RATIO:
        return gradient_ratio(d_k, T)
    if kind == OVER_D_K:
        return over_d_k_entropy(d_k, T)
    if kind == OVER_D_K_GAP:
        return over_d_k_gap(d_k, T, unit_means)
    if (d_k, T) != (EXERCISE2_D_K[-1], EXERCISE2_T):
        raise ValueError(f"expectation {kind!r} is Exercise 2's, at d_k={EXERCISE2_D_K[-1]} and T={EXERCISE2_T} "
                         f"only (got d_k={d_k}, T={T})")
    return one_draw_falls()


def expectation(kind: str, name: str, d_k: int, T: int, unit_means: Mapping | None = None) -> tuple[float, float]:
    """Expectation `kind` of statistic `name` at head size d_k over T keys, and its Monte Carlo SE: what the claims
    compare with (sdpa_lab.results.Results.expectation). `unit_means`: as claims.expectations.mean_statistic's."""
    if kind in OTHER_KINDS:
        return _other(kind, name, d_k, T, unit_means)
    return base.expectation(kind, name, d_k, T, unit_means=unit_means)


def expectations(keys: Iterable[tuple[str, str, int, int]], unit_means: Mapping | None = None) -> dict:
    """expectation(*key) of each key, in the order given (claims.expectations.expectations makes its own kinds')."""
    keys = list(keys)
    made = base.expectations([key for key in keys if key[0] not in OTHER_KINDS], unit_means)
    return {key: made[key] if key in made else _other(*key, unit_means) for key in keys}


def unit_variance_asked(keys: Iterable[tuple[str, str, int, int]]) -> set[tuple[str, int]]:
    """The (statistic, T) whose unit-variance mean the expectations `keys` are built on (claims.expectations'
    unit_variance_asked), the entropy's gap under 1/d_k included."""
    keys = list(keys)
    return base.unit_variance_asked(keys) | {(name, T) for kind, name, _, T in keys if kind == OVER_D_K_GAP}
