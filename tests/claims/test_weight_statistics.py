"""A statistic a claim declares (Claim.statistics) is computed by the expectations like a built-in one, and moves
none of the built-ins' numbers."""

from __future__ import annotations

import dataclasses
import importlib
import math
from types import SimpleNamespace

import numpy as np
import pytest

from sdpa_lab.claims import expectations as E
from sdpa_lab.claims.declared import package_modules, statistics_of
from sdpa_lab.claims.weight_statistics import Statistic

registry = importlib.import_module("sdpa_lab.claims.registry")  # the module: the package's `registry` is a function

# sum_j p_j^2: the variance of one coordinate of sum_j p_j v_j for unit-normal values v_j
CONCENTRATION = Statistic("concentration", lambda p, rest: (p * p).sum(axis=-1))


@pytest.fixture
def declared(monkeypatch):
    """The claims with a copy of B7 that declares CONCENTRATION (its only change), as the expectations see them."""
    claims = tuple(dataclasses.replace(c, statistics=(CONCENTRATION,)) if c.id == "B7" else c
                   for c in registry.CLAIMS)
    monkeypatch.setattr(E, "declared_statistics", lambda: statistics_of([SimpleNamespace(CLAIMS=claims)]))
    return claims


def test_a_declared_statistic_is_found_by_its_name(declared):
    assert E.declared("concentration") is CONCENTRATION
    assert "entropy" not in E.declared_statistics()  # a built-in is not declared
    s = np.random.default_rng(3).standard_normal((40, 5)) * 2.0
    p = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(E.softmax_statistic("concentration", s), (p * p).sum(axis=-1), rtol=1e-12)


def test_an_undeclared_statistic_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown statistic 'concentration'.*entropy.*Claim\.statistics"):
        E.expectation("unscaled", "concentration", 4, 8)


@pytest.mark.parametrize("d_k, T, scaled", [(4, 8, True), (64, 8, False), (1, 2, True)])
def test_a_declared_statistic_s_expectation_matches_a_brute_force_simulation(declared, d_k, T, scaled):
    mean, se = E.expectation("scaled" if scaled else "unscaled", "concentration", d_k, T)
    rng = np.random.default_rng(d_k * 100 + T)
    q = rng.standard_normal((100_000, d_k))
    raw = np.einsum("ntd,nd->nt", rng.standard_normal((100_000, T, d_k)), q)
    s = raw / math.sqrt(d_k) if scaled else raw
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    sim = ((p / p.sum(axis=-1, keepdims=True)) ** 2).sum(axis=-1)  # written out, not through the statistic
    assert 1 / T < sim.mean() < 1
    assert abs(sim.mean() - mean) < 4.5 * math.hypot(se, sim.std() / math.sqrt(len(sim))), (mean, se, sim.mean())


def _computed_afresh(kind: str, name: str, d_k: int, T: int) -> tuple[float, float]:
    for cached in vars(E).values():
        getattr(cached, "cache_clear", lambda: None)()
    return E.expectation(kind, name, d_k, T)


def test_declaring_a_statistic_moves_no_built_in_number(declared):
    with_it = [_computed_afresh(kind, "entropy", 16, 8) for kind in ("scaled", "unscaled")]
    with_it.append(_computed_afresh("scaled", "concentration", 16, 8))  # its draws beside theirs
    with_it.append(_computed_afresh("scaled", "entropy", 16, 8))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(E, "declared_statistics", dict)
        without = [_computed_afresh(kind, "entropy", 16, 8) for kind in ("scaled", "unscaled")]
    assert with_it[:2] == without and with_it[3] == without[0]
    assert CONCENTRATION.key not in range(len(E.STATISTICS))  # its draws are its own


def test_two_statistics_of_one_name_are_refused_naming_the_claim():
    twin = Statistic("concentration", lambda p, rest: p.max(axis=-1))
    claims = [dataclasses.replace(c, statistics=(s,)) for c, s in zip(registry.CLAIMS[:2], (CONCENTRATION, twin),
                                                                        strict=True)]
    words = f"'concentration' is declared twice, differently \\(claim {claims[1].id} in fake"
    with pytest.raises(ValueError, match=words):
        statistics_of([SimpleNamespace(CLAIMS=claims, __name__="fake")])


@pytest.mark.house
def test_every_declared_statistic_has_a_name_and_draws_of_its_own():
    declared = statistics_of(package_modules())  # the package's own, gathered afresh
    assert not set(declared) & set(E.STATISTICS), declared
    keys = [s.key for s in declared.values()]
    assert len(keys) == len(set(keys)) and not set(keys) & set(range(len(E.STATISTICS))), declared


def test_an_expectation_kind_a_claim_declares_is_computed_by_its_own_function(monkeypatch):
    from sdpa_lab.claims import expectation_kinds
    from sdpa_lab.claims.declared import ExpectationKind, kinds_of

    calls = []
    toy = ExpectationKind("toy", "entropy", lambda d_k, T, unit_means=None: calls.append((d_k, T)) or (0.5, 0.01))
    claims = [dataclasses.replace(registry.CLAIMS[0], expectation_kinds=(toy,))]
    monkeypatch.setattr(expectation_kinds, "declared_kinds", lambda: kinds_of([SimpleNamespace(CLAIMS=claims)]))
    assert expectation_kinds.expectation("toy", "entropy", 4, 8) == (0.5, 0.01) and calls == [(4, 8)]
    got = expectation_kinds.expectations([("toy", "entropy", 16, 8), ("unscaled", "entropy", 16, 8)])
    assert got[("toy", "entropy", 16, 8)] == (0.5, 0.01) and got[("unscaled", "entropy", 16, 8)] == \
        E.expectation("unscaled", "entropy", 16, 8)
    with pytest.raises(ValueError, match="'toy' is of 'entropy', not of 'jacobian_norm'"):
        expectation_kinds.expectation("toy", "jacobian_norm", 4, 8)
    assert expectation_kinds.unit_variance_asked([("toy", "entropy", 4, 8)]) == set()


def test_one_kind_declared_twice_differently_is_refused():
    from sdpa_lab.claims.declared import ExpectationKind, kinds_of

    one, other = (ExpectationKind("toy", name, lambda d_k, T, unit_means=None: (0.0, 0.0))
                  for name in ("entropy", "jacobian_norm"))
    same = [dataclasses.replace(c, expectation_kinds=(one,)) for c in registry.CLAIMS[:2]]
    assert kinds_of([SimpleNamespace(CLAIMS=same, __name__="fake")]) == {"toy": one}  # two claims, one declaration
    with pytest.raises(ValueError, match="'toy' is declared twice, differently"):
        kinds_of([SimpleNamespace(CLAIMS=[same[0], dataclasses.replace(same[1], expectation_kinds=(other,))],
                                  __name__="fake")])
