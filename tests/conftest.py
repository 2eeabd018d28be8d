"""Shared fixtures: a tiny, fast configuration and the repository root."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import pytest
import yaml
from hypothesis import Phase, settings

from sdpa_lab import attention
from sdpa_lab.config import check_config

REPO = Path(__file__).resolve().parents[1]

# A small, fast sweep: what it changes from the schema's defaults (src/sdpa_lab/config.schema.yaml) ...
TINY_CHANGES = {
    "seed": 7,
    "variance": {"d_k": [4, 64], "n_pairs": 2000},
    "entropy_sweep": {"d_k": [4, 64], "trials": 200},
    "ranking_invariance": {"d_k": [4, 2048], "trials": 200},
    "forward_shape": {"shapes": [[1, 6, 16], [2, 3, 5]]},
    "gradient": {"d_k": [4, 256], "trials": 200},
    "learning": {"d_k": [4, 64], "T": 4, "runs": 10, "steps": 20, "learning_rates": [0.1, 1.0]},
}
# ... and every setting of it, as the workflow holds it (an experiment added later runs at its defaults).
TINY_CONFIG = check_config(TINY_CHANGES)


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def tiny_config() -> dict:
    """A deep copy of a small valid config, safe to mutate."""
    return copy.deepcopy(TINY_CONFIG)


@pytest.fixture
def default_config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


# The attention module as shipped, before any test breaks it on purpose (monkeypatch, calibration's arms).
_SHIPPED_ATTENTION = dict(vars(attention))


@functools.cache
def _lesson_rows(name: str) -> dict:
    from sdpa_lab.pipeline import run_experiment

    return run_experiment(name, {})


def lesson_rows(name: str) -> dict:
    """The rows of lesson replication `name` (an experiment without a config section: the same in every run,
    settings {}), made once per session while the attention is as shipped, else made again."""
    from sdpa_lab.pipeline import run_experiment

    if all(getattr(attention, key, None) is value for key, value in _SHIPPED_ATTENTION.items()):
        return _lesson_rows(name)
    return run_experiment(name, {})


def lesson_tables() -> dict:
    """The lesson replications' tables by file name, as sdpa_lab.calibration.runner.fixed_tables makes them for any
    config (their settings are {}); fresh DataFrames of the rows made once per session (lesson_rows)."""
    import pandas as pd

    from sdpa_lab.calibration.runner import fixed_experiments, table_file

    return {table_file(name, key): pd.DataFrame(rows) for name in fixed_experiments()
            for key, rows in lesson_rows(name).items()}


def write_run(root: Path, config: dict) -> Path:
    """Every experiment's CSVs for `config` under root/results, as the rules write them; returns that folder."""
    from sdpa_lab.experiments.registry import EXPERIMENTS, output_paths, settings_of
    from sdpa_lab.io import write_csv
    from sdpa_lab.pipeline import run_experiment

    config = check_config(config)
    for name in EXPERIMENTS:
        section = EXPERIMENTS[name].section
        tables = run_experiment(name, settings_of(config, name)) if section else lesson_rows(name)
        for key, rel in output_paths(name).items():
            write_csv(tables[key], root / rel)
    return root / "results"


# `mutmut run` (pyproject.toml [tool.mutmut]) selects this profile: no deadline, as mutated code runs
# slower through mutmut's trampolines; derandomized, so that a mutant's verdict is reproducible; and
# no shrinking, since a failing example is all mutmut needs (shrinking made kills time out).
settings.register_profile("mutmut", deadline=None, derandomize=True,
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))

