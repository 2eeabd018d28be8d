"""sdpa_lab.config and sdpa_lab.config_file: a config is refused before any work with one line per problem naming
the setting, the bad value and what is allowed; careless and hostile files are refused quickly, naming the file and
where in it, and no message repeats an expanded value; fuzzing the default config, every mutation is either valid
by the schema or refused by a ConfigError naming the setting."""

from __future__ import annotations

import contextlib
import copy
import math
import os
import re

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdpa_lab import config as config_module
from sdpa_lab.config import (
    LIMITS,
    ConfigError,
    check_config,
    command_line_problems,
    config_errors,
    experiment_sections,
    limit_problems,
    load_config,
    load_schema,
)
from sdpa_lab.config_file import MAX_CONFIG_BYTES, read_config_file
from sdpa_lab.experiments.registry import SECTIONS
from sdpa_lab.validation import forward_size_problem, trial_size_problem

from tests.conftest import REPO


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
    assert check_config(default_config) == check_config({})  # config/config.yaml spells out defaults only
    assert list(check_config({}))[:len(default_config)] == list(default_config)  # in the schema's order


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


# ---- careless and hostile files ------------------------------------------------------------------

def _write(tmp_path, text: str | bytes):
    path = tmp_path / "config.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _refusal(path) -> str:
    """The ConfigError message read_config_file raises on `path`."""
    with pytest.raises(ConfigError) as info:
        read_config_file(path)
    return str(info.value)


def _never(what: str):
    def called(*args, **kwargs):
        raise AssertionError(f"{what} was called")

    return called


@contextlib.contextmanager
def lists_checked_entry_by_entry():
    """The (length, maxItems) of each list the schema's per-entry (`items`) and pairwise (`uniqueItems`) checks run on
    inside the block: on a list of thousands of entries the pairwise check takes minutes."""
    checked = []
    plain = jsonschema.Draft202012Validator.VALIDATORS
    spied = {}
    for keyword in ("items", "uniqueItems"):
        def spy(validator, value, instance, schema, check=plain[keyword]):
            if validator.is_type(instance, "array"):
                checked.append((len(instance), schema.get("maxItems", math.inf)))
            yield from check(validator, value, instance, schema)

        spied[keyword] = spy
    originals = {keyword: plain[keyword] for keyword in spied}
    config_module._validator_class.cache_clear()  # rebuilt on the spies
    config_module._filling_class.cache_clear()
    plain.update(spied)
    try:
        yield checked
    finally:
        plain.update(originals)
        config_module._validator_class.cache_clear()
        config_module._filling_class.cache_clear()


