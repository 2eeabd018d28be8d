"""A bad config is refused with one line per problem naming the setting, the bad value and what is allowed.

Also: the experiment functions, called directly, refuse bad arguments with a
ValueError naming the argument (not a NumPy traceback).
"""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from sdpa_lab.config import ConfigError, check_config, config_errors, load_config, load_schema, read_config_file
from sdpa_lab.experiments.entropy_sweep import entropy_sweep_rows
from sdpa_lab.experiments.forward_shape import forward_shape_rows
from sdpa_lab.experiments.ranking_invariance import ranking_invariance_rows
from sdpa_lab.experiments.registry import SECTIONS
from sdpa_lab.experiments.variance import variance_rows


def _set(path, value):
    """A mutation setting config[path...] = value."""

    def mutate(config):
        node = config
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


def _get(config, path):
    for key in path:
        config = config[key]
    return config


def _delete(path):
    """A mutation removing config[path...]."""

    def mutate(config):
        node = config
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


# (case id, mutation, the setting's path as printed, text the line must also hold)
BAD = [
    ("string d_k", _set(["variance", "d_k", 1], "wide"), "variance.d_k[1]", "'wide'"),
    ("zero d_k", _set(["variance", "d_k", 1], 0), "variance.d_k[1]", "got 0"),
    ("negative d_k", _set(["entropy_sweep", "d_k", 0], -4), "entropy_sweep.d_k[0]", "got -4"),
    ("fractional d_k", _set(["ranking_invariance", "d_k", 1], 2.5), "ranking_invariance.d_k[1]", "got 2.5"),
    ("float-integral d_k", _set(["variance", "d_k", 0], 16.0), "variance.d_k[0]", "got 16.0"),
    ("boolean d_k", _set(["variance", "d_k", 0], True), "variance.d_k[0]", "got True"),
    ("d_k not a list", _set(["variance", "d_k"], 4), "variance.d_k", "got 4"),
    ("empty d_k", _set(["variance", "d_k"], []), "variance.d_k", "got []"),
    ("duplicate d_k", _set(["entropy_sweep", "d_k"], [4, 16, 4]), "entropy_sweep.d_k", "repeats [4]"),
    ("T = 1", _set(["entropy_sweep", "T"], 1), "entropy_sweep.T", "got 1"),
    ("T = 0", _set(["ranking_invariance", "T"], 0), "ranking_invariance.T", "got 0"),
    ("T string", _set(["entropy_sweep", "T"], "8"), "entropy_sweep.T", "'8'"),
    ("n_pairs too small", _set(["variance", "n_pairs"], 999), "variance.n_pairs", "at least 1000"),
    ("n_pairs zero", _set(["variance", "n_pairs"], 0), "variance.n_pairs", "got 0"),
    ("n_pairs fractional", _set(["variance", "n_pairs"], 2500.5), "variance.n_pairs", "got 2500.5"),
    ("trials too small", _set(["entropy_sweep", "trials"], 99), "entropy_sweep.trials", "at least 100"),
    ("trials negative", _set(["ranking_invariance", "trials"], -200), "ranking_invariance.trials", "got -200"),
    ("seed negative", _set(["seed"], -1), "seed", "got -1"),
    ("seed above 2**64-1", _set(["seed"], 2**64), "seed", str(2**64)),
    ("seed boolean", _set(["seed"], True), "seed", "got True"),
    ("seed string", _set(["seed"], "42"), "seed", "'42'"),
    ("seed float", _set(["seed"], 7.0), "seed", "got 7.0"),
    ("typo in a section", _set(["variance", "npairs"], 2000), "variance.npairs", "unknown setting"),
    ("typo at top level", _set(["sed"], 7), "sed", "unknown setting"),
    ("section not a mapping", _set(["variance"], [4, 16]), "variance", "got [4, 16]"),
    ("shape with a zero", _set(["forward_shape", "shapes", 0], [1, 0, 16]), "forward_shape.shapes[0][1]", "got 0"),
    ("shape of two", _set(["forward_shape", "shapes", 0], [1, 16]), "forward_shape.shapes[0]", "got [1, 16]"),
    ("no shapes", _set(["forward_shape", "shapes"], []), "forward_shape.shapes", "got []"),
    ("forward too large", _set(["forward_shape", "shapes", 0], [64, 4096, 8]), "forward_shape.shapes[0]",
     "bounded memory"),
    ("negative learning rate", _set(["learning", "learning_rates", 1], -1.0), "learning.learning_rates[1]",
     "got -1.0"),
    ("repeated learning rate", _set(["learning", "learning_rates"], [0.1, 0.1]), "learning.learning_rates",
     "repeats [0.1]"),
    ("loss_threshold 1", _set(["learning", "loss_threshold"], 1.0), "learning.loss_threshold", "got 1.0"),
    ("loss_threshold boolean", _set(["learning", "loss_threshold"], True), "learning.loss_threshold", "got True"),
    ("trial too large", _set(["entropy_sweep"], {"d_k": [4, 65536], "T": 256, "trials": 100}), "entropy_sweep.d_k",
     "T x d_k = 256 x 65536"),
]


