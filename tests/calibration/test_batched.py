"""The calibration tables a batch at a time (calibration.batched) against all the checks at once (summary.summaries
of summary.read_batches): a real small study's batches, correct and broken arms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.calibration import batched, summary, tables_jobs
from sdpa_lab.calibration.qq_rows import qq_rows
from sdpa_lab.calibration.studies import COLUMNS, CORRECT_ARM
from sdpa_lab.calibration.summary import summaries
from sdpa_lab.io import write_csv
from sdpa_lab.moments import Moments

from tests.calibration.sizes import SMALLEST
from tests.calibration.study_batches import study_batches


def read_batches(paths) -> pd.DataFrame:
    """The per-check rows of every batch CSV, in (config, arm, run) order, in one table: what checks.csv holds, read
    at once, the reference the batch-at-a-time tables are held to."""
    frames = [pd.read_csv(p, keep_default_na=True) for p in sorted(map(str, paths))]
    if not frames:
        raise ValueError("no calibration batches to aggregate")
    checks = pd.concat(frames, ignore_index=True)
    missing = [c for c in COLUMNS if c not in checks.columns]
    if missing:
        raise ValueError(f"calibration batches lack columns {missing}")
    checks = checks[list(COLUMNS)]
    checks["order"] = range(len(checks))  # a run's checks keep the registry's order
    return summary._order(checks, [*summary.RUN, "order"]).drop(columns="order")


pytestmark = pytest.mark.xdist_group("calibration")

# Means and sds of z merged from moments differ from pandas' one-pass ones by rounding alone: to this much.
RTOL = ATOL = 1e-12
MOMENT_COLUMNS = ["mean_z", "sd_z", "k_check", "k", "mean_z_low", "mean_z_high", "sd_z_low", "sd_z_high"]


@pytest.fixture(scope="module")
def batches(tmp_path_factory, lesson_dir):
    """A small study's batch CSVs (12 correct runs, 3 per broken arm, 5 runs a batch, so batch10 sorts before
    batch2 by name), and a copy of a broken arm's first batch relabelled as a correct arm of config "zz": false
    fails for false_fail_checks."""
    return study_batches(tmp_path_factory.mktemp("batches"), "sm", 12, 3, 5, lesson_dir)


@pytest.fixture(scope="module")
def both(batches, tmp_path_factory):
    """The tables made a batch at a time (written to a folder), and today's of all the checks at once."""
    out = tmp_path_factory.mktemp("tables")
    sweeps = {"sm": [SMALLEST], "zz": [SMALLEST]}
    mine = tables_jobs.aggregate(reversed(batches), out, 1e-4, sweeps, ["sm"])
    checks = read_batches(batches)
    return out, mine, checks, summaries(checks, 1e-4, sweeps, ["sm"])


def test_every_table_but_the_z_summaries_has_todays_bytes(both):
    out, mine, _, today = both
    assert set(mine) == set(today)
    assert len(today["false_fail_checks"]) > 0 and len(today["runs"]) == 12 + 3 * 3 + 3
    for name in set(today) - {"z_summary", "z_by_point"}:
        write_csv(today[name], out / "today.csv")
        assert (out / f"{name}.csv").read_bytes() == (out / "today.csv").read_bytes(), name


@pytest.mark.parametrize("name", ["z_summary", "z_by_point"])
def test_the_z_summaries_equal_todays_to_rounding(both, name):
    _, mine, _, today = both
    got, want = mine[name], today[name]
    assert list(got.columns) == list(want.columns) and len(want) > 10
    exact = [c for c in want.columns if c not in MOMENT_COLUMNS]
    pd.testing.assert_frame_equal(got[exact], want[exact])
    for column in MOMENT_COLUMNS:
        np.testing.assert_allclose(got[column], want[column], rtol=RTOL, atol=ATOL, err_msg=column)
    assert want.sd_z.notna().any() and want.fails.sum() > 0


def test_checks_csv_is_todays_bytes(both):
    out, _, checks, _ = both
    write_csv(checks, out / "today_checks.csv")
    assert (out / "checks.csv").read_bytes() == (out / "today_checks.csv").read_bytes()


def test_batches_out_of_order_or_unlike_the_checks_table_are_refused(batches, tmp_path):
    twice = tmp_path / "twice.csv"
    twice.write_bytes(batches[0].read_bytes())
    with pytest.raises(ValueError, match="overlap"):
        tables_jobs.aggregate([batches[0], twice], tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text(batches[0].read_text().replace("config,arm,", "study,arm,", 1))
    with pytest.raises(ValueError, match=r"bad\.csv.*columns"):
        tables_jobs.aggregate([bad], tmp_path)
    with pytest.raises(ValueError, match="no calibration batches"):
        tables_jobs.aggregate([], tmp_path)


@given(st.lists(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=20), min_size=1, max_size=6))
def test_merged_moments_are_the_whole_samples(parts):
    """fold_moments of parts (any split, groups missing from some) equals the mean and sd of each group whole."""
    acc = None
    for i, part in enumerate(parts):
        rows = pd.DataFrame({"g": [f"g{j % 3}" for j in range(len(part))], "z": part})
        rows = rows.assign(basis="statistical", run=i, k_check=1.0, k=2.0, verdict="holds")
        acc = batched.fold_moments(acc, batched.z_moments(rows, ["g"]), ["g"])
    whole = pd.DataFrame({"g": [f"g{j % 3}" for p in parts for j in range(len(p))], "z": [z for p in parts for z in p]})
    for r in acc.itertuples():
        z = whole[whole.g == r.g].z.to_numpy()
        ref = Moments.of(z)
        assert r.n == len(z)
        assert r.mean == pytest.approx(float(np.mean(z)), rel=1e-9, abs=1e-9)
        assert r.m2 == pytest.approx(ref.m2, rel=1e-9, abs=1e-6)


def test_checks_csv_ends_each_batch_on_a_line_end(batches, tmp_path):
    # a batch written without its final line end (by hand) still ends its last row: the next batch's first row is
    # not glued to it
    cut = [tmp_path / f"cut{i}.csv" for i in range(2)]
    for path, batch in zip(cut, batches[:2], strict=True):
        path.write_bytes(batch.read_bytes().rstrip(b"\n"))
    batched.write_checks(cut, tmp_path / "checks.csv")
    whole = [batch.read_text().splitlines() for batch in batches[:2]]
    assert (tmp_path / "checks.csv").read_text().splitlines() == [whole[0][0], *whole[0][1:], *whole[1][1:]]


def test_the_report_reads_of_checks_csv_the_rows_it_plots_in_chunks(both):
    """qq_rows in chunks of 7 rows gives the qq figure the same families, in the same order, with the same z, as
    checks.csv read whole."""
    out, _, checks, _ = both
    rows = qq_rows(out / "checks.csv", chunk_rows=7)
    want = checks[(checks.arm == CORRECT_ARM) & (checks.relation == "within") & checks.z.notna()]
    assert len(rows) == len(want) > 0

    def families(t):
        return [(config, claim, check, g.z.tolist())
                for (config, claim, check), g in t.groupby(["config", "claim", "check"], sort=False, observed=True)]

    assert families(rows) == families(want)
