"""What the claims' modules declare beyond their claims, gathered as the registry gathers the claims: every module
of the sdpa_lab.claims package, imported by `pkgutil` (`package_modules`, which the registry uses too).

The statistics of the softmax weights a claim's expectations are of (`Claim.statistics`) are gathered here, not
in the registry: the expectations ask for them, and the registry's claims import the expectations.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from functools import cache
from types import ModuleType

from sdpa_lab.claims.weight_statistics import Statistic

PACKAGE = "sdpa_lab.claims"


def package_modules(package: str = PACKAGE) -> list[ModuleType]:
    """Every module of `package` (not its subpackages), imported, by name."""
    path = importlib.import_module(package).__path__
    return [importlib.import_module(f"{package}.{info.name}")
            for info in sorted(pkgutil.iter_modules(path), key=lambda info: info.name) if not info.ispkg]


def statistics_of(modules: Iterable[ModuleType]) -> dict[str, Statistic]:
    """The statistics the claims of `modules` (each one's `CLAIMS`) declare, by name. ValueError on two of one
    name."""
    out: dict[str, Statistic] = {}
    for module in modules:
        for claim in getattr(module, "CLAIMS", ()):
            for statistic in claim.statistics:
                if out.setdefault(statistic.name, statistic) is not statistic:
                    raise ValueError(f"statistic {statistic.name!r} is declared twice (claim {claim.id} in "
                                     f"{module.__name__}, and before)")
    return out


@cache
def declared_statistics() -> dict[str, Statistic]:
    """Every statistic the package's claims declare, by name (gathered once)."""
    return statistics_of(package_modules())
