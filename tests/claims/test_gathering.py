"""The claims registry gathers `CLAIMS` from every module of sdpa_lab.claims: in the lesson's order whatever
order the modules are found in, a claim named by several modules once, two claims of one id refused."""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType

import pytest

from sdpa_lab.claims.replication import A1, A2

pytestmark = pytest.mark.house  # the house's invariants (docs/testing.md)

claims_registry = importlib.import_module("sdpa_lab.claims.registry")  # the package exports a function `registry`


def module(name: str, *claims) -> ModuleType:
    made = ModuleType(f"sdpa_lab.claims.{name}")
    if claims:
        made.CLAIMS = claims
    return made


def test_every_module_with_claims_is_gathered_in_the_lessons_order():
    modules = claims_registry.package_modules()
    named = {c.id for m in modules for c in getattr(m, "CLAIMS", ())}
    assert {c.id for c in claims_registry.CLAIMS} == named
    ids = [c.id for c in claims_registry.CLAIMS]
    assert ids == sorted(ids, key=lambda i: (i[0], int(i[1:])))
    assert claims_registry.gather(modules[::-1]) == claims_registry.CLAIMS  # the modules' order changes nothing


def test_a_module_without_claims_is_skipped_and_a_claim_named_twice_is_gathered_once():
    gathered = claims_registry.gather([module("helpers"), module("section", A2, A1), module("deciding", A1)])
    assert gathered == (A1, A2)


def test_two_claims_of_one_id_are_refused_naming_both_modules():
    other = dataclasses.replace(A1, title="another claim of the same id")
    with pytest.raises(ValueError, match=r"claim A1 is declared twice: in sdpa_lab.claims.one and in "
                                         r"sdpa_lab.claims.two"):
        claims_registry.gather([module("one", A1), module("two", other)])