def billion_laughs(levels: int = 10, width: int = 10) -> str:
    """The classic alias bomb: `levels` lists of `width` aliases to the level below (width**levels leaves)."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    lines.append(f"seed: *a{levels - 1}")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_at_once_without_expanding(tmp_path, monkeypatch):
    path = _write(tmp_path, billion_laughs())
    assert path.stat().st_size < 1000  # a few hundred bytes for 10**9 leaves
    monkeypatch.setattr(yaml, "load", _never("building the document"))  # expanding: minutes and gigabytes
    message = _refusal(path)
    assert f"config file {path}" in message and "alias" in message and "line 2, column" in message
    assert "lol" not in message and len(message) < 400


def test_a_single_alias_is_refused_with_its_place(tmp_path):
    path = _write(tmp_path, "variance:\n  d_k: &dk [4, 16]\n  n_pairs: 2000\nentropy_sweep:\n  d_k: *dk\n")
    message = _refusal(path)
    assert re.search(r"alias .*line 5, column 8", message), message


def test_an_oversized_file_is_refused_before_parsing(tmp_path, monkeypatch):
    path = _write(tmp_path, "seed: 7\n" + "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1))
    monkeypatch.setattr(yaml, "parse", _never("parsing"))
    monkeypatch.setattr(yaml, "load", _never("parsing"))
    message = _refusal(path)
    assert f"config file {path}" in message and "larger than" in message and "64 KiB" in message


def test_a_large_but_legal_file_is_read(tmp_path):
    path = _write(tmp_path, "seed: 7\n" + "# padding\n" * (MAX_CONFIG_BYTES // 20))
    assert read_config_file(path) == {"seed": 7}


@pytest.mark.parametrize(
    "text, where",
    [
        ("seed: 7\nvariance:\n  n_pairs: 2000\n  n_pairs: 3000\n", "line 4, column 3"),
        ("seed: 7\nvariance: {}\nseed: 8\n", "line 3, column 1"),
    ],
    ids=["in a section", "at top level"],
)
def test_a_duplicate_key_is_refused(tmp_path, text, where):
    message = _refusal(_write(tmp_path, text))
    assert "duplicate key" in message and where in message, message


def test_non_utf8_is_refused_with_line_and_byte_offset(tmp_path):
    path = _write(tmp_path, b"seed: 7\nvariance:\n  d_k: [4, \xff16]\n")
    message = _refusal(path)
    assert f"config file {path}" in message and "UTF-8" in message
    assert "line 3, column 12" in message and "byte offset 29" in message, message


def test_control_characters_are_refused_with_line_and_column(tmp_path):
    message = _refusal(_write(tmp_path, "seed: 7\nvariance: \x01\n"))
    assert "line 2, column 11" in message, message


@pytest.mark.parametrize(
    "text, where",
    [
        ("seed: 7\nvariance: {d_k: [4, 16\n", "line 3, column 1"),
        ("seed: 7\n  n_pairs: 2000\n", "line 2, column 10"),
        ("seed: 7\n---\nseed: 8\n", "line 2, column 1"),
    ],
    ids=["unclosed flow", "bad indentation", "two documents"],
)
def test_a_syntax_error_names_line_and_column(tmp_path, text, where):
    message = _refusal(_write(tmp_path, text))
    assert "not valid YAML" in message and where in message, message


def test_a_huge_integer_is_refused_with_its_place(tmp_path):
    message = _refusal(_write(tmp_path, "seed: " + "9" * 5000 + "\n"))
    assert "line 1, column 7" in message and "digits" in message and "9" * 100 not in message


def test_a_long_value_is_cut_in_messages(tiny_config, tmp_path):
    tiny_config["variance"]["d_k"] = "x" * 10_000
    tiny_config["forward_shape"] = ["y" * 10_000]
    for line in config_errors(tiny_config):
        assert len(line) < 400, line[:500]
    path = _write(tmp_path, yaml.safe_dump(["z" * 10_000]))
    message = _refusal(path)
    assert len(message) < 400


@pytest.mark.parametrize(
    "path, value, where",
    [
        (["learning", "loss_threshold"], float("nan"), "learning.loss_threshold"),
        (["learning", "learning_rates", 1], float("nan"), "learning.learning_rates[1]"),
        (["learning", "learning_rates", 0], float("inf"), "learning.learning_rates[0]"),
        (["learning", "loss_threshold"], float("-inf"), "learning.loss_threshold"),
        (["variance", "n_pairs"], float("inf"), "variance.n_pairs"),
        (["seed"], float("nan"), "seed"),
    ],
    ids=["nan threshold", "nan rate", "inf rate", "-inf threshold", "inf n_pairs", "nan seed"],
)
def test_non_finite_numbers_are_refused(tiny_config, path, value, where):
    node = tiny_config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError) as info:
        check_config(tiny_config)
    lines = [ln.strip() for ln in str(info.value).splitlines()[1:]]
    assert any(ln.startswith(f"config setting {where}:") and "finite" in ln for ln in lines), lines


@pytest.mark.parametrize("spelling", [".nan", ".NaN", ".inf", "-.inf", "1.0e+400"])
def test_non_finite_numbers_are_refused_from_a_file(tiny_config, tmp_path, spelling):
    text = yaml.safe_dump(tiny_config).replace("loss_threshold: 0.1", f"loss_threshold: {spelling}")
    config = read_config_file(_write(tmp_path, text))
    with pytest.raises(ConfigError, match=r"config setting learning\.loss_threshold: .*finite"):
        check_config(config)


def test_deep_nesting_is_refused_before_it_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(yaml, "load", _never("building the document"))
    message = _refusal(_write(tmp_path, "seed: " + "[" * 500 + "]" * 500 + "\n"))
    assert "nested deeper than" in message and "line 1, column" in message


@pytest.mark.parametrize(
    "entries",
    [list(range(5_000)) + ["x"], [[1]] * 3_000, [0.5] * 8_000],
    ids=["mixed", "nested", "repeated"],
)
def test_a_huge_list_is_refused_once_for_its_length_at_once(tiny_config, entries):
    tiny_config["learning"]["learning_rates"] = entries
    with lists_checked_entry_by_entry() as checked:
        lines = config_errors(tiny_config)
    assert checked and all(length <= most for length, most in checked)  # not each entry, nor each pair: minutes
    assert len(lines) == 1 and lines[0].startswith("config setting learning.learning_rates: ")
    assert f"({len(entries)} entries); must have at most 64" in lines[0]


def test_many_problems_are_listed_up_to_a_bound(tiny_config):
    tiny_config["variance"].update({f"typo{i}": i for i in range(500)})
    lines = config_errors(tiny_config)
    assert len(lines) == 20 and lines[-1] == "... and 481 more problems"
    assert all(line.startswith("config setting variance.typo") for line in lines[:-1])


def expanded_bomb(levels: int = 10, width: int = 10) -> list:
    """What YAML makes of billion_laughs: lists sharing their entries, width**levels leaves when spelled out."""
    node: list = ["lol"]
    for _ in range(levels - 1):
        node = [node] * width
    return node


@pytest.mark.parametrize(
    "section, value, detail",
    [
        ("variance", {"d_k": expanded_bomb(), "n_pairs": 2000}, "holds more than 10,000 values"),
        ("learning", {"T": "x" * 5000}, "holds a string of 5,000 characters"),
        ("gradient", {"T": [[[[[[[[[[[[[[[[[[8]]]]]]]]]]]]]]]]]]}, "nested deeper than 16 levels"),
    ],
    ids=["alias bomb", "long string", "deep"],
)
def test_a_config_too_big_to_check_is_refused_before_the_schema(tiny_config, monkeypatch, section, value, detail):
    # What a --configfile can hold: Snakemake reads it itself, without this project's limits.
    tiny_config[section] = value
    monkeypatch.setattr(config_module, "_validator_class", _never("the schema"))  # its messages spelled the bomb out
    lines = config_errors(tiny_config)
    assert lines == [f"config setting {section}: " + lines[0].split(": ", 1)[1]] and detail in lines[0], lines


def test_sweep_covers_wildcard_outputs(tmp_path):
    from sdpa_lab.workflow_support.hooks import sweep_temporaries

    scores = tmp_path / "trial_scores"
    scores.mkdir()
    killed = [".seed7_T8_trials100000000_dk64.npy.x1y2.tmp", ".seed1_T4_trials200_dk4.npy.q.tmp"]  # any settings
    kept = ["seed7_T8_trials200_dk4.npy", ".seed7_T8_trials200_dk4.npy.keep", ".notes.tmp", "a[1].npy.z.tmp"]
    for name in killed + kept:
        (scores / name).write_text("x")
    pattern = str(scores / "seed{seed}_T{T}_trials{trials}_dk{d_k}.npy")
    assert sweep_temporaries([pattern]) == sorted(str(scores / name) for name in killed)
    assert sorted(p.name for p in scores.iterdir()) == sorted(kept)
    (tmp_path / "odd [dir]").mkdir()
    (tmp_path / "odd [dir]" / ".x.csv.1.tmp").write_text("x")  # glob characters in a literal part are literal
    assert sweep_temporaries([tmp_path / "odd [dir]" / "x.csv"]) == [str(tmp_path / "odd [dir]" / ".x.csv.1.tmp")]


# ---- fuzzing the default config ------------------------------------------------------------------

DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def paths(node, prefix=()) -> list[tuple]:
    """Every setting's path in `node`, containers included: ("variance",), ("variance", "d_k", 0), ..."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, child in items:
        out.append((*prefix, key))
        out += paths(child, (*prefix, key))
    return out


