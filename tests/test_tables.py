"""Rows written without pandas give the very bytes pandas writes for the same table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.io import write_csv
from sdpa_lab.tables import csv_text

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=8)


@given(st.lists(st.tuples(st.integers(-10**6, 10**6), floats, texts, st.booleans()), min_size=1, max_size=20))
def test_rows_give_the_bytes_of_pandas_to_csv(cells):
    rows = [{"d_k": i, "value": x, "scale": s, "flag": b} for i, x, s, b in cells]
    assert csv_text(rows) == pd.DataFrame(rows).to_csv(index=False, lineterminator="\n")


@given(st.lists(st.tuples(st.integers(-10**6, 10**6), floats, texts, st.booleans()), min_size=2, max_size=20),
       st.integers(1, 19))
def test_rows_appended_without_a_header_give_the_bytes_of_the_whole_table(cells, cut):
    # a calibration batch job writes each run's rows as they come: the file must be the whole table's text
    rows = [{"d_k": i, "value": x, "scale": s, "flag": b} for i, x, s, b in cells]
    cut = min(cut, len(rows) - 1)
    assert csv_text(rows[:cut]) + csv_text(rows[cut:], header=False) == csv_text(rows)
    assert not csv_text(rows[cut:], header=False).startswith("d_k,value")


def test_numpy_scalars_are_written_as_plain_numbers():
    rows = [{"n": np.int64(3), "x": np.float64(0.1), "ok": np.bool_(True)}]
    assert csv_text(rows) == "n,x,ok\n3,0.1,True\n"


def test_a_column_of_integers_and_blanks_stays_integer():
    rows = [{"key": 0, "value": 1.5}, {"key": "", "value": 2.0}]
    assert csv_text(rows) == pd.DataFrame(rows).to_csv(index=False, lineterminator="\n") == "key,value\n0,1.5\n,2.0\n"


@pytest.mark.parametrize("rows, match", [
    ([], "no rows"),
    ([{"a": 1, "b": 2.0}, {"b": 2.0, "a": 1}], "row 1 has columns"),
    ([{"a": 1}, {"a": 2.5}], "'a' mixes integers and floats"),
])
def test_bad_rows_are_refused_before_any_file_is_written(tmp_path, rows, match):
    with pytest.raises(ValueError, match=match):
        write_csv(rows, tmp_path / "t.csv")
    assert list(tmp_path.iterdir()) == []
