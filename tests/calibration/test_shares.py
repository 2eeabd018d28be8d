"""Each batch's share of the calibration tables (calibration.shares, written by its batch job) merged by the tables
job: every table, checks.csv and the report the bytes that the batch CSVs give read again (calibration.batched), on a
real small study with correct and broken arms and its batches given out of order."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.calibration import batched, shares, tables_jobs
from sdpa_lab.calibration.qq_rows import qq_rows
from sdpa_lab.calibration.report import build_report
from sdpa_lab.calibration.runner import batch_job
from sdpa_lab.calibration.studies import ARMS, BATCH, CORRECT_ARM, SHARE, TABLES, check_study, share_path

from tests.calibration.sizes import SMALLEST
from tests.calibration.study_batches import study_batches

pytestmark = pytest.mark.xdist_group("calibration")

SWEEPS = {"sh": [SMALLEST], "zz": [SMALLEST]}


@pytest.fixture(scope="module")
def batches(tmp_path_factory, lesson_dir):
    """A small study's batch CSVs with their shares (9 correct runs, 2 per broken arm, 4 runs a batch; the correct
    arm's batches named so that batch20 sorts before batch4), and a broken arm's batch relabelled as a correct arm
    of config "zz": false fails, whose rows the share carries whole."""
    paths = study_batches(tmp_path_factory.mktemp("share_batches"), "sh", 9, 2, 4, lesson_dir)
    for path in paths:
        shares.write_share(path, share_path(path))
    return paths


@pytest.fixture(scope="module")
def tables(batches, tmp_path_factory):
    """The tables written from the batch CSVs read again (as before shares) and from the shares, the batches given in
    reverse order (the shares in the same order as their batches)."""
    given = list(reversed(batches))
    from_csv, from_shares = tmp_path_factory.mktemp("from_csv"), tmp_path_factory.mktemp("from_shares")
    mine = tables_jobs.aggregate(given, from_shares, 1e-4, SWEEPS, ["sh"], shares=[share_path(p) for p in given])
    tables_jobs.aggregate(given, from_csv, 1e-4, SWEEPS, ["sh"])
    return from_csv, from_shares, mine


@pytest.mark.parametrize("name", TABLES)
def test_every_table_from_the_shares_has_the_bytes_of_the_batches_read_again(tables, name):
    from_csv, from_shares, _ = tables
    assert (from_shares / f"{name}.csv").read_bytes() == (from_csv / f"{name}.csv").read_bytes()


def test_the_study_has_what_the_comparison_needs(tables):
    """Correct and broken arms, false fails with their rows, z's with an sd: the bytes compared are not empty ones."""
    _, _, mine = tables
    assert set(mine["runs"].arm) == set(ARMS) and len(mine["runs"]) == 9 + 3 * 2 + 2
    assert len(mine["false_fail_checks"]) > 0 and mine["z_summary"].sd_z.notna().any()
    assert mine["power"].fails.max() > 0 and mine["tails"].n.sum() > 0


def test_the_report_from_the_shares_is_the_report_from_checks_csv(tables, batches):
    """The QQ figure's rows from the shares (any order given) are those qq_rows reads of checks.csv, and the HTML is
    the same."""
    _, from_shares, _ = tables
    given = [share_path(p) for p in batches[::2] + batches[1::2]]
    got, want = shares.plotted_rows(given), qq_rows(from_shares / "checks.csv")
    assert len(want) > 0
    pd.testing.assert_frame_equal(got.astype(str), want.astype(str))  # the same rows, in the same order
    np.testing.assert_array_equal(got.z.to_numpy(), want.z.to_numpy())
    build_report(from_shares, from_shares / "a.html", "abc")
    build_report(from_shares, from_shares / "b.html", "abc", shares=given)
    assert (from_shares / "a.html").read_bytes() == (from_shares / "b.html").read_bytes()


