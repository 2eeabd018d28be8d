"""`sdpa-lab check` on careless or hostile input (issue 15): a config it cannot read is exit 2 with one
clear line (exit 1 means "a claim fails"), never a traceback; every skipped or refused step is said."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sdpa_lab.cli import main

from tests.conftest import TINY_CONFIG, write_run
from tests.test_hostile_input import billion_laughs


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory) -> Path:
    """Every experiment's CSVs for the tiny config."""
    return write_run(tmp_path_factory.mktemp("run"), TINY_CONFIG)


@pytest.fixture
def results(tiny_results, tmp_path) -> Path:
    """A copy of the tiny run's results, in a folder with no config/ beside it."""
    return Path(shutil.copytree(tiny_results, tmp_path / "project" / "results"))


BAD_CONFIGS = [
    (b"seed: 7\nvariance: \xe9\n", "not UTF-8 text: byte 0xe9 at line 2, column 11"),
    (b"seed: [7\n", "not valid YAML at line 2, column 1"),
    (billion_laughs().encode(), "aliases are not allowed"),
    (b"seed: 7\nseed: 8\n", "duplicate key seed"),
    (b"__use_yte__: true\nseed: ?7\n", "__use_yte__ is not allowed"),
]


@pytest.mark.parametrize("data, line", BAD_CONFIGS, ids=["latin-1", "syntax", "alias bomb", "duplicate", "yte"])
@pytest.mark.parametrize("how", ["--config", "beside"])
def test_an_unreadable_config_is_exit_2_with_one_line(results, data, line, how, capsys):
    if how == "beside":  # found as config/config.yaml next to the results folder
        path = results.parent / "config" / "config.yaml"
        path.parent.mkdir()
        args = ["check", str(results)]
    else:
        path = results.parent / "other.yaml"
        args = ["check", str(results), "--config", str(path)]
    path.write_bytes(data)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sdpa-lab check: error: config file {path}: ") and line in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_no_config_found_says_the_stale_check_was_skipped(results, capsys):
    main(["check", str(results)])
    err = capsys.readouterr().err
    assert "no config" in err and "skipped the check that the results come from it" in err, err
    assert str(results.parent / "config" / "config.yaml") in err and "--config" in err


def test_no_config_option_skips_silently(results, capsys):
    main(["check", str(results), "--no-config"])
    assert "skipped" not in capsys.readouterr().err


def test_an_empty_cell_is_called_empty(results, capsys):
    path = results / "variance.csv"
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[2, "value"] = ""
    table.to_csv(path, index=False)
    assert main(["check", str(results), "--no-config"]) == 2
    err = capsys.readouterr().err
    assert "variance.csv, column 'value': empty in row 4" in err and "nan" not in err, err


def test_a_stale_seed_is_named_as_the_top_level_seed(results, tmp_path, capsys):
    other = copy.deepcopy(TINY_CONFIG)
    other["seed"] = 8
    path = tmp_path / "other.yaml"
    path.write_text(yaml.safe_dump(other))
    assert main(["check", str(results), "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "column 'seed' holds [7], but the config's seed is 8" in err, err
    assert "variance.seed" not in err


def test_another_learning_rate_grid_is_stale(results, tmp_path, capsys):
    other = copy.deepcopy(TINY_CONFIG)
    other["learning"]["learning_rates"] = [0.1, 1.0, 10.0]
    path = tmp_path / "other.yaml"
    path.write_text(yaml.safe_dump(other))
    assert main(["check", str(results), "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "learning.csv: column 'lr' holds [0.1, 1.0], but the config's learning.learning_rates is [0.1, 1.0, 10.0]" \
        in err, err


def test_the_stale_check_compares_every_setting_of_every_section():
    # Every setting the schema allows in an experiment's section is recorded by one of its CSVs, so the
    # stale check (which compares what the outputs record) sees a change of any of them.
    from sdpa_lab.config import load_schema
    from sdpa_lab.experiments.registry import EXPERIMENTS

    schema = load_schema()["properties"]
    for experiment in EXPERIMENTS.values():
        if experiment.section is None:
            continue
        recorded = {setting for out in experiment.outputs.values() for setting in out.records}
        assert recorded == {"seed", *schema[experiment.section]["properties"]}, experiment.name
