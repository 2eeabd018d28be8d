"""What the claims declare for their expectations beyond their claims, gathered as the registry gathers the claims:
every module of the sdpa_lab.claims package, imported by `pkgutil` (`package_modules`, which the registry uses too).

The statistics of the softmax weights a claim's expectations are of (`Claim.statistics`) and the kinds of
expectation it computes itself (`Claim.expectation_kinds`) are gathered here, not in the registry: the expectations
ask for them, and the registry's claims import the expectations.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType

from sdpa_lab.claims.weight_statistics import Statistic

PACKAGE = "sdpa_lab.claims"


@dataclass(frozen=True)
class ExpectationKind:
    """An expectation a claim computes itself, beyond claims.expectations' kinds: its kind (Results.expectation's
    first key), the statistic it is of, and `compute(d_k, T, unit_means) -> (mean, Monte Carlo SE)`, with
    `unit_means` as claims.expectations.mean_statistic's; `unit_variance`: whether it is built on its statistic's
    unit-variance mean (a study computes those once for all its configs)."""

    kind: str
    statistic: str
    compute: Callable[[int, int, Mapping | None], tuple[float, float]] = field(repr=False)
    unit_variance: bool = False


def package_modules(package: str = PACKAGE) -> list[ModuleType]:
    """Every module of `package` (not its subpackages), imported, by name."""
    path = importlib.import_module(package).__path__
    return [importlib.import_module(f"{package}.{info.name}")
            for info in sorted(pkgutil.iter_modules(path), key=lambda info: info.name) if not info.ispkg]


def _gathered(modules: Iterable[ModuleType], field_name: str, key: str, what: str) -> dict:
    """The declarations in the `field_name` of the claims of `modules` (each one's `CLAIMS`), by their `key` (several
    claims may make one declaration). ValueError naming the claim on two different declarations of one key."""
    out: dict = {}
    for module in modules:
        for claim in getattr(module, "CLAIMS", ()):
            for declared in getattr(claim, field_name):
                if out.setdefault(getattr(declared, key), declared) != declared:
                    raise ValueError(f"{what} {getattr(declared, key)!r} is declared twice, differently (claim "
                                     f"{claim.id} in {module.__name__}, and before)")
    return out


def statistics_of(modules: Iterable[ModuleType]) -> dict[str, Statistic]:
    """The statistics the claims of `modules` declare, by name; ValueError on two of one name."""
    return _gathered(modules, "statistics", "name", "statistic")


@cache
def declared_statistics() -> dict[str, Statistic]:
    """Every statistic the package's claims declare, by name (gathered once)."""
    return statistics_of(package_modules())


def kinds_of(modules: Iterable[ModuleType]) -> dict[str, ExpectationKind]:
    """The expectation kinds the claims of `modules` declare, by kind; ValueError on two of one kind."""
    return _gathered(modules, "expectation_kinds", "kind", "expectation kind")


@cache
def declared_kinds() -> dict[str, ExpectationKind]:
    """Every expectation kind the package's claims declare, by kind (gathered once)."""
    return kinds_of(package_modules())