PATHS = paths(DEFAULT)
SECTIONS_AT = [(key,) for key, value in DEFAULT.items() if isinstance(value, dict)]

HUGE = [10**9, 10**12, 2**63, 2**64, 2**64 + 1, -(2**64), 10**30, 1e300, 1.7976931348623157e308, 5e-324]
leaves = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),  # nan, inf, -inf, subnormals, -0.0 included
    st.sampled_from(HUGE),
    st.booleans(),
    st.none(),
    st.text(max_size=20),
    st.text(min_size=500, max_size=2000),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=80), st.dictionaries(st.text(max_size=12), inner, max_size=6)),
    max_leaves=200,
)
mutations = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(PATHS), values),
    st.tuples(st.just("delete"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("add"), st.sampled_from([(), *SECTIONS_AT]), st.tuples(st.text(min_size=1, max_size=30), values)),
    st.tuples(st.just("wrap"), st.sampled_from(PATHS), st.sampled_from(["list", "dict", "deep"])),
)


def where(path) -> str:
    """A path as the messages print it: learning.learning_rates[1] (a key that is not plain text quoted)."""
    out = ""
    for part in path:
        if isinstance(part, str) and not (part.isprintable() and part == part.strip() and part):
            part = repr(part)
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def mutate(config: dict, mutation) -> tuple:
    """Apply `mutation` to `config` in place; return the path of the setting it touched."""
    kind, path, arg = mutation
    parent = config
    for key in path[:-1]:
        parent = parent[key]
    if kind == "add":
        key, value = arg
        node = config
        for part in path:
            node = node[part]
        node[key] = value
        return (*path, key)
    if kind == "delete":
        del parent[path[-1]]
    elif kind == "set":
        parent[path[-1]] = arg
    else:
        value = parent[path[-1]]
        parent[path[-1]] = {"list": [value], "dict": {"value": value}, "deep": [[[[[[value]]]]]]}[arg]
    return path


