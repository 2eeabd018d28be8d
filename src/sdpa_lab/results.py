"""Reading the result CSVs back, strictly: a missing file, a missing column, a
value of the wrong type or a nan/inf where a number is needed is an error that
names the file and the column.
"""

from __future__ import annotations

import importlib
import io
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from sdpa_lab.config import widest_config
from sdpa_lab.config_file import read_regular_file, regular_file_problem
from sdpa_lab.experiments.registry import EXPERIMENTS, columns, settings_of
from sdpa_lab.tables import Rows
from sdpa_lab.workflow_support.cost import size


class ResultsError(ValueError):
    """A result CSV that is missing, malformed, or does not match the config."""


# file -> {column: kind}; kind is "int", "float" (finite), "num" (nan allowed) or "str".
# Declared with each experiment (sdpa_lab.experiments.registry).
COLUMNS: dict[str, dict[str, str]] = columns()


# The widest cell of each kind (registry.Output.columns) a result CSV can hold, and its comma or line end:
# a seed of 20 digits, a float's shortest round-trip text (at most 24 characters: -2.2250738585072014e-308),
# a label (the longest is 41 characters; 64 allowed).
CELL_BYTES = {"int": 21, "float": 25, "num": 25, "str": 65}


def _given(config: Mapping | None, section: str | None) -> bool:
    """Whether `config` gives the settings of `section` (the lesson replications, with none, take none)."""
    return config is not None and (section is None or section in config)


def row_counts(config: Mapping | None) -> dict[str, int]:
    """Each result CSV's number of rows from `config`, as its experiment declares it (registry.Experiment.row_counts);
    with no config, or for a section `config` leaves out (as the stale check skips it), the most any config the
    schema accepts makes (config.widest_config)."""
    widest = widest_config()
    counts = {}
    for name, experiment in EXPERIMENTS.items():
        module, _, function = experiment.row_counts.partition(":")
        settings = settings_of(config if _given(config, experiment.section) else widest, name)
        made = getattr(importlib.import_module(module), function)(settings)
        counts |= {out.file: made[key] for key, out in experiment.outputs.items()}
    return counts


def size_limits(config: Mapping | None) -> dict[str, tuple[int, str]]:
    """The most bytes each result CSV of `config` can hold (of any config the schema accepts where `config` gives
    none), and which config that is: its header, and its rows (row_counts) with every cell as wide as its kind's
    widest (CELL_BYTES). A larger file is not its results."""
    counts = row_counts(config)
    limits = {}
    for experiment in EXPERIMENTS.values():
        which = "the config" if _given(config, experiment.section) else "the largest config the schema accepts"
        for file in (out.file for out in experiment.outputs.values()):
            header = sum(len(column) + 1 for column in COLUMNS[file])
            limits[file] = (header + counts[file] * sum(CELL_BYTES[kind] for kind in COLUMNS[file].values()), which)
    return limits


def _check_column(name: str, column: str, series: pd.Series, kind: str) -> pd.Series:
    where = f"{name}, column '{column}'"
    if kind == "str":
        if series.isna().any():
            raise ResultsError(f"{where}: empty value in row {int(series.isna().to_numpy().argmax()) + 2}")
        return series.astype(str)
    values = pd.to_numeric(series, errors="coerce")
    bad = values.isna() & series.notna() & (series.astype(str).str.strip() != "")
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise ResultsError(f"{where}: {series.iloc[row]!r} in row {row + 2} is not a number")
    if kind == "num":
        return values
    if series.isna().any():  # read as nan (see read_table); say what the file holds
        raise ResultsError(f"{where}: empty in row {int(series.isna().to_numpy().argmax()) + 2}; a number is needed")
    finite = np.isfinite(values.to_numpy(dtype=float))
    if not finite.all():
        row = int((~finite).argmax())
        raise ResultsError(f"{where}: {series.iloc[row]!r} in row {row + 2} is not a finite number")
    if kind == "int":
        return _integers(where, series, values)
    return values.astype(float)


