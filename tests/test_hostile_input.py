"""Careless and hostile config files (issue 15): each is refused quickly, with one clear line naming
the file and where in it, or the setting; no message repeats an expanded value.
"""

from __future__ import annotations

import re
import time

import pytest
import yaml

from sdpa_lab.config import (
    MAX_CONFIG_BYTES,
    ConfigError,
    check_config,
    config_errors,
    read_config_file,
)


def _write(tmp_path, text: str | bytes):
    path = tmp_path / "config.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _refusal(path) -> tuple[str, float]:
    """The ConfigError message read_config_file raises on `path`, and the seconds it took."""
    start = time.process_time()
    with pytest.raises(ConfigError) as info:
        read_config_file(path)
    return str(info.value), time.process_time() - start


def billion_laughs(levels: int = 10, width: int = 10) -> str:
    """The classic alias bomb: `levels` lists of `width` aliases to the level below (width**levels leaves)."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    lines.append(f"seed: *a{levels - 1}")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_at_once_without_expanding(tmp_path):
    path = _write(tmp_path, billion_laughs())
    assert path.stat().st_size < 1000  # a few hundred bytes for 10**9 leaves
    message, seconds = _refusal(path)
    assert seconds < 1  # the bound the issue asks for; expanding would take minutes and gigabytes
    assert f"config file {path}" in message and "alias" in message and "line 2, column" in message
    assert "lol" not in message and len(message) < 400


def test_a_single_alias_is_refused_with_its_place(tmp_path):
    path = _write(tmp_path, "variance:\n  d_k: &dk [4, 16]\n  n_pairs: 2000\nentropy_sweep:\n  d_k: *dk\n")
    message, _ = _refusal(path)
    assert re.search(r"alias .*line 5, column 8", message), message


def test_an_oversized_file_is_refused_before_parsing(tmp_path):
    path = _write(tmp_path, "seed: 7\n" + "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1))
    message, _ = _refusal(path)
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
    message, _ = _refusal(_write(tmp_path, text))
    assert "duplicate key" in message and where in message, message


def test_non_utf8_is_refused_with_line_and_byte_offset(tmp_path):
    path = _write(tmp_path, b"seed: 7\nvariance:\n  d_k: [4, \xff16]\n")
    message, _ = _refusal(path)
    assert f"config file {path}" in message and "UTF-8" in message
    assert "line 3, column 12" in message and "byte offset 29" in message, message


def test_control_characters_are_refused_with_line_and_column(tmp_path):
    message, _ = _refusal(_write(tmp_path, "seed: 7\nvariance: \x01\n"))
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
    message, _ = _refusal(_write(tmp_path, text))
    assert "not valid YAML" in message and where in message, message


def test_a_huge_integer_is_refused_with_its_place(tmp_path):
    message, _ = _refusal(_write(tmp_path, "seed: " + "9" * 5000 + "\n"))
    assert "line 1, column 7" in message and "digits" in message and "9" * 100 not in message


def test_a_long_value_is_cut_in_messages(tiny_config, tmp_path):
    tiny_config["variance"]["d_k"] = "x" * 10_000
    tiny_config["forward_shape"] = ["y" * 10_000]
    for line in config_errors(tiny_config):
        assert len(line) < 400, line[:500]
    path = _write(tmp_path, yaml.safe_dump(["z" * 10_000]))
    message, _ = _refusal(path)
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


def test_deep_nesting_is_refused_before_it_is_built(tmp_path):
    message, _ = _refusal(_write(tmp_path, "seed: " + "[" * 500 + "]" * 500 + "\n"))
    assert "nested deeper than" in message and "line 1, column" in message


@pytest.mark.parametrize(
    "entries",
    [list(range(5_000)) + ["x"], [[1]] * 3_000, [0.5] * 8_000],
    ids=["mixed", "nested", "repeated"],
)
def test_a_huge_list_is_refused_once_for_its_length_at_once(tiny_config, entries):
    tiny_config["learning"]["learning_rates"] = entries
    config_errors(tiny_config)  # the validator's one-off import and build
    start = time.process_time()
    lines = config_errors(tiny_config)
    assert time.process_time() - start < 1  # checking each pair of entries for uniqueness took minutes
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
def test_a_config_too_big_to_check_is_refused_before_the_schema(tiny_config, section, value, detail):
    # What a --configfile can hold: Snakemake reads it itself, without this project's limits.
    tiny_config[section] = value
    config_errors(tiny_config)  # the validator's one-off import and build
    start = time.process_time()
    lines = config_errors(tiny_config)
    assert time.process_time() - start < 1  # the schema's messages spelled the bomb out: minutes, gigabytes
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