def test_a_share_reads_back_to_the_bit(batches):
    """Every part of a share, decoded, equals batch_share of its batch: values, dtypes and columns."""
    for path in batches:
        got = shares.read_share(share_path(path), path)
        want = batched.batch_share(str(path), batched.read_batch(str(path)))
        assert list(got) == list(want)
        for name in want:
            pd.testing.assert_frame_equal(got[name], want[name], check_exact=True, obj=name)
            assert list(got[name].dtypes) == list(want[name].dtypes), name


def test_encode_keeps_nan_inf_and_64_bit_seeds():
    frame = pd.DataFrame({"z": [np.nan, np.inf, -0.1 + 0.2], "seed": np.array([2**64 - 1, 0, 2**63], dtype="uint64"),
                          "text": pd.Series(["a", np.nan, "c"], dtype="str"), "ok": [True, False, True]})
    back = shares.decode(json.loads(json.dumps(shares.encode(frame))))
    pd.testing.assert_frame_equal(back, frame, check_exact=True)


@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True), st.one_of(st.none(), st.text(max_size=3)),
                          st.integers(0, 2**64 - 1)), max_size=30))
def test_any_table_of_floats_text_and_seeds_reads_back_to_the_bit(rows):
    """encode then decode (through JSON text) keeps every float's bits (-0.0 too), nan, missing text and 64-bit seeds,
    as columns of the dtypes read_batch gives, and as categories (the report's rows)."""
    frame = pd.DataFrame({"x": pd.Series([r[0] for r in rows], dtype="float64"),
                          "text": pd.Series([np.nan if r[1] is None else r[1] for r in rows], dtype="str"),
                          "seed": pd.Series([r[2] for r in rows], dtype="uint64")})
    frame["cat"] = frame.text.astype("category")
    back = shares.decode(json.loads(json.dumps(shares.encode(frame))))
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    numbers = frame.x.notna().to_numpy()  # a nan's payload is not kept: read_csv makes only the one nan
    got, want = back.x.to_numpy()[numbers], frame.x.to_numpy()[numbers]
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_the_batch_job_writes_its_share(tmp_path, lesson_dir):
    s = check_study({"seeds": 3, "broken_seeds": 0, "batch": 3, "seconds_per_run": 0.03, "sweep": SMALLEST}, "job")
    out = tmp_path / "batch0.csv"
    batch_job("job", s.settings(), CORRECT_ARM, 0, out, None, fixed_dir=lesson_dir, share_out=tmp_path / "s.json")
    assert (tmp_path / "s.json").read_text() == shares.share_text(out)
    assert len(shares.read_share(tmp_path / "s.json", out)["runs"]) == 3


def test_the_share_file_is_beside_its_batch():
    keys = {"study": "smallest", "arm": CORRECT_ARM, "batch": 7}
    assert share_path(BATCH.format(**keys)) == SHARE.format(**keys)
    with pytest.raises(ValueError, match="not a .csv"):
        share_path("batch7.tsv")


def test_a_share_not_of_its_batch_or_missing_or_overlapping_is_refused(batches, tmp_path):
    """A share made from another batch, shares not one per batch, a share of another format, and two batches with
    the same runs: each an error naming the file, before any table is written."""
    a, b = map(str, batches[:2])
    with pytest.raises(ValueError, match="not made from"):
        tables_jobs.aggregate([a, b], tmp_path, shares=[share_path(b), share_path(a)])
    assert not (tmp_path / "runs.csv").exists()
    with pytest.raises(ValueError, match="2 calibration batches but 1 shares"):
        tables_jobs.aggregate([a, b], tmp_path, shares=[share_path(a)])
    old = tmp_path / "old.share.json"
    old.write_text(json.dumps({"format": 0}))
    with pytest.raises(ValueError, match=r"old\.share\.json.*format"):
        shares.read_share(old)
    twice = tmp_path / "twice.csv"
    twice.write_bytes(batches[0].read_bytes())
    shares.write_share(twice, share_path(twice))
    with pytest.raises(ValueError, match="overlap"):
        tables_jobs.aggregate([a, twice], tmp_path, shares=[share_path(a), share_path(twice)])