@pytest.mark.parametrize("mutate, where, detail", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_setting_is_named_with_its_value(tiny_config, mutate, where, detail):
    mutate(tiny_config)
    with pytest.raises(ConfigError) as info:
        check_config(tiny_config)
    lines = [ln.strip() for ln in str(info.value).splitlines()[1:]]
    mine = [ln for ln in lines if ln.startswith(f"config setting {where}:")]
    assert mine, f"no line names {where}: {lines}"
    assert any(detail in ln for ln in mine), mine


@pytest.mark.parametrize("mutate, where, detail", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_setting_is_refused_from_a_file(tiny_config, tmp_path, mutate, where, detail):
    mutate(tiny_config)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(tiny_config))
    with pytest.raises(ConfigError, match=re.escape(f"config setting {where}:")):
        load_config(path)


def test_each_problem_gets_its_own_line(tiny_config):
    tiny_config["seed"] = -1
    tiny_config["variance"]["d_k"] = [4, "wide"]
    errors = config_errors(tiny_config)
    assert len(errors) == 2
    assert errors[0].startswith("config setting seed:") and errors[1].startswith("config setting variance.d_k[1]:")


def test_lines_say_what_is_allowed(tiny_config):
    tiny_config["entropy_sweep"]["T"] = 1
    (line,) = config_errors(tiny_config)
    assert "must be at least 2" in line and "fewer than 2 keys" in line  # the schema's reason
    tiny_config["entropy_sweep"]["T"] = 8
    tiny_config["variance"]["npairs"] = 5
    (line,) = config_errors(tiny_config)
    assert "allowed here: d_k, n_pairs" in line


def test_valid_configs_pass(tiny_config, default_config):
    assert config_errors(tiny_config) == []
    assert config_errors(default_config) == []
    tiny_config["seed"] = 2**64 - 1  # the largest seed allowed
    assert check_config(tiny_config) == tiny_config


@pytest.mark.parametrize("path", [["seed"], ["entropy_sweep"], ["variance", "n_pairs"], ["learning", "T"]])
def test_a_left_out_setting_is_the_schemas_default(tiny_config, default_config, path):
    config = copy.deepcopy(tiny_config)
    _delete(path)(config)
    given = copy.deepcopy(config)
    filled = check_config(config)
    assert config == given  # the config itself is left as it was
    expected = copy.deepcopy(tiny_config)
    _set(path, _get(default_config, path))(expected)  # config/config.yaml spells out the defaults
    assert filled == expected


def test_every_setting_has_a_default_and_the_defaults_are_config_yaml(default_config):
    schema = load_schema()
    for section in SECTIONS:
        node = schema["properties"][section]
        assert node["default"] == {}, section
        assert all("default" in setting for setting in node["properties"].values()), section
    assert check_config({}) == default_config
    assert list(check_config({}).keys()) == list(default_config.keys())  # the schema's order, as the file's


@pytest.mark.parametrize(
    "text, expected",
    [
        ("- 1\n- 2\n", "holds a list"),
        ("just a string\n", "holds a string"),
        ("", "is empty"),
        ("seed: [1\nvariance: {\n", "not valid YAML at line 2"),
        ("seed: 1\n\tvariance: 2\n", "not valid YAML at line 2"),
        ("seed: !!python/object/apply:os.system ['true']\n", "not valid YAML"),  # safe loader: no code
        ("__use_yte__: true\nseed: ?7 * 6\n", "__use_yte__ .* not allowed"),  # no templated configs
    ],
    ids=["list", "scalar", "empty", "syntax error", "tab", "python tag", "yte template"],
)
def test_file_that_is_not_a_mapping_is_refused(tmp_path, text, expected):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"config file {path}.*{expected}"):
        load_config(path)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: cannot be read"):
        read_config_file(tmp_path / "nope.yaml")