def _integers(where: str, series: pd.Series, values: pd.Series) -> pd.Series:
    """An "int" column as 64-bit integers, exactly: int64, or uint64 where pandas read it so (a seed from 2^63 to
    2^64 - 1, which int64 would wrap to a negative number); an integral float ("4.0") as int64 when it fits.
    A fraction, or a number no 64-bit integer holds, is an error."""
    if values.dtype.kind in "iu":
        return values
    if not np.all(values == np.round(values)):
        row = int((values != np.round(values)).to_numpy().argmax())
        raise ResultsError(f"{where}: {series.iloc[row]!r} in row {row + 2} is not an integer")
    out_of_range = (values < -(2.0**63)) | (values >= 2.0**63)  # a float that int64 would wrap or clip
    if out_of_range.any():
        row = int(out_of_range.to_numpy().argmax())
        raise ResultsError(f"{where}: {series.iloc[row]!r} in row {row + 2} is not a 64-bit integer here (a "
                           "column mixing negative numbers with numbers from 2^63 on, or one beyond 2^64 - 1)")
    return values.astype(np.int64)


def read_table(results_dir: str | Path, name: str, columns: Mapping[str, str] | None = None,
               limit: tuple[int, str] | None = None) -> pd.DataFrame:
    """One result CSV, with each declared column checked and typed. Refused before it is read: anything but a
    regular file, and a file larger than `limit` = (bytes, the config it comes from) says (size_limits)."""
    path = Path(results_dir) / name
    columns = COLUMNS.get(name, {}) if columns is None else columns
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ResultsError(f"{path}: missing (run `snakemake --cores 4` to regenerate results)") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if problem := regular_file_problem(info.st_mode):
        raise ResultsError(f"{path}: {problem}; a result is a CSV file")
    def too_large(n_bytes: int) -> ResultsError:
        return ResultsError(f"{path}: {size(n_bytes)}, larger than any {path.name} {limit[1]} makes (at most "
                            f"{size(limit[0])}); refused unread")

    if limit is not None and info.st_size > limit[0]:
        raise too_large(info.st_size)
    try:  # read as stat'ed: not a FIFO put in its place since, nor more than the limit if it grew
        data = read_regular_file(path, -1 if limit is None else limit[0] + 1)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if limit is not None and len(data) > limit[0]:
        raise too_large(len(data))
    try:
        table = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable CSV ({exc})") from None
    for column, kind in columns.items():
        if column not in table.columns:
            raise ResultsError(f"{path}: column '{column}' is missing (has: {', '.join(table.columns)})")
        table[column] = _check_column(path.name, column, table[column], kind)
    if table.empty:
        raise ResultsError(f"{path}: has no rows")
    return table


class Measured(float):
    """A number read from a result CSV, remembering its cell: (file, row selector, column)."""

    cell: tuple[str, tuple[tuple[str, object], ...], str]

    def __new__(cls, value: float, cell: tuple) -> Measured:
        obj = super().__new__(cls, value)
        obj.cell = cell
        return obj


# (kind, statistic, d_k, T) -> (mean, Monte Carlo SE): theory's finite-d_k expectations (sdpa_lab.claims.expectations).
Expectations = Mapping[tuple[str, str, int, int], tuple[float, float]]


# A table as read from its CSV, as its columns (name -> values), or as the rows an experiment makes (sdpa_lab.tables):
# the calibration runner gives the lesson tables as columns, once per job, and each run's own tables as rows.
Table = pd.DataFrame | Mapping[str, np.ndarray] | Rows


def column_of(rows: Rows, column: str) -> np.ndarray:
    """Column `column` of rows (sdpa_lab.tables) as the array Results reads from the DataFrame of the same rows
    (int64, float64, bool, or object for text: NumPy alone would make a fixed-width string array, and text of any
    number mixed in)."""
    values = [row[column] for row in rows]
    array = np.array(values, dtype=object if isinstance(values[0], str) else None)
    return np.array(values, dtype=object) if array.dtype.kind == "U" else array


