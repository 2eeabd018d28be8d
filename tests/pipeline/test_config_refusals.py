"""A bad config refused by Snakemake before any job, through each way a config reaches the workflow
(config/config.yaml, a --configfile, --config), in a finished run whose results, logs, reports and
metadata it leaves as they were (same files, bytes and mtimes); and in a fresh folder, without creating
results/. Which settings are refused and how they are named: tests/test_config.py, without Snakemake.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from tests.conftest import TINY_CONFIG
from tests.pipeline.conftest import copy_of, files_under, make_workdir, snakemake
from tests.test_config import billion_laughs, mutate

# What a refused run must leave as it was.
WATCHED = ("results", "logs", "reports", ".snakemake/metadata")


@pytest.fixture
def finished(tiny_run, tmp_path) -> Path:
    """A copy of the session's tiny run, finished."""
    return copy_of(tiny_run, tmp_path / "work")


def refused(work: Path, *args: str) -> str:
    """What Snakemake (a real run, with `args`) said when it stopped in `work`, having run no job and changed
    nothing there."""
    before = {folder: files_under(work, folder) for folder in WATCHED}
    proc = snakemake(work, *args, cores=1)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert {folder: files_under(work, folder) for folder in WATCHED} == before, said[-3000:]
    assert "Traceback" not in said, said[-3000:]
    return said


def error_lines(said: str) -> list[str]:
    """The lines of the ConfigError Snakemake stopped on, without its "File ..., line ..." frames."""
    lines = said.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("ConfigError in file"))
    return [line for line in lines[start + 1:] if line.strip() and not line.lstrip().startswith("File ")]


# A value the schema refuses, through each file a config can come from (every such value: tests/test_config.py).
VALUE_CASES = [
    ("nan", ("set", ("learning", "loss_threshold"), float("nan")), "learning.loss_threshold", "config/config.yaml"),
    ("string in a list", ("set", ("variance", "d_k", 1), "wide"), "variance.d_k[1]", "--configfile"),
    ("unknown key", ("add", ("gradient",), ("trails", float("inf"))), "gradient.trails", "--configfile"),
]


@pytest.mark.parametrize("mutation, setting, how", [c[1:] for c in VALUE_CASES],
                         ids=[f"{c[0]}, {c[3]}" for c in VALUE_CASES])
def test_a_refused_value_touches_nothing(finished, mutation, setting, how):
    config = copy.deepcopy(TINY_CONFIG)
    mutate(config, mutation)
    if how == "--configfile":
        (finished / "other.yaml").write_text(yaml.safe_dump(config))
        said = refused(finished, "--configfile", "other.yaml")
    else:
        (finished / "config" / "config.yaml").write_text(yaml.safe_dump(config))
        said = refused(finished)
    assert f"config setting {setting}" in said, said[-3000:]


@pytest.mark.parametrize("text, line", [
    ("seed: [7\nvariance: {\n", "config file config/config.yaml: not valid YAML at line 2"),
    ("- 7\n- 8\n", "holds a list"),
], ids=["syntax", "not a mapping"])
def test_a_config_file_that_is_not_a_config_touches_nothing(finished, text, line):
    (finished / "config" / "config.yaml").write_text(text)
    said = refused(finished)
    assert line in said, said[-3000:]


def test_an_alias_bomb_configfile_is_refused_unexpanded(finished):
    # Snakemake reads a --configfile itself (aliases and all); the workflow reads it again, strictly, and refuses
    # its first alias with its place, without spelling it out.
    bomb = billion_laughs().replace("seed: *a9", "seed: 7\nvariance: {d_k: *a9, n_pairs: 2000}")
    (finished / "bomb.yaml").write_text(bomb)
    said = refused(finished, "--configfile", "bomb.yaml")
    assert (f"config file {finished / 'bomb.yaml'}: YAML alias *'a0' at line 2, column 10: aliases are not allowed"
            in said), said[-3000:]
    assert "lol" not in said


def test_a_fifo_as_the_config_is_refused_at_once(finished):
    # Opening a FIFO for reading waits for a writer: the workflow's own read must not open it.
    (finished / "config" / "config.yaml").unlink()
    os.mkfifo(finished / "config" / "config.yaml")
    lines = error_lines(refused(finished))  # within the timeout: it used to hang
    assert lines == ["config file config/config.yaml: is a FIFO (named pipe), not a regular file; "
                     "a config is a plain file"], lines


def test_a_duplicate_key_in_a_configfile_is_refused(finished):
    # Snakemake's own loader keeps the last of a duplicate key; the workflow re-reads each --configfile strictly.
    text = (finished / "config" / "config.yaml").read_text()
    first = next(i for i, line in enumerate(text.splitlines()) if line.startswith("seed:")) + 1
    text += "seed: 8\n"
    (finished / "other.yaml").write_text(text)
    lines = error_lines(refused(finished, "--configfile", "other.yaml"))
    where = f"line {len(text.splitlines())}, column 1"
    assert lines == [f"config file {finished / 'other.yaml'}: not valid YAML at {where}: duplicate key seed "
                     f"(first given at line {first}, column 1); give each setting once"], lines


@pytest.mark.parametrize("setting, line", [
    ("seed=" + "9" * 5000, "config setting seed: --config seed=<an integer of 5,000 digits>: too many digits; "
                           "at most 100 are read (a seed has at most 20)"),
    ("s\u0435ed=7", "config setting s\u0435ed: unknown setting (a typo?); its name is not plain ASCII: "
                    "U+0435 CYRILLIC SMALL LETTER IE at character 2; allowed here: "),
], ids=["5000 digits", "look-alike"])
def test_a_command_line_setting_is_refused_saying_what_is_wrong(finished, setting, line):
    lines = error_lines(refused(finished, "--config", setting))
    assert lines[0] == "invalid configuration:" and len(lines) == 2 and lines[1].strip().startswith(line), lines
    assert "inf" not in lines[1] and "9" * 20 not in lines[1]


def test_a_refused_run_in_a_fresh_folder_creates_no_results(tmp_path):
    config = copy.deepcopy(TINY_CONFIG)
    config["ranking_invariance"]["T"] = 1
    work = make_workdir(tmp_path / "work", config)
    proc = snakemake(work, cores=1)
    assert proc.returncode != 0
    assert "config setting ranking_invariance.T: got 1; must be at least 2" in proc.stderr
    assert not (work / "results").exists() and not (work / "logs").exists()

