"""Looking cells up in a run's tables (sdpa_lab.results.Results): the row every column of a selector
matches and no other, in the table's order, with Python's equality (4 == 4.0 == np.int64(4)); an error
naming the file and the condition when no row or several rows match; the distinct sweep points, sorted.
Checked against an independent computation, a pandas boolean mask over the table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.results import Results, ResultsError, RowIndexes, column_of

# Each column alone matches two rows: a lookup that ignored one column of the selector would find two.
GRID = pd.DataFrame({"d_k": [2, 2, 1, 1], "scale": ["b", "a", "b", "a"], "value": [40.0, 30.0, 20.0, 10.0],
                     "n": [4, 3, 2, 1]})


def results(table: pd.DataFrame = GRID, form: str = "DataFrame") -> Results:
    """`table` as a run's t.csv: as a DataFrame (read from a CSV), as its columns (the calibration runner's lesson
    tables) or as rows (a calibration run's own tables, as its experiments make them)."""
    given = {"DataFrame": lambda: table, "columns": lambda: {c: table[c].to_numpy() for c in table},
             "rows": lambda: table.to_dict("records")}[form]()
    return Results("/runs/x", {"t.csv": given})


# Every lookup is the same whichever form the table is given in.
BOTH = pytest.mark.parametrize("form", ["DataFrame", "columns", "rows"])


@pytest.mark.parametrize("d_k, scale, value", [(1, "a", 10.0), (1, "b", 20.0), (2, "a", 30.0), (2, "b", 40.0)])
@BOTH
def test_value_is_the_cell_of_the_one_row_every_column_matches(d_k, scale, value, form):
    R = results(form=form)
    got = R.value("t.csv", d_k=d_k, scale=scale)
    assert got == value
    assert got.cell == ("t.csv", (("d_k", d_k), ("scale", scale)), "value")
    assert R.value("t.csv", scale=scale, d_k=d_k) == value  # the selector's order does not matter
    assert R.value("t.csv", "n", d_k=d_k, scale=scale) == value / 10  # another column of the same row


@BOTH
def test_keys_compare_as_the_values_do(form):
    R = results(form=form)
    assert R.value("t.csv", d_k=np.int64(2), scale=np.str_("a")) == 30.0
    assert R.value("t.csv", d_k=2.0, scale="a") == 30.0
    assert R.value("t.csv", "n", value=np.float64(20.0)) == 2  # a float column, looked up by its value
    with pytest.raises(ResultsError, match="found 0"):
        R.value("t.csv", d_k="2", scale="a")  # a string is not the number


@BOTH
def test_a_missing_row_names_the_file_and_the_condition(form):
    with pytest.raises(ResultsError, match=r"^/runs/x/t\.csv: expected one row with d_k=3, scale='a', found 0$"):
        results(form=form).value("t.csv", d_k=3, scale="a")
    with pytest.raises(ResultsError, match=r"expected one row with d_k=1, scale='c', found 0$"):
        results(form=form).value("t.csv", d_k=1, scale="c")  # each value exists, not together


@BOTH
def test_a_duplicated_row_names_the_file_and_the_condition(form):
    twice = pd.concat([GRID, GRID.iloc[[1]]], ignore_index=True)
    with pytest.raises(ResultsError, match=r"^/runs/x/t\.csv: expected one row with d_k=2, scale='a', found 2$"):
        results(twice, form).value("t.csv", d_k=2, scale="a")
    with pytest.raises(ResultsError, match=r"expected one row with scale='a', found 2$"):
        results(form=form).value("t.csv", scale="a")  # a selector that leaves a column out matches two rows
    assert results(twice, form).value("t.csv", d_k=1, scale="a") == 10.0  # the other rows are still found


@BOTH
def test_a_missing_column_is_named(form):
    with pytest.raises(ResultsError, match=r"^/runs/x/t\.csv: column 'dtype' is missing$"):
        results(form=form).value("t.csv", d_k=1, dtype="float32")
    with pytest.raises(ResultsError, match=r"^/runs/x/t\.csv: column 'count' is missing$"):
        results(form=form).value("t.csv", "count", d_k=1, scale="a")


@BOTH
def test_values_are_every_matching_row_in_the_tables_order(form):
    R = results(form=form)
    assert R.values("t.csv", scale="a").tolist() == [30.0, 10.0]
    assert R.values("t.csv", "n", d_k=1).tolist() == [2, 1]
    assert R.values("t.csv", "n").tolist() == [4, 3, 2, 1]  # no selector: every row
    assert R.values("t.csv", d_k=5).tolist() == []


@BOTH
def test_distinct_gives_each_combination_once_sorted(form):
    R = results(form=form)
    assert R.distinct("t.csv", "d_k") == [(1,), (2,)]
    assert R.distinct("t.csv", "scale", "d_k") == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert all(type(d) is int for (d,) in R.distinct("t.csv", "d_k"))  # plain numbers, as written in messages


# Small tables whose key columns take few values, so that selectors often match zero, one or several rows.
KEYS = st.sampled_from([1, 2, 3])
NAMES = st.sampled_from(["a", "b"])


@BOTH
@given(rows=st.lists(st.tuples(KEYS, NAMES, st.floats(-1e6, 1e6)), min_size=1, max_size=30),
       d_k=KEYS, scale=NAMES, which=st.sampled_from(["d_k", "scale", "both"]))
def test_lookups_agree_with_a_boolean_mask(rows, d_k, scale, which, form):
    table = pd.DataFrame(rows, columns=["d_k", "scale", "value"])
    where = {"d_k": d_k, "scale": scale} if which == "both" else {which: {"d_k": d_k, "scale": scale}[which]}
    mask = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        mask &= (table[column] == value).to_numpy()
    R = results(table, form)
    assert R.values("t.csv", **where).tolist() == table.value[mask].tolist()
    if mask.sum() == 1:
        assert R.value("t.csv", **where) == table.value[mask].iloc[0]
    else:
        with pytest.raises(ResultsError, match=f"found {mask.sum()}$"):
            R.value("t.csv", **where)
    assert R.distinct("t.csv", "scale", "d_k") == sorted(set(zip(table.scale, table.d_k, strict=True)))


@BOTH
def test_levels_and_first_read_a_tables_settings(form):
    R = results(form=form)
    assert R.levels("t.csv", "d_k") == [1, 2] and R.levels("t.csv", "scale") == ["a", "b"]
    assert all(type(d) is int for d in R.levels("t.csv", "d_k"))  # plain numbers, as written in messages
    assert R.first("t.csv", "n") == 4 and R.first("t.csv", "scale") == "b"


def test_column_of_rows_is_the_array_of_their_dataframe():
    rows = [{"d_k": 1, "x": 0.5, "ok": True, "scale": "none", "mixed": "a"},
            {"d_k": 2, "x": float("nan"), "ok": False, "scale": "inv_dk", "mixed": 1}]
    frame = pd.DataFrame(rows)
    columns = {name: column_of(rows, name) for name in frame.columns}
    for name, values in columns.items():
        assert values.dtype == np.asarray(frame[name]).dtype, name  # what Results reads
    assert columns["mixed"].tolist() == ["a", 1]  # text with a number: kept as it is, not made text
    assert columns["scale"].tolist() == ["none", "inv_dk"] and np.isnan(columns["x"][1])


def test_a_column_of_a_single_row():
    rows = [{"d_k": 4, "value": 0.25, "scale": "none"}]
    assert {name: column_of(rows, name).tolist() for name in rows[0]} == {"d_k": [4], "value": [0.25],
                                                                          "scale": ["none"]}


def test_a_table_of_no_rows_is_named():
    with pytest.raises(ResultsError, match="t.csv: has no rows"):
        Results("/runs/x", {"t.csv": []}).value("t.csv", d_k=1)


def test_row_indexes_are_reused_across_runs_only_for_the_same_key_columns():
    # the calibration study decides many runs of one sweep: a run's lookups must see its own rows, whether its
    # index is the previous run's (same key columns) or rebuilt (the rows differ)
    indexes = RowIndexes()
    first = Results("/runs/1", {"t.csv": GRID}, indexes=indexes)
    assert first.value("t.csv", d_k=1, scale="a") == 10.0 and first.values("t.csv", "n").tolist() == [4, 3, 2, 1]
    again = GRID.assign(value=GRID["value"] + 1)  # another run: the same sweep points, other values
    second = Results("/runs/2", {"t.csv": again}, indexes=indexes)
    assert second.value("t.csv", d_k=1, scale="a") == 11.0
    assert second._rows("t.csv", ("d_k", "scale")) is first._rows("t.csv", ("d_k", "scale"))  # built once
    reordered = GRID.iloc[::-1].reset_index(drop=True)
    third = Results("/runs/3", {"t.csv": reordered}, indexes=indexes)
    for d_k, scale, value in [(1, "a", 10.0), (2, "b", 40.0)]:
        assert third.value("t.csv", d_k=d_k, scale=scale) == value
    fewer = Results("/runs/4", {"t.csv": GRID.iloc[:3]}, indexes=indexes)
    assert fewer.distinct("t.csv") == [()] and fewer.values("t.csv", "n").tolist() == [4, 3, 2]
    with pytest.raises(ResultsError, match="found 0"):
        fewer.value("t.csv", d_k=1, scale="a")


# Seeds span 0 .. 2^64 - 1 (the schema's bounds): each one read back as the very number written.
SEEDS = [0, 2**63 - 1, 2**63, 2**64 - 1]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_seed_column_reads_back_as_the_seed_written(seed, tmp_path):
    from sdpa_lab.results import read_table

    (tmp_path / "t.csv").write_text(f"seed,d_k\n{seed},4\n{seed},16\n")
    table = read_table(tmp_path, "t.csv", {"seed": "int", "d_k": "int"})
    assert table["seed"].tolist() == [seed, seed]  # Python ints: exact, not wrapped to negatives
    assert all(type(s) is int for s in table["seed"].tolist())
    assert table["d_k"].tolist() == [4, 16]


@pytest.mark.parametrize("cells, what", [
    (["18446744073709551616"], "'18446744073709551616' in row 2 is not a 64-bit integer"),  # 2^64
    # no 64-bit type holds both
    (["-1", "9223372036854775808"], "'9223372036854775808' in row 3 is not a 64-bit integer"),
    (["4.5"], "'4.5' in row 2 is not an integer"),
])
def test_an_int_column_no_64_bit_integer_holds_is_refused(cells, what, tmp_path):
    from sdpa_lab.results import read_table

    (tmp_path / "t.csv").write_text("seed\n" + "\n".join(cells) + "\n")
    with pytest.raises(ResultsError, match=f"t.csv, column 'seed': {what}"):
        read_table(tmp_path, "t.csv", {"seed": "int"})


def test_an_integral_float_in_an_int_column_reads_as_its_integer(tmp_path):
    from sdpa_lab.results import read_table

    (tmp_path / "t.csv").write_text("n\n4.0\n-3\n")
    assert read_table(tmp_path, "t.csv", {"n": "int"})["n"].tolist() == [4, -3]
