"""The experiment registry: what is derived from it (columns, sections, the stale-config check)."""

from __future__ import annotations

import copy

import pytest

from sdpa_lab.config import load_schema
from sdpa_lab.experiments.registry import EXPERIMENTS, SECTIONS, columns
from sdpa_lab.results import COLUMNS, Results, read_table, stale_errors

from tests.conftest import TINY_CONFIG, write_run

RECORDED = [(e.name, out.file, setting, column) for e in EXPERIMENTS.values() for out in e.outputs.values()
            for setting, column in out.records.items()]


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("registry_run"), copy.deepcopy(TINY_CONFIG))


def other_value(value):
    """A different value of the same kind as `value`."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        return [[v + 1 for v in value[0]], *value[1:]]
    if isinstance(value, list):
        return [*value[:-1], value[-1] * 2]
    return value * 0.5 if isinstance(value, float) else value + 1


@pytest.mark.house
def test_every_config_section_is_an_experiment_and_every_experiment_section_is_in_the_schema():
    schema = load_schema()
    # A section has a default (its settings at theirs); an optional mapping without one (grading_points) is read by
    # no experiment.
    sections = {name for name, spec in schema["properties"].items() if spec.get("type") == "object"
                and "default" in spec}
    assert set(SECTIONS) == sections  # every section of settings the schema knows is an experiment's
    for e in EXPERIMENTS.values():
        if e.section:  # every setting of the section is recorded by some output, so none escapes the check
            recorded = {s for out in e.outputs.values() for s in out.records}
            assert recorded == {"seed", *schema["properties"][e.section]["properties"]}, e.name


def test_results_read_the_declared_columns(results_dir):
    assert COLUMNS == columns()
    for name, kinds in COLUMNS.items():
        assert list(read_table(results_dir, name).columns) == list(kinds), name  # the same columns, in order


def test_results_of_the_config_they_were_made_with_are_not_stale(results_dir):
    assert stale_errors(Results(results_dir), TINY_CONFIG) == []


@pytest.mark.parametrize("experiment, file, setting, column", RECORDED,
                         ids=[f"{f}:{s}" for _, f, s, _ in RECORDED])
def test_every_recorded_setting_is_compared_with_the_config(results_dir, experiment, file, setting, column):
    config = copy.deepcopy(TINY_CONFIG)
    if setting == "seed":
        config["seed"] += 1
    else:
        section = config[EXPERIMENTS[experiment].section]
        section[setting] = other_value(section[setting])
    errors = [e for e in stale_errors(Results(results_dir), config) if f"{file}:" in e]
    shown = f"columns '{', '.join(column)}'" if isinstance(column, tuple) else f"column '{column}'"
    assert any(shown in e and "another config" in e for e in errors), errors