def finite(node) -> bool:
    if isinstance(node, float):
        return math.isfinite(node)
    if isinstance(node, dict):
        return all(finite(v) for v in node.values())
    if isinstance(node, list):
        return all(finite(v) for v in node)
    return True


PLAIN_SCHEMA = jsonschema.Draft202012Validator(load_schema())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutation=mutations)
def test_a_mutated_config_is_valid_or_refused_naming_the_setting(tmp_path_factory, mutation):
    config = copy.deepcopy(DEFAULT)
    touched = mutate(config, mutation)
    path = tmp_path_factory.mktemp("fuzz") / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    try:
        with lists_checked_entry_by_entry() as checked:  # a list longer than allowed is refused for its length alone
            accepted = check_config(read_config_file(path))
    except ConfigError as exc:
        message = str(exc)
        assert all(length <= most for length, most in checked), (mutation, checked)
        assert all(len(line) < 600 for line in message.splitlines()), message[:2000]
        if message.startswith(f"config file {path}: larger than"):
            return  # refused before parsing: the whole file is the problem
        lines = [line.strip() for line in message.splitlines()[1:]]
        named = [line for line in lines if line.startswith(f"config setting {where(touched[:1])[:30]}")]
        assert named, (mutation, message)  # the section or setting touched (or, for T, its d_k limit)
        return
    assert all(length <= most for length, most in checked), (mutation, checked)
    assert PLAIN_SCHEMA.is_valid(accepted) and finite(accepted), mutation


