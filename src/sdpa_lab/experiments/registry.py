"""Every experiment, gathered from the modules that declare them (`DECLARED`, sdpa_lab.experiments.declaration).

The workflow (workflow/rules/common.smk), the result reader (sdpa_lab.results), the
stale-config check, the config check, the calibration and the cost model read `EXPERIMENTS`.
It imports every module of the sdpa_lab.experiments package (`pkgutil`; a module that declares
none, as sizes.py, is skipped), so NumPy too: a job does not read it, it imports its own module
alone (`declaration.declared_in`). Two experiments of one name are refused, naming both modules.

The order, where it shows (the rules' targets, the report's runtime table, the calibration's
experiments), comes from one declared thing, the schema (config.schema.yaml): the experiments with a
config section in the order of their sections there, then those without one (the lesson replications)
by module name and, within a module, in the order it declares them. The order the modules are found
in changes nothing.

Adding an experiment: see CONTRIBUTING.md.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from types import ModuleType

from sdpa_lab.config import experiment_sections
from sdpa_lab.experiments.declaration import (
    RESULTS_DIR,
    TRIAL_SCORES,
    TRIAL_SCORES_JOB,
    TRIAL_SCORES_MODULE,
    Experiment,
    Output,
)

__all__ = ["EXPERIMENTS", "RESULTS_DIR", "SECTIONS", "TRIAL_SCORES", "TRIAL_SCORES_JOB", "TRIAL_SCORES_MODULE",
           "Experiment", "Output", "columns", "gather", "output_paths", "settings_of", "trial_scores_files"]

PACKAGE = "sdpa_lab.experiments"


def package_modules(package: str = PACKAGE) -> list[ModuleType]:
    """Every module of `package` (not its subpackages), imported, by name."""
    path = importlib.import_module(package).__path__
    return [importlib.import_module(f"{package}.{info.name}")
            for info in sorted(pkgutil.iter_modules(path), key=lambda info: info.name) if not info.ispkg]


def gather(modules: Iterable[ModuleType], sections: Iterable[str]) -> dict[str, Experiment]:
    """The experiments `modules` declare (their `DECLARED`; a module without one declares none), by name,
    ordered as the module docstring says: by their section's place in `sections`, then the sectionless by
    module name and declaration order. ValueError on a name declared twice, or on a declaration whose
    function is not in the module that declares it (the job imports that module alone)."""
    where: dict[str, str] = {}
    found: list[tuple[str, int, Experiment]] = []
    for module in modules:
        for i, experiment in enumerate(getattr(module, "DECLARED", ())):
            if experiment.name in where:
                raise ValueError(f"experiment {experiment.name!r} is declared twice: in {where[experiment.name]} "
                                 f"and in {module.__name__}")
            if experiment.module != module.__name__:
                raise ValueError(f"experiment {experiment.name!r} is declared in {module.__name__} but runs "
                                 f"{experiment.function}: declare it in its function's module")
            where[experiment.name] = module.__name__
            found.append((module.__name__, i, experiment))
    place = {section: i for i, section in enumerate(sections)}
    unknown = sorted(e.section for _, _, e in found if e.section and e.section not in place)
    if unknown:
        raise ValueError(f"experiment sections not in the config schema: {', '.join(unknown)}")

    def order(entry: tuple[str, int, Experiment]) -> tuple:
        module, i, experiment = entry
        return (place[experiment.section], "", 0) if experiment.section else (len(place), module, i)

    return {e.name: e for _, _, e in sorted(found, key=order)}


EXPERIMENTS: dict[str, Experiment] = gather(package_modules(), experiment_sections())

# The config sections, one per sweep experiment (the lesson replications have none), in the schema's order.
SECTIONS: tuple[str, ...] = tuple(e.section for e in EXPERIMENTS.values() if e.section)


def settings_of(config: Mapping, name: str) -> dict:
    """The settings experiment `name` reads from `config`: the seed and its own section (none for the lessons)."""
    section = EXPERIMENTS[name].section
    return {"seed": config["seed"], **config[section]} if section else {}


def trial_scores_files(name: str, settings: Mapping) -> dict[int, str]:
    """The trial-score file of each d_k experiment `name` sweeps with `settings` (none if it shares none)."""
    return EXPERIMENTS[name].trial_scores_files(settings)


def output_paths(name: str) -> dict[str, str]:
    """Experiment `name`'s outputs: {output key: path}."""
    return {key: out.path for key, out in EXPERIMENTS[name].outputs.items()}


def columns() -> dict[str, dict[str, str]]:
    """Every result CSV's columns and their kinds, by file name."""
    return {out.file: dict(out.columns) for e in EXPERIMENTS.values() for out in e.outputs.values()}
