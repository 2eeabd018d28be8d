"""The checks table written straight from each row's cells (check_table.check_text): the bytes csv_text writes of
the same rows, on real runs of every arm and on cells that need quoting or are not finite."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest

from sdpa_lab.calibration.check_table import as_rows, check_text
from sdpa_lab.calibration.runner import batch_cells, batch_job, run_batch
from sdpa_lab.calibration.studies import ARMS, COLUMNS, check_study
from sdpa_lab.tables import csv_text

from tests.calibration.sizes import SMALLEST

pytestmark = pytest.mark.xdist_group("calibration")


def small_study():
    return check_study({"seeds": 3, "broken_seeds": 2, "batch": 3, "seconds_per_run": 0.03,
                        "sweep": copy.deepcopy(SMALLEST)}, "small")


@pytest.mark.parametrize("arm", ARMS)
def test_a_run_s_cells_are_written_as_csv_text_writes_its_rows(arm, lesson_dir):
    runs = list(batch_cells(small_study(), arm, 0, fixed_dir=lesson_dir))
    assert len(runs) >= 2 and all(runs)
    for cells in runs:
        rows = as_rows(cells)
        assert all(list(row) == list(COLUMNS) for row in rows)
        assert check_text(cells) == csv_text(rows)
        assert check_text(cells, header=False) == csv_text(rows, header=False)
    # every kind of cell occurs: nan (an empty cell), finite floats, booleans, integers, text
    assert any(math.isnan(row["z"]) for cells in runs for row in as_rows(cells))
    assert any(math.isfinite(row["z"]) for cells in runs for row in as_rows(cells))


def test_a_row_s_numbers_are_its_check_s(lesson_dir):
    for row in run_batch(small_study(), ARMS[0], 0, fixed_dir=lesson_dir):
        if row["se"] > 0:
            assert row["z"] == row["deviation"] / row["se"] and row["k_check"] == row["tolerance"] / row["se"]
        assert row["deviation"] == pytest.approx(row["measured"] - row["expected"], rel=0, abs=0, nan_ok=True)


def test_a_batch_job_writes_the_bytes_of_csv_text_of_run_batch(tmp_path, lesson_dir):
    s = small_study()
    out = tmp_path / "batch.csv"
    batch_job("small", s.settings(), ARMS[1], 0, out, None, fixed_dir=lesson_dir)
    assert out.read_text(encoding="utf-8") == csv_text(run_batch(s, ARMS[1], 0, fixed_dir=lesson_dir))


def test_cells_that_need_quoting_or_are_not_finite_are_written_as_pandas_writes_them():
    floats = [math.nan, math.inf, -math.inf, -0.0, 1e-300, 0.1 + 0.2, -2.2250738585072014e-308]
    cells = [("s, with a comma", 'a "quoted" arm', i, 0, i, 2**64 - 1, "B1", "line\nbreak", "d_k=1", "within",
              "statistical", i % 2 == 0, x, -x, x, 1.0, x, x, x, x, "holds", 4.5, 7,
              "variance 1 1000" if i % 2 else "") for i, x in enumerate(floats)]
    rows = as_rows(cells)
    assert check_text(cells) == csv_text(rows) == pd.DataFrame(rows).to_csv(index=False, lineterminator="\n")
