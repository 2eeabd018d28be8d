"""Result tables as lists of rows: what the experiments compute and the jobs write, without pandas.

An experiment job only writes its rows as CSV, so the experiments build `Rows`
(one dict per measured quantity, the same keys in the same order in every row)
and `csv_text` writes them with the bytes pandas' to_csv would write; the
claims read the CSVs back with pandas (sdpa_lab.results).
"""

from __future__ import annotations

import csv
import io
import math
import numbers
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

Rows = list[dict[str, Any]]


def _kind(value: Any) -> str:
    """"bool", "int", "float" or "other": how a cell is written."""
    return _kind_of_type(type(value))


@cache  # a table has a handful of types and hundreds of thousands of cells; the ABC checks are slow
def _kind_of_type(cls: type) -> str:
    if issubclass(cls, (bool, np.bool_)):
        return "bool"
    if issubclass(cls, numbers.Integral):
        return "int"
    if issubclass(cls, numbers.Real):
        return "float"
    return "other"


# How pandas' to_csv writes a cell of each kind (_kind): shortest round-trip floats, NaN and None empty.
_WRITE = {
    "bool": lambda value: str(bool(value)),
    "int": lambda value: str(int(value)),
    "float": lambda value: "" if math.isnan(value) else repr(float(value)),
    "other": lambda value: "" if value is None else str(value),
}


def _column_cells(name: str, values: list) -> list[str]:
    """A column's cells as pandas' to_csv writes them; ValueError if it mixes integers with floats."""
    kinds = {_kind_of_type(cls) for cls in set(map(type, values))}  # None is "other"
    if {"float", "int"} <= kinds:
        raise ValueError(f"column {name!r} mixes integers and floats")
    if len(kinds) == 1:  # the usual column: one kind, one way to write every cell
        return list(map(_WRITE[kinds.pop()], values))
    return [_WRITE[_kind(value)](value) for value in values]


def csv_text(rows: Sequence[dict[str, Any]], header: bool = True) -> str:
    """`rows` as CSV text with a header row (unless `header` is false: rows to append to a table of the same
    columns) and "\\n" line ends, as DataFrame.to_csv(index=False) writes them.

    Raises ValueError if the rows do not all have the same keys in the same order,
    or if a column mixes integers with floats (pandas would write those integers as floats).
    """
    if not rows:
        raise ValueError("no rows to write")
    columns = list(rows[0])
    for i, row in enumerate(rows):
        if list(row) != columns:
            raise ValueError(f"row {i} has columns {list(row)}, row 0 has {columns}")
    cells = [_column_cells(column, [row[column] for row in rows]) for column in columns]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(columns)
    writer.writerows(zip(*cells, strict=True))
    return buffer.getvalue()
