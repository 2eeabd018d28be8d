"""CSV for spreadsheets: every CSV of a class that an instructor may open in a spreadsheet is written here.

A cell that starts with =, +, -, @, a tab or a carriage return is a formula to a spreadsheet
(OWASP, "CSV Injection": https://owasp.org/www-community/attacks/CSV_Injection), and text in
these files comes from learners (an error's message, a check's detail). As OWASP advises,
such a text cell is prefixed with a single quote, and every text cell is quoted (its double
quotes doubled), so a separator or quote inside it cannot start a new cell. Numbers stay
numbers (unquoted): a negative number is not a formula, and an LMS reads them as scores.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """A cell as a spreadsheet must see it: a finite int or float as it is, None as an empty cell, anything else as
    text, prefixed with ' where it would start a formula."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) or isinstance(value, float) and math.isfinite(value):
        return value
    if value is None:
        return ""
    text = str(value)
    # A lone "-" is no formula, and an LMS writes it for "never" (Moodle's worksheet): kept as it is.
    return "'" + text if text.startswith(FORMULA_START) and text != "-" else text


def spreadsheet_csv(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    """`rows` as CSV text under a header of `columns` (escaped too): text cells quoted and made safe, numbers not
    quoted, "\\n" line ends (ValueError if a row's keys are not `columns`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    writer.writerow([safe_cell(str(c)) for c in columns])
    for i, row in enumerate(rows):
        if list(row) != list(columns):
            raise ValueError(f"row {i} has columns {list(row)}, not {list(columns)}")
        writer.writerow([safe_cell(row[c]) for c in columns])
    return buffer.getvalue()


def write_spreadsheet_csv(rows: Sequence[Mapping], columns: Sequence[str], path: str | os.PathLike) -> None:
    """spreadsheet_csv(rows, columns) written to `path` atomically."""
    from sdpa_lab.io import write_text

    write_text(spreadsheet_csv(rows, columns), path)
