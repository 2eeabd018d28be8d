"""`sdpa-lab check` on careless or hostile input: a config it cannot read is exit 2 with one
clear line (exit 1 means "a claim fails"), never a traceback; every skipped or refused step is said."""

from __future__ import annotations

import copy
import os
import shutil
import signal
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sdpa_lab.cli import main
from sdpa_lab.experiments.registry import EXPERIMENTS
from sdpa_lab.results import COLUMNS

from tests.conftest import TINY_CONFIG, write_run
from tests.test_config import billion_laughs

# On one test worker (pytest-xdist, --dist loadgroup): the tiny run's results, made once.
pytestmark = pytest.mark.xdist_group("cli")


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


def edit_cell(path: Path, column: str, row: int, value: str) -> None:
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[row, column] = value
    table.to_csv(path, index=False)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: (r / "variance.csv").unlink(), "variance.csv: missing"),
        (lambda r: pd.read_csv(r / "variance.csv").drop(columns="value").to_csv(r / "variance.csv", index=False),
         "column 'value' is missing"),
        (lambda r: edit_cell(r / "variance.csv", "value", 3, "nan"), "variance.csv, column 'value': 'nan' in row 5"),
        (lambda r: edit_cell(r / "variance.csv", "value", 0, "inf"), "not a finite number"),
        (lambda r: edit_cell(r / "lesson_variance.csv", "value", 1, "big"), "lesson_variance.csv, column 'value': "
                                                                            "'big' in row 3 is not a number"),
        (lambda r: edit_cell(r / "variance.csv", "d_k", 1, "4.5"), "column 'd_k': '4.5' in row 3 is not an integer"),
        (lambda r: (r / "forward_shape.csv").write_text(""), "forward_shape.csv: not a readable CSV"),
    ],
)
def test_checker_errors_name_file_and_column(results, mutate, message, capsys):
    mutate(results)
    assert main(["check", str(results), "--no-config"]) == 2
    assert message in capsys.readouterr().err


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


# ---- bounded on any file: sizes, FIFOs and devices, a linked results folder ---------------------


class Hung(BaseException):
    """Raised in a test that ran past its deadline (not an OSError, which the code under test may catch)."""