class RowIndexes:
    """Row indexes (Results._rows) kept across the Results of many runs of one sweep, as the calibration study
    decides them: every run's tables have the same key columns (the sweep points); only the measured values differ.

    A kept index is reused only for a table whose key columns equal those it was built from (compared, not assumed).
    """

    def __init__(self):
        # (file, key column names) -> (the key columns' values, the number of rows, the index)
        self._kept: dict[tuple[str, tuple[str, ...]], tuple[list[list], int, dict[tuple, list[int]]]] = {}

    def get(self, name: str, columns: tuple[str, ...], values: list[list],
            n_rows: int) -> dict[tuple, list[int]] | None:
        """The index kept for `columns` of table `name`, if it was built from these `values` (each column's, as a
        list: == compares them as the index's keys compare) and `n_rows` rows."""
        kept = self._kept.get((name, columns))
        if kept is None or kept[1] != n_rows or kept[0] != values:
            return None
        return kept[2]

    def keep(self, name: str, columns: tuple[str, ...], values: list[list], n_rows: int,
             index: dict[tuple, list[int]]) -> None:
        """Keep `index`, built from `values` of `columns` of table `name` with `n_rows` rows."""
        self._kept[name, columns] = (values, n_rows, index)


class Results:
    """The result CSVs of one run, read on first use, and the expectations the claims compare them with.

    The claims read them through the methods below only, so a table may be given as a DataFrame, as its
    columns or as rows (Table); of rows, only the columns the claims read are converted (to lists for
    cells and row keys, to arrays for `values`).
    """

    def __init__(self, results_dir: str | Path, tables: Mapping[str, Table] | None = None,
                 expectations: Expectations | None = None, indexes: RowIndexes | None = None,
                 limits: Mapping[str, tuple[int, str]] | None = None):
        self.dir = Path(results_dir)
        self._limits = dict(limits or {})  # file -> (bytes, the config), read_table's refusal of a larger file
        self._tables: dict[str, Table] = dict(tables or {})
        self._expectations = expectations
        self._arrays: dict[tuple[str, str], np.ndarray] = {}  # (file, column) -> its values, for `values`
        self._lists: dict[tuple[str, str], list] = {}  # (file, column) -> its values, for cells and row keys
        self._indexes: dict[tuple[str, tuple[str, ...]], dict[tuple, list[int]]] = {}  # see `_rows`
        self._shared = indexes

    def __getitem__(self, name: str) -> Table:
        if name not in self._tables:
            self._tables[name] = read_table(self.dir, name, limit=self._limits.get(name))
        return self._tables[name]

    def expectation(self, kind: str, statistic: str, d_k: int, T: int) -> tuple[float, float]:
        """Theory's expectation `kind` of `statistic` at d_k and T, and its Monte Carlo SE
        (sdpa_lab.claims.expectation_kinds.expectation): from the expectations given, else computed here."""
        if self._expectations is None:
            from sdpa_lab.claims.expectation_kinds import expectation  # the claims package imports this module

            return expectation(kind, statistic, d_k, T)
        key = (kind, statistic, d_k, T)
        if key not in self._expectations:
            raise ResultsError(f"{self.dir}: no expectation {key} among those given")
        return self._expectations[key]

    def value(self, name: str, column: str = "value", **where) -> Measured:
        """The single value of `column` in the row of `name` matching `where`."""
        # the kept index and column looked up here first: hundreds of calls per run, most of them for kept ones
        index = self._indexes.get((name, tuple(where))) or self._rows(name, tuple(where))
        rows = index.get(tuple(where.values()), [])
        column_values = self._lists.get((name, column)) or self._list(name, column)
        if len(rows) != 1:
            cond = ", ".join(f"{k}={v!r}" for k, v in where.items())
            raise ResultsError(f"{self.dir / name}: expected one row with {cond}, found {len(rows)}")
        # one cell: indexed directly, not through `values` (a new array per call, hundreds of calls per run)
        return Measured(float(column_values[rows[0]]), (name, tuple(where.items()), column))

    def values(self, name: str, column: str = "value", **where) -> np.ndarray:
        """The values of `column` in every row of `name` matching `where` (column == value for each), in the
        table's order."""
        rows = self._rows(name, tuple(where)).get(tuple(where.values()), [])
        return self._array(name, column)[rows]

    def distinct(self, name: str, *columns: str) -> list[tuple]:
        """The distinct combinations of values of `columns` in `name`, sorted: the sweep points of a table."""
        return sorted(self._rows(name, columns))

    def levels(self, name: str, column: str) -> list:
        """The distinct values of `column` in `name`, sorted: a sweep's d_k, its learning rates."""
        return [value for (value,) in self.distinct(name, column)]

    def first(self, name: str, column: str):
        """`column` in the first row of `name`: a setting every row records (T, trials, n_pairs)."""
        return self._list(name, column)[0]

    def _rows(self, name: str, columns: tuple[str, ...]) -> dict[tuple, list[int]]:
        """The row numbers of `name` by their values in `columns` (a tuple of them), built once per set of columns.

        The claims look up hundreds of single cells: one pass over the table, then a dict lookup each, rather
        than a boolean mask over the whole table each. Keys compare as the values do (4 == 4.0 == np.int64(4)).
        With `indexes` (RowIndexes), an index built for an earlier run with the same key columns is reused.
        """
        if (name, columns) not in self._indexes:
            key_columns = [self._list(name, c) for c in columns]
            table = self[name]
            n_rows = len(table) if isinstance(table, list | pd.DataFrame) else len(self._list(name, next(iter(table))))
            index = self._shared.get(name, columns, key_columns, n_rows) if self._shared is not None else None
            if index is None:
                keys = zip(*key_columns, strict=True) if columns else [()] * n_rows
                index = {}
                for row, key in enumerate(keys):
                    index.setdefault(key, []).append(row)
                if self._shared is not None:
                    self._shared.keep(name, columns, key_columns, n_rows, index)
            self._indexes[name, columns] = index
        return self._indexes[name, columns]

    def _array(self, name: str, column: str) -> np.ndarray:
        """Column `column` of `name` as a NumPy array, kept: what `values` selects rows of."""
        if (name, column) not in self._arrays:
            table = self._having(name, column)
            rows = isinstance(table, list)
            self._arrays[name, column] = column_of(table, column) if rows else np.asarray(table[column])
        return self._arrays[name, column]

    def _list(self, name: str, column: str) -> list:
        """Column `column` of `name` as a list of Python values, kept: the claims look up hundreds of single cells,
        and the row keys are made of these (of a table given as rows, no array is made for them)."""
        if (name, column) not in self._lists:
            table = self._having(name, column)
            self._lists[name, column] = ([row[column] for row in table] if isinstance(table, list)
                                         else self._array(name, column).tolist())
        return self._lists[name, column]

    def _having(self, name: str, column: str) -> Table:
        """Table `name`, which must have a row and column `column`."""
        table = self[name]
        rows = isinstance(table, list)
        if rows and not table:
            raise ResultsError(f"{self.dir / name}: has no rows")
        if column not in (table[0] if rows else table):  # a row's keys, a DataFrame's columns, a Mapping's keys
            raise ResultsError(f"{self.dir / name}: column '{column}' is missing")
        return table


