"""The experiments' registry gathers each module's declarations: skipped without one, a duplicate refused, and
an order that comes from the schema's sections, not from the order the modules are found in."""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType

import pytest

from sdpa_lab.config import experiment_sections
from sdpa_lab.experiments.declaration import Experiment, Output, declared_in
from sdpa_lab.experiments.registry import EXPERIMENTS, gather, package_modules

pytestmark = pytest.mark.house  # the house's invariants (docs/testing.md)


def module(name: str, *declared: Experiment) -> ModuleType:
    """A stand-in module `sdpa_lab.experiments.<name>`, declaring `declared` (none: no DECLARED at all)."""
    made = ModuleType(f"sdpa_lab.experiments.{name}")
    if declared:
        made.DECLARED = declared
    return made


def experiment(name: str, module_name: str, section: str | None = None) -> Experiment:
    where = f"sdpa_lab.experiments.{module_name}"
    return Experiment(name, f"{where}:{name}_tables", {"table": Output(f"{name}.csv", {"value": "float"})},
                      claims=(), section=section, row_counts=f"{where}:{name}_row_counts")


def test_every_declared_experiment_is_gathered_from_its_own_module():
    modules = {m.__name__: m for m in package_modules()}
    declared = {e.name: name for name, m in modules.items() for e in getattr(m, "DECLARED", ())}
    assert declared == {name: e.module for name, e in EXPERIMENTS.items()}
    # A module that declares none is skipped, yet was looked at.
    assert {"sdpa_lab.experiments.sizes", "sdpa_lab.experiments.trial_scores"} <= modules.keys()
    assert not {"sdpa_lab.experiments.sizes", "sdpa_lab.experiments.trial_scores"} & set(declared.values())
    for name, e in EXPERIMENTS.items():  # what a job reads: its module's declaration, the very one gathered
        assert declared_in(e.module, name) is e


def test_a_module_without_declarations_is_skipped():
    a = experiment("a", "one", "s")
    assert gather([module("helpers"), module("one", a), module("empty")], ["s"]) == {"a": a}


def test_an_experiment_declared_twice_is_refused_naming_both_modules():
    with pytest.raises(ValueError, match=r"'a' is declared twice: in sdpa_lab.experiments.one and in "
                                         r"sdpa_lab.experiments.two"):
        gather([module("one", experiment("a", "one")), module("two", experiment("a", "two"))], [])


def test_a_declaration_whose_function_is_in_another_module_is_refused():
    with pytest.raises(ValueError, match="declared in sdpa_lab.experiments.two but runs sdpa_lab.experiments.one"):
        gather([module("two", experiment("a", "one"))], [])


def test_a_section_the_schema_does_not_know_is_refused():
    with pytest.raises(ValueError, match="not in the config schema: nowhere"):
        gather([module("one", experiment("a", "one", "nowhere"))], ["s"])


def test_the_order_follows_the_sections_then_module_and_declaration_not_the_modules_found_order():
    """Sectioned experiments in their sections' order; the sectionless after, by module, then as declared."""
    s1, s2 = experiment("late", "zeta", "first"), experiment("early", "alpha", "second")
    r1, r2, r3 = experiment("r1", "replay"), experiment("r2", "replay"), experiment("b0", "beta")
    modules = [module("zeta", s1), module("replay", r1, r2), module("alpha", s2), module("beta", r3)]
    expected = ["late", "early", "b0", "r1", "r2"]
    assert list(gather(modules, ["first", "second"])) == expected
    assert list(gather(modules[::-1], ["first", "second"])) == expected
    assert list(gather(modules, ["second", "first"])) == ["early", "late", "b0", "r1", "r2"]


def test_the_registry_order_is_the_schemas():
    """The workflow's experiments: the schema's sections in its order, then the lesson replications as declared."""
    replication = importlib.import_module("sdpa_lab.experiments.replication")
    sectioned = [e.section for e in EXPERIMENTS.values() if e.section]
    assert sectioned == experiment_sections()
    assert list(EXPERIMENTS)[len(sectioned):] == [e.name for e in replication.DECLARED]
    # Shuffling the modules found changes nothing.
    modules = package_modules()
    assert list(gather(modules[::-1], experiment_sections())) == list(EXPERIMENTS)
    assert dataclasses.is_dataclass(EXPERIMENTS["variance"])
