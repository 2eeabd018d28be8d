"""The calibration study's checks table (studies.COLUMNS): one row per check of a run that reads a seeded table,
as dicts (as_rows, what run_batch returns) or as CSV text written straight from each row's cells (check_text,
what a batch job writes: the bytes sdpa_lab.tables.csv_text writes of the same rows, without making them).
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Iterable, Sequence

from sdpa_lab.calibration.studies import COLUMNS
from sdpa_lab.claims.exact_laws import law_text

# The float columns' positions in a row of cells (COLUMNS): a nan there is written as an empty cell, as pandas does.
_FLOATS = tuple(COLUMNS.index(c) for c in ("expected", "measured", "se", "tolerance", "k_check", "deviation", "z",
                                           "margin", "k"))


def check_cells(study: str, arm: str, run: tuple[int, int, int], seed: int, decision, seeded_files) -> list[tuple]:
    """One tuple of cells (in COLUMNS' order) per check of `decision` that reads a seeded table; `run` is
    (run, sweep, seed index). Its k and n_statistical are those of the claim whose share sets its k (its own; a
    derived check's, the claim whose check it repeats): nan and 0 for a check held to no standard error."""
    cells = []
    index, sweep, seed_index = run
    counts = Counter(c.claim for c in decision.checks if c.basis == "statistical")
    for c in decision.checks:
        if c.source not in seeded_files:
            continue
        # z for every check held to a standard error (statistical, and derived from one); its own k is
        # tolerance / SE: its claim's k, or wider on the side a known skewness stretches (Cornish-Fisher). Its margin
        # is the one it fails above 1 by, its relation's or, held to theory's value besides, that one's.
        with_se = math.isfinite(c.se) and c.se > 0
        z = c.deviation / c.se if with_se else math.nan
        k_check = c.tolerance / c.se if with_se else math.nan
        cells.append((study, arm, index, sweep, seed_index, seed, c.claim, c.check, c.parameters, c.relation, c.basis,
                      bool(c.literal), float(c.expected), float(c.measured), float(c.se), float(c.tolerance),
                      float(k_check), float(c.deviation), float(z), float(c.margin_toward_fail), c.verdict, float(c.k),
                      counts[c.of_claim or c.claim] if math.isfinite(c.k) else 0, law_text(c.law)))
    return cells


def as_rows(cells: Iterable[tuple]) -> list[dict]:
    """Rows of cells (check_cells) as dicts keyed by COLUMNS: the checks table's rows."""
    return [dict(zip(COLUMNS, row, strict=True)) for row in cells]


def _written(cells: tuple) -> list:
    """A row's cells as the csv module is to write them: a nan float as None (an empty cell)."""
    out = list(cells)
    for i in _FLOATS:
        if out[i] != out[i]:
            out[i] = None
    return out


def check_text(rows: Iterable[Sequence], header: bool = True) -> str:
    """Rows of cells (check_cells) as CSV text, with COLUMNS as the header unless `header` is false: the bytes
    tables.csv_text writes of the same rows as dicts. The csv module writes a str as it is (quoted where needed),
    an int, a bool and a float by str() (a float's shortest round-trip text, as pandas writes it) and None empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(COLUMNS)
    writer.writerows(map(_written, rows))
    return buffer.getvalue()
