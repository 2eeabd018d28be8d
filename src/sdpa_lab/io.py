"""Writing result tables: deterministic bytes, atomic replacement."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd


def write_csv(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write `table` to `path` as CSV, atomically.

    The bytes depend only on the table (shortest round-trip floats, "\\n"
    line ends); the file appears under its name only once complete, so a
    reader never sees half a CSV, even if the process is killed mid-write.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            table.to_csv(fh, index=False, lineterminator="\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
