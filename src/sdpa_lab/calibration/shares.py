"""A calibration batch's share of the tables, made by its own job (rule calibration_batch), merged by the tables job.

A batch job writes, beside its CSV, what calibration.batched.batch_share computes from that CSV (read back as the
tables job would read it: the same code and the same parsed floats): its runs, its failing rows, its z moments and
counts, and the rows the report plots. The tables job then merges the shares (batched.merge_shares) instead of
reading every batch again, and the report reads the plotted rows from them instead of from checks.csv.

The file is JSON (Python's json: a float's shortest round-trip text, so every value reads back to the bit, nan and
inf as json writes them), one table per part: its columns, their dtypes and their values (a text column as its
distinct values and a code per row). It names the batch's size in bytes, so that a share is never merged with a
batch it was not made from, and the batch's first run, its place in checks.csv.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sdpa_lab.calibration.batched import batch_share, checks_key, read_batch
from sdpa_lab.io import write_text

FORMAT = 2  # of the file: a share of another format is refused, not misread


def encode(frame: pd.DataFrame) -> dict:
    """A table as JSON-ready columns: names, dtypes and values (numpy's as Python's: the same numbers); a text
    column as its distinct values and each row's code (-1: missing), since few values repeat over many rows."""
    return {"columns": [str(c) for c in frame.columns], "dtypes": [str(d) for d in frame.dtypes],
            "values": [_values(frame[c]) for c in frame.columns]}


def _values(column: pd.Series):
    if isinstance(column.dtype, pd.CategoricalDtype):
        levels = column.cat.categories
        return {"levels": levels.tolist(), "levels_dtype": str(levels.dtype), "codes": column.cat.codes.tolist()}
    if column.dtype.kind in "biuf":
        return column.tolist()
    codes, levels = pd.factorize(column, use_na_sentinel=True)
    return {"levels": list(levels), "codes": codes.tolist()}


def decode(part: dict) -> pd.DataFrame:
    """The table `encode` gave: the same columns, dtypes and values, a RangeIndex."""
    columns = {name: _column(values, dtype, name)
               for name, dtype, values in zip(part["columns"], part["dtypes"], part["values"], strict=True)}
    return pd.DataFrame(columns, columns=part["columns"])


def _column(values, dtype: str, name: str) -> pd.Series:
    if dtype == "category":  # the report's rows: their codes are the column
        levels = pd.Index(values["levels"], dtype=_dtype(values["levels_dtype"]))
        return pd.Series(pd.Categorical.from_codes(values["codes"], categories=levels), name=name)
    return pd.Series(_unpacked(values), dtype=_dtype(dtype), name=name)


def _unpacked(values):
    if not isinstance(values, dict):
        return values
    levels = np.array([*values["levels"], np.nan], dtype=object)  # code -1: the last, missing
    return levels[np.asarray(values["codes"], dtype=np.int64)]


def _dtype(name: str):
    """A dtype from its name as str(dtype) gives it (pandas' string dtype "str" included)."""
    return object if name == "object" else pd.api.types.pandas_dtype(name)


def share_text(batch: str | Path) -> str:
    """The share of batch CSV `batch` (batched.batch_share of read_batch's columns) as the JSON text write_share
    writes, with its first run's (config, arm, run): where it comes in checks.csv (batched.batch_order)."""
    batch = str(batch)
    c = read_batch(batch)
    parts = {name: encode(t) for name, t in batch_share(batch, c).items()}
    first = [str(c.config.iloc[0]), str(c.arm.iloc[0]), int(c.run.iloc[0])]
    return json.dumps({"format": FORMAT, "batch_bytes": os.path.getsize(batch), "first": first, "parts": parts},
                      separators=(",", ":")) + "\n"


def write_share(batch: str | Path, out: str | Path) -> None:
    """Write the share of batch CSV `batch` to `out` (what a batch job does once its CSV is written)."""
    write_text(share_text(batch), out)


def _load(path: str | Path, batch: str | Path | None = None) -> dict:
    """The JSON of a share, checked: ValueError if it is not one, or (given `batch`, its CSV) was made from another
    batch."""
    with open(path, encoding="utf-8") as fh:
        share = json.load(fh)
    if not isinstance(share, dict) or share.get("format") != FORMAT:
        raise ValueError(f"calibration share {path}: not a share of format {FORMAT} (make its batch again)")
    if batch is not None and share["batch_bytes"] != os.path.getsize(batch):
        raise ValueError(f"calibration share {path}: not made from {batch} (its size differs; make the batch again)")
    return share


def read_share(path: str | Path, batch: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """Every part of the share write_share wrote (checked as _load checks it)."""
    return {name: decode(part) for name, part in _load(path, batch)["parts"].items()}


def paired_shares(ordered: Sequence[str], batches: Sequence[str], shares: Sequence[str]
                  ) -> Iterator[tuple[str, dict[str, pd.DataFrame]]]:
    """(batch, its share) for each batch of `ordered` (batched.batch_order of `batches`), each share the one at its
    batch's position in `shares`, read one at a time."""
    if len(batches) != len(shares):
        raise ValueError(f"{len(batches)} calibration batches but {len(shares)} shares")
    of = dict(zip(map(str, batches), map(str, shares), strict=True))
    for batch in ordered:
        yield batch, read_share(of[batch], batch)


def plotted_rows(shares: Sequence[str]) -> pd.DataFrame:
    """The rows the report plots (qq_rows.plotted) from the batches' shares, in checks.csv's order (the batches'
    (config, arm, first run): batched.checks_key, as batched.batch_order orders them): the rows qq_rows reads of
    checks.csv."""
    from sdpa_lab.calibration.qq_rows import joined

    keyed = []
    for path in shares:  # of each share only its plotted rows decoded
        share = _load(path)
        keyed.append((checks_key(*share["first"]), decode(share["parts"]["qq"])))
    return joined([qq for _, qq in sorted(keyed, key=lambda k: k[0])])