def test_a_fifo_is_refused_without_opening_it(tmp_path):
    path = tmp_path / "config.yaml"
    os.mkfifo(path)
    message = _refusal(path)  # opening it for reading would wait for a writer for ever
    assert message == f"config file {path}: is a FIFO (named pipe), not a regular file; a config is a plain file"


def test_a_file_replaced_by_a_fifo_after_its_stat_is_refused_without_blocking(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    os.mkfifo(path)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: real_stat(__file__) if str(p) == str(path)
                        else real_stat(p, *a, **k))  # looks regular when stat'ed; the open must not block
    message = _refusal(path)
    assert "is a FIFO (named pipe), not a regular file" in message


@pytest.mark.parametrize("value, digits", [("9" * 5000, "5,000"), ("-" + "1" * 101, "101"), ("1_" * 150 + "1", "151")])
def test_an_overlong_integer_on_the_command_line_is_too_many_digits(value, digits):
    # Python reads no integer of over 4300 digits, so Snakemake reads --config seed=<5000 digits> as inf.
    assert command_line_problems([f"seed={value}", "variance=x"]) == [
        f"config setting seed: --config seed=<an integer of {digits} digits>: too many digits; at most 100 are "
        "read (a seed has at most 20)"]
    assert command_line_problems(["seed=" + "9" * 100, "seed=1e400", "seed=abc"]) == []


# ---- limits a section declares (x-limits), read from the schema, never from its settings' names ------------------

def _root_with(section: dict) -> dict:
    """The shipped schema with one more section, `toy`."""
    root = copy.deepcopy(load_schema())
    root["properties"]["toy"] = {"type": "object", "default": {}, "properties": {}, **section}
    return root


def test_the_trial_size_limit_reads_the_settings_the_section_names_and_the_largest_of_a_list():
    # a section whose keys per trial are a list (one T per step) and whose widths are named otherwise
    root = _root_with({"x-limits": [{"limit": "trial_size", "T": "keys", "d_k": "widths"}]})
    config = check_config({})
    config["toy"] = {"keys": [2, 4096], "widths": [8, 4096]}  # 4096 x 4096 floats: over 2^23
    assert limit_problems(config, root) == [
        f"config setting toy.widths: got 4096 with keys = 4096: {trial_size_problem(4096, 4096)}"]
    config["toy"] = {"keys": [2, 8], "widths": [8, 4096]}
    assert limit_problems(config, root) == []


def test_a_section_declaring_no_limit_is_not_read_for_one_whatever_its_settings_are_named():
    root = _root_with({})
    config = check_config({})
    config["toy"] = {"T": [2, 4096], "d_k": [4096]}  # a list of T: no name is read for meaning
    assert limit_problems(config, root) == []


def test_the_forward_size_limit_names_each_shape_too_large():
    root = _root_with({"x-limits": [{"limit": "forward_size", "shapes": "forwards"}]})
    config = check_config({})
    config["toy"] = {"forwards": [[1, 2, 3], [64, 4096, 8], [2, 2, 2]]}
    assert limit_problems(config, root) == [
        f"config setting toy.forwards[1]: got [64, 4096, 8]: {forward_size_problem([64, 4096, 8])}"]


@pytest.mark.house
def test_every_limit_the_schema_declares_is_known_and_bounds_settings_of_its_section():
    root = load_schema()
    declared = [(s, limit) for s in experiment_sections(root) for limit in root["properties"][s].get("x-limits", ())]
    assert {limit["limit"] for _, limit in declared} == set(LIMITS)  # each known, each used
    for section, limit in declared:
        names = {role: name for role, name in limit.items() if role != "limit"}
        assert set(names.values()) <= set(root["properties"][section]["properties"]), section
