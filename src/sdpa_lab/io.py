"""Writing result tables: deterministic bytes, atomic replacement."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:  # the Snakefile imports this module at parse time: no pandas (or numpy) import at run time
    import pandas as pd

    from sdpa_lab.tables import Rows


@contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file through which to write `path`: it appears under that name only once complete.

    A reader sees the old file or the whole new one, never half a file, even if the
    process is killed mid-write; if the body raises, the old file is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600: results must be readable like any other file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_csv(table: pd.DataFrame | Rows, path: str | os.PathLike) -> None:
    """Write `table` (a DataFrame, or rows: sdpa_lab.tables) to `path` as CSV, atomically.

    The bytes depend only on the table (shortest round-trip floats, "\\n"
    line ends; rows give the same bytes as their DataFrame).
    """
    from sdpa_lab.tables import csv_text  # imports numpy: not at the Snakefile's parse time

    # The whole text first: a table that cannot be written fails before any file is made.
    write_text(csv_text(table) if isinstance(table, list) else table.to_csv(index=False, lineterminator="\n"), path)


def write_bytes(data: bytes, path: str | os.PathLike) -> None:
    """Write `data` to `path` atomically (atomic_writer)."""
    with atomic_writer(path) as fh:
        fh.write(data)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write `text` to `path` as UTF-8, atomically."""
    write_bytes(text.encode("utf-8"), path)