def stale_errors(results: Results, config: Mapping) -> list[str]:
    """Where a setting recorded in the CSVs differs from `config` (results from another config).

    Every setting each output records (registry.Output.records) is compared, as the set of
    values its column(s) hold against the setting's value (or values, for a list).
    """
    errors = []
    for experiment in EXPERIMENTS.values():
        if experiment.section not in config:
            continue
        settings = {"seed": config["seed"], **config[experiment.section]}
        for out in experiment.outputs.values():
            if not (results.dir / out.file).exists():
                continue
            table = results[out.file]
            for setting, column in out.records.items():
                value = settings[setting]
                if isinstance(column, tuple):  # a list of tuples, one column per position
                    got = {tuple(row) for row in table[list(column)].drop_duplicates().to_numpy().tolist()}
                    want = {tuple(v) for v in value}
                else:
                    got = set(table[column].unique().tolist())
                    want = set(value) if isinstance(value, list) else {value}
                if got != want:
                    shown = (f"columns '{', '.join(column)}' hold" if isinstance(column, tuple)
                             else f"column '{column}' holds")
                    name = "seed" if setting == "seed" else f"{experiment.section}.{setting}"  # seed is top-level
                    errors.append(f"{results.dir / out.file}: {shown} {sorted(got)}, but the "
                                  f"config's {name} is {value!r}: these results come from "
                                  "another config (rerun `snakemake --cores 4`)")
    return errors