# ---- the experiment functions, called directly -----------------------------------------------

GOOD = {
    variance_rows: {"seed": 1, "d_k_values": [4], "n_pairs": 100},
    entropy_sweep_rows: {"seed": 1, "d_k_values": [4], "T": 4, "trials": 10},
    ranking_invariance_rows: {"seed": 1, "d_k_values": [4], "T": 4, "trials": 10},
    forward_shape_rows: {"seed": 1, "shapes": [[1, 2, 3]]},
}

BAD_ARGS = [
    (variance_rows, {"seed": -1}, "seed"),
    (variance_rows, {"seed": True}, "seed"),
    (variance_rows, {"seed": 1.0}, "seed"),
    (variance_rows, {"d_k_values": [0]}, r"d_k_values\[0\]"),
    (variance_rows, {"d_k_values": [4, -2]}, r"d_k_values\[1\]"),
    (variance_rows, {"d_k_values": [2.5]}, r"d_k_values\[0\]"),
    (variance_rows, {"d_k_values": []}, "d_k_values must not be empty"),
    (variance_rows, {"d_k_values": 4}, "d_k_values must be a list"),
    (variance_rows, {"n_pairs": 0}, "n_pairs"),
    (variance_rows, {"n_pairs": 1}, "n_pairs"),
    (entropy_sweep_rows, {"T": 1}, "T must"),
    (entropy_sweep_rows, {"trials": 0}, "trials"),
    (entropy_sweep_rows, {"d_k_values": []}, "d_k_values"),
    (entropy_sweep_rows, {"seed": -5}, "seed"),
    (ranking_invariance_rows, {"T": 1}, "T must"),
    (ranking_invariance_rows, {"trials": 0}, "trials"),
    (ranking_invariance_rows, {"d_k_values": ["4"]}, r"d_k_values\[0\]"),
    (forward_shape_rows, {"shapes": []}, "shapes must not be empty"),
    (forward_shape_rows, {"shapes": [[1, 0, 3]]}, r"shapes\[0\]\[1\]"),
    (forward_shape_rows, {"shapes": [[1, 2]]}, r"shapes\[0\]"),
    (forward_shape_rows, {"shapes": [[1, 2, 3], [2, 3, -1]]}, r"shapes\[1\]\[2\]"),
    (forward_shape_rows, {"shapes": [[1, 2, 3], [64, 4096, 8]]}, r"shapes\[1\] = \[64, 4096, 8\]: .*bounded memory"),
    (forward_shape_rows, {"seed": -1}, "seed"),
]


@pytest.mark.parametrize(
    "func, override, named", BAD_ARGS,
    ids=[f"{f.__name__}-{list(o)[0]}={list(o.values())[0]!r}" for f, o, _ in BAD_ARGS]
)
def test_experiment_functions_refuse_bad_arguments(func, override, named):
    with pytest.raises(ValueError, match=named):
        func(**{**GOOD[func], **override})


@pytest.mark.parametrize("func", list(GOOD), ids=[f.__name__ for f in GOOD])
def test_experiment_functions_accept_good_arguments(func):
    assert len(func(**GOOD[func])) > 0  # rows
