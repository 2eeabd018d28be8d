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


def _cell(value: Any) -> str:
    """A cell as pandas' to_csv writes it: shortest round-trip floats, NaN and None empty."""
    kind = _kind(value)
    if value is None or (kind == "float" and math.isnan(value)):
        return ""
    if kind == "bool":
        return str(bool(value))
    if kind == "int":
        return str(int(value))
    if kind == "float":
        return repr(float(value))
    return str(value)


def csv_text(rows: Sequence[dict[str, Any]]) -> str:
    """`rows` as CSV text with a header row and "\\n" line ends, as DataFrame.to_csv(index=False) writes them.

    Raises ValueError if the rows do not all have the same keys in the same order,
    or if a column mixes integers with floats (pandas would write those integers as floats).
    """
    if not rows:
        raise ValueError("no rows to write")
    columns = list(rows[0])
    for i, row in enumerate(rows):
        if list(row) != columns:
            raise ValueError(f"row {i} has columns {list(row)}, row 0 has {columns}")
    for column in columns:
        kinds = {_kind(row[column]) for row in rows if row[column] is not None}
        if {"float", "int"} <= kinds:
            raise ValueError(f"column {column!r} mixes integers and floats")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([_cell(row[c]) for c in columns] for row in rows)
    return buffer.getvalue()
