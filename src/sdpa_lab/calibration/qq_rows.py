"""The rows of checks.csv that the calibration report plots (report.qq_figure), read a chunk at a time.

checks.csv holds every check of every run (gigabytes for a large study); the report needs only the correct arm's
two-sided checks with a z, and only their config, claim, check, z and z's normal score, so it never holds the rest.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pandas.api.types import union_categoricals

from sdpa_lab.calibration.studies import CORRECT_ARM
from sdpa_lab.calibration.tails import normal_scores

# What the report plots of a check: its family, its z and its z's normal score (calibration.tails.normal_scores: z
# itself where the check names no exact law).
COLUMNS = ["config", "arm", "claim", "check", "relation", "z", "score"]
TEXT = ["config", "arm", "claim", "check", "relation"]  # few distinct values: held as categories
READ = [*COLUMNS[:-1], "law", "expected", "se"]  # of checks.csv: what the score is made from besides
CHUNK_ROWS = 500_000


def plotted(checks: pd.DataFrame) -> pd.DataFrame:
    """Of some checks (READ at least), the correct arm's two-sided ones ("within") with a z: COLUMNS, in order."""
    rows = checks[(checks.arm == CORRECT_ARM) & (checks.relation == "within") & checks.z.notna()]
    return rows.assign(score=normal_scores(rows))[COLUMNS]


def qq_rows(path: str | Path, chunk_rows: int = CHUNK_ROWS) -> pd.DataFrame:
    """The rows of checks.csv the report plots (plotted), in file order, the text columns as categories."""
    with pd.read_csv(path, usecols=READ, chunksize=chunk_rows,
                     dtype={**dict.fromkeys(TEXT, "category"), "law": str}) as chunks:
        return joined([plotted(chunk) for chunk in chunks])


def joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Parts of plotted rows one after the other, the text columns as categories (an empty table of COLUMNS if
    there are none)."""
    parts = [p.astype(dict.fromkeys(TEXT, "category")) for p in parts]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype="category" if c in TEXT else float) for c in COLUMNS})
    # categories differ between chunks: unite them, so the columns stay categorical when the parts are joined
    out = {c: union_categoricals([p[c] for p in parts]) if c in TEXT else pd.concat([p[c] for p in parts])
           for c in COLUMNS}
    return pd.DataFrame({c: pd.Series(v).reset_index(drop=True) for c, v in out.items()})
