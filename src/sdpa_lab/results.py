"""Reading the result CSVs back, strictly: a missing file, a missing column, a
value of the wrong type or a nan/inf where a number is needed is an error that
names the file and the column.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd


class ResultsError(ValueError):
    """A result CSV that is missing, malformed, or does not match the config."""


# file -> {column: kind}; kind is "int", "float" (finite), "num" (nan allowed) or "str".
COLUMNS: dict[str, dict[str, str]] = {
    "lesson_variance.csv": {"d_k": "int", "n_samples": "int", "quantity": "str", "value": "float"},
    "lesson_softmax_collapse.csv": {"d_k": "int", "T": "int", "quantity": "str", "key": "num", "value": "float"},
    "lesson_forward.csv": {"B": "int", "T": "int", "d_k": "int", "quantity": "str", "row": "num", "col": "num",
                           "value": "float"},
    "variance.csv": {"seed": "int", "d_k": "int", "n_pairs": "int", "scale": "str", "statistic": "str",
                     "value": "float"},
    "entropy_sweep.csv": {"seed": "int", "d_k": "int", "T": "int", "trials": "int", "scale": "str",
                          "quantity": "str", "statistic": "str", "value": "float"},
    "entropy_single_draw.csv": {"d_k": "int", "T": "int", "scale": "str", "entropy": "float"},
    "ranking_invariance.csv": {"seed": "int", "d_k": "int", "T": "int", "trials": "int", "dtype": "str",
                               "quantity": "str", "count": "int", "fraction": "float"},
    "forward_shape.csv": {"seed": "int", "B": "int", "T": "int", "d_k": "int", "dtype": "str", "quantity": "str",
                          "value": "float"},
    "gradient.csv": {"seed": "int", "d_k": "int", "T": "int", "trials": "int", "scale": "str", "quantity": "str",
                     "statistic": "str", "value": "float"},
    "learning.csv": {"seed": "int", "d_k": "int", "T": "int", "runs": "int", "steps": "int",
                     "loss_threshold": "float", "scale": "str", "lr": "float", "best_lr": "int",
                     "statistic": "str", "value": "float"},
    "learning_curves.csv": {"seed": "int", "d_k": "int", "T": "int", "runs": "int", "scale": "str", "lr": "float",
                            "step": "int", "mean_relative_loss": "float"},
}


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
    finite = np.isfinite(values.to_numpy(dtype=float))
    if not finite.all():
        row = int((~finite).argmax())
        raise ResultsError(f"{where}: {series.iloc[row]!r} in row {row + 2} is not a finite number")
    if kind == "int":
        if not np.all(values == np.round(values)):
            row = int((values != np.round(values)).to_numpy().argmax())
            raise ResultsError(f"{where}: {series.iloc[row]!r} in row {row + 2} is not an integer")
        return values.astype(np.int64)
    return values.astype(float)


def read_table(results_dir: str | Path, name: str, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One result CSV, with each declared column checked and typed."""
    path = Path(results_dir) / name
    columns = COLUMNS.get(name, {}) if columns is None else columns
    if not path.is_file():
        raise ResultsError(f"{path}: missing (run `snakemake --cores 4` to regenerate results)")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
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

    def __new__(cls, value: float, cell: tuple) -> "Measured":
        obj = super().__new__(cls, value)
        obj.cell = cell
        return obj


class Results:
    """The result CSVs of one run, read on first use."""

    def __init__(self, results_dir: str | Path, tables: Mapping[str, pd.DataFrame] | None = None):
        self.dir = Path(results_dir)
        self._tables: dict[str, pd.DataFrame] = dict(tables or {})
        self._arrays: dict[tuple[str, str], np.ndarray] = {}  # (file, column) -> its values, for `value`

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._tables:
            self._tables[name] = read_table(self.dir, name)
        return self._tables[name]

    def value(self, name: str, column: str = "value", **where) -> Measured:
        """The single value of `column` in the row of `name` matching `where`."""
        table = self[name]
        mask = np.ones(len(table), dtype=bool)
        for col, val in where.items():
            mask &= self._array(name, col) == val
        hits = self._array(name, column)[mask]
        if len(hits) != 1:
            cond = ", ".join(f"{k}={v!r}" for k, v in where.items())
            raise ResultsError(f"{self.dir / name}: expected one row with {cond}, found {len(hits)}")
        return Measured(float(hits[0]), (name, tuple(where.items()), column))

    def _array(self, name: str, column: str) -> np.ndarray:
        """Column `column` of `name` as a NumPy array, kept: the claims look up hundreds of single cells."""
        if (name, column) not in self._arrays:
            table = self[name]
            if column not in table.columns:
                raise ResultsError(f"{self.dir / name}: column '{column}' is missing")
            self._arrays[name, column] = table[column].to_numpy()
        return self._arrays[name, column]


def stale_errors(results: Results, config: Mapping) -> list[str]:
    """Where the parameters recorded in the CSVs differ from `config` (results from another config)."""
    errors = []
    for name, section in (("variance.csv", "variance"), ("entropy_sweep.csv", "entropy_sweep"),
                          ("ranking_invariance.csv", "ranking_invariance"), ("forward_shape.csv", "forward_shape"),
                          ("gradient.csv", "gradient"), ("learning.csv", "learning")):
        if section not in config or not (results.dir / name).exists():
            continue
        t = results[name]
        expected = {"seed": config["seed"], **config[section]}
        for key, value in expected.items():
            if key == "shapes":
                got = {tuple(r) for r in t[["B", "T", "d_k"]].drop_duplicates().to_numpy().tolist()}
                want = {tuple(s) for s in value}
            elif key not in t.columns:
                continue
            elif isinstance(value, list):
                got, want = set(t[key].unique().tolist()), set(value)
            else:
                got, want = set(t[key].unique().tolist()), {value}
            if got != want:
                errors.append(f"{results.dir / name}: column '{key}' holds {sorted(got)}, but the config's "
                              f"{section}.{key} is {value!r}: these results come from another config "
                              "(rerun `snakemake --cores 4`)")
    return errors