@contextmanager
def deadline(seconds: int = 20):
    """Fail (rather than hang the suite) if the block takes more than `seconds`: a FIFO opened for reading
    waits for a writer forever."""
    def expire(signum, frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def refusal(args, capsys, lines: int = 1) -> str:
    """The `lines` lines `sdpa-lab check` prints on stderr when it exits 2 on `args`, within the deadline."""
    with deadline():
        assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdpa-lab check: error: ") and len(err.splitlines()) == lines, err
    assert "Traceback" not in err
    return err


def beside(results: Path, config: dict | bytes | None = None) -> Path:
    """config/config.yaml beside `results` (written from `config`, if given)."""
    path = results.parent / "config" / "config.yaml"
    path.parent.mkdir(exist_ok=True)
    if config is not None:
        path.write_bytes(config if isinstance(config, bytes) else yaml.safe_dump(config).encode())
    return path


def test_every_csv_has_the_rows_its_config_declares(tiny_results):
    from sdpa_lab.results import row_counts

    counts = row_counts(TINY_CONFIG)
    assert set(counts) == set(COLUMNS)
    for file, rows in counts.items():
        assert len(pd.read_csv(tiny_results / file)) == rows, file


def test_every_csv_of_a_run_is_well_within_its_size_limit(tiny_results):
    from sdpa_lab.results import CELL_BYTES, size_limits

    for file, (limit, _) in size_limits(TINY_CONFIG).items():
        assert (tiny_results / file).stat().st_size * 2 < limit, file  # generous: a real file is far below it
        table = pd.read_csv(tiny_results / file, dtype=str, keep_default_na=False)
        for column, kind in COLUMNS[file].items():  # and no cell is wider than its kind's widest
            assert table[column].str.len().max() < CELL_BYTES[kind], (file, column)


@pytest.mark.parametrize("config", ["given", "none"])
def test_a_results_file_far_larger_than_its_config_makes_is_refused_unread(results, tmp_path, config, capsys,
                                                                             monkeypatch):
    big = results / "variance.csv"
    with big.open("r+b") as file:  # 1 GiB, sparse: costs no disk, and reading it would cost minutes
        file.truncate(1 << 30)
    import sdpa_lab.results

    read = sdpa_lab.results.read_regular_file

    def read_but_not_big(path, *args, **kwargs):
        assert Path(path) != big, "read the oversized file"
        return read(path, *args, **kwargs)

    monkeypatch.setattr(sdpa_lab.results, "read_regular_file", read_but_not_big)
    if config == "given":
        path = tmp_path / "tiny.yaml"
        path.write_text(yaml.safe_dump(TINY_CONFIG))
        err = refusal(["check", str(results), "--config", str(path)], capsys)
        assert f"{big}: 1.0 GiB, larger than any variance.csv the config makes (at most " in err, err
        assert err.endswith("); refused unread\n"), err
    else:
        err = refusal(["check", str(results), "--no-config"], capsys)
        assert f"{big}: 1.0 GiB, larger than any variance.csv the largest config the schema accepts makes" in err, err


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
@pytest.mark.parametrize("how", ["--config", "beside"])
def test_a_config_that_is_not_a_regular_file_is_refused_at_once(results, tmp_path, kind, how, capsys):
    path = beside(results) if how == "beside" else tmp_path / "other.yaml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path = Path("/dev/zero")  # endless: read whole, it never ends
        if how == "beside":
            path = beside(results)
            path.symlink_to("/dev/zero")
    args = ["check", str(results)] + (["--config", str(path)] if how == "--config" else [])
    err = refusal(args, capsys)
    assert f"config file {path}: is a " in err and "not a regular file" in err, err


def test_a_result_that_is_a_fifo_is_refused_at_once(results, capsys):
    (results / "variance.csv").unlink()
    os.mkfifo(results / "variance.csv")
    err = refusal(["check", str(results), "--no-config"], capsys)
    assert f"{results / 'variance.csv'}: is a FIFO (named pipe), not a regular file" in err, err


STALE_SEED = [out.file for e in EXPERIMENTS.values() for out in e.outputs.values() if "seed" in out.records]


def test_a_linked_results_folder_is_compared_with_the_config_beside_the_link(results, tmp_path, capsys):
    link = tmp_path / "linked" / "results"
    link.parent.mkdir()
    link.symlink_to(results, target_is_directory=True)  # the target's parent has no config/
    real = Path(shutil.copytree(results, tmp_path / "real" / "results"))  # the same files, as a folder
    other = copy.deepcopy(TINY_CONFIG)
    other["seed"] = 8
    for folder in (link, real):
        beside(folder, other)
        err = refusal(["check", str(folder)], capsys, lines=len(STALE_SEED))  # one line per file recording it
        assert "column 'seed' holds [7], but the config's seed is 8" in err, (folder, err)


def test_configs_beside_a_link_and_beside_its_target_must_agree(results, tmp_path, capsys):
    link = tmp_path / "here" / "results"
    link.parent.mkdir()
    link.symlink_to(results, target_is_directory=True)
    other = copy.deepcopy(TINY_CONFIG)
    other["seed"] = 8
    named, real = beside(link, other), beside(results, TINY_CONFIG)
    err = refusal(["check", str(link)], capsys)
    assert f"the configs beside the two, {named} and {real}, differ" in err and "--config FILE" in err, err
    beside(link, TINY_CONFIG)  # the same settings in both places: compared, not refused
    with deadline():
        assert main(["check", str(link)]) in (0, 1)
    assert "error" not in capsys.readouterr().err


def test_a_section_the_config_leaves_out_is_bounded_by_the_widest_config():
    # As the stale check skips a section the config does not give, its CSVs are bounded by what any config makes.
    from sdpa_lab.results import size_limits

    partial, widest = size_limits({"seed": 1, "variance": {"d_k": [4], "n_pairs": 1000}}), size_limits(None)
    assert partial["variance.csv"][1] == "the config" and partial["variance.csv"][0] < widest["variance.csv"][0]
    assert partial["gradient.csv"] == widest["gradient.csv"]


@pytest.mark.parametrize("columns", ["60", "80", "132"])
def test_check_all_fits_the_terminal_and_lists_every_check_under_its_claim(results, capsys, monkeypatch, columns):
    """`sdpa-lab check --all` lays out for the terminal's width (COLUMNS, as shutil reads it): no line wider; read
    back, each claim's row then every check of that claim beneath it, each with its verdict and its line whole."""
    from sdpa_lab.claims import claim_verdict, decide_checked, describe, registry

    from tests.check_table import table_rows

    monkeypatch.setenv("COLUMNS", columns)
    main(["check", str(results), "--no-config", "--all"])
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= int(columns)
    decision = decide_checked(results, None)
    rows = table_rows(out)[1:]
    grouped, claim = [], None
    for r in rows:
        claim = r[0] or claim
        if not r[0]:
            grouped.append((claim, r[2], r[3]))
    assert grouped == [(c.claim, c.verdict, describe(c, rule=False))
                       for cid in registry() for c in decision.checks if c.claim == cid]
    claims = {cid for cid in registry() if any(c.claim == cid for c in decision.checks)}
    assert {(r[0], r[2]) for r in rows if r[0]} == {
        (cid, claim_verdict([c for c in decision.checks if c.claim == cid])) for cid in claims}


def test_check_fits_one_80_by_24_screen_when_not_a_terminal(results, capsys, monkeypatch):
    """Piped (not a terminal, no COLUMNS), `sdpa-lab check` lays out for 80 columns: a row per claim and the totals
    fit one 24-line screen (no claim fails in the tiny run, so nothing more is listed beneath a claim)."""
    from sdpa_lab.claims import registry

    def not_a_terminal(fd=None):
        raise OSError("not a terminal")

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", not_a_terminal)  # as on a pipe, whatever runs the tests
    assert main(["check", str(results), "--no-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80 and len(lines) <= 24
    assert [line.split()[0] for line in lines[1:len(registry()) + 1]] == list(registry())
    assert lines[-1].startswith(f"{len(registry())} claims: ")
    # each claim's own k in its row (the footer no longer lists them: a claim more is a row more, no footer line)
    from sdpa_lab.claims import decide_checked

    from tests.check_table import claim_ks

    ks = {c.claim: f"{c.k:.2f}" for c in decide_checked(results, None).checks if c.basis == "statistical"}
    assert claim_ks("\n".join(lines)) == {cid: ks.get(cid, "") for cid in registry()}
