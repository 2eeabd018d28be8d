"""Reading a submission's bytes without following a link (light: the Snakefile's parse uses it)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from sdpa_lab.grading.learner_text import file_name

# bytes of a submission read at most (a notebook with its plots is a few MB): a larger file is refused before it is
# held in memory
MAX_FILE_BYTES = 32 * 2**20


def read_bytes(path: str | os.PathLike, follow_links: bool = True) -> bytes:
    """A file's bytes; follow_links=False: never through a symbolic link (O_NOFOLLOW: a link put in its place after
    it was listed too), and only from a regular file with one name (no hard link: another name of a file that may lie
    outside the folder); ValueError otherwise, naming neither target nor content. Either way at most MAX_FILE_BYTES
    (ValueError past it)."""
    path = Path(path)
    if follow_links:
        with path.open("rb") as f:
            return _capped(f, path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # O_NONBLOCK: a FIFO does not hang the open
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{file_name(path)} is a symbolic link: not read") from None
        raise
    with os.fdopen(fd, "rb") as f:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f"{file_name(path)} is not a regular file: not read")
        if status.st_nlink > 1:  # checked on the file opened: a link made after it was listed is caught too
            raise ValueError(f"{file_name(path)} is a hard link (a file with {status.st_nlink} names): not read")
        return _capped(f, path)


def _capped(f, path: Path) -> bytes:
    data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{file_name(path)} is larger than {MAX_FILE_BYTES // 2**20} MiB: not read (a lesson's "
                         "solutions are a few kB)")
    return data


def digest(path: str | os.PathLike) -> str:
    """The sha256 of a regular file's bytes, never through a link ("" for a link or anything unreadable)."""
    try:
        return hashlib.sha256(read_bytes(path, follow_links=False)).hexdigest()
    except (OSError, ValueError):
        return ""
