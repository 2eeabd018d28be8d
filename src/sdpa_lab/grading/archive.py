"""A .zip handed in as a submission: the one notebook or .py it holds, read safely.

A learner's zip is untrusted. It is read whole from a regular file (never through a link)
within MAX_ARCHIVE_BYTES, its central directory within MAX_ENTRIES, and only the one
graded member is ever decompressed, within MAX_MEMBER_BYTES whatever its header claims
(a zip bomb stops there). No entry's name is ever used as a path: the member is written
under a fixed name in a folder of the grader's own, so `../` or an absolute name cannot
place a file anywhere; such names make the archive refused, as does an encrypted member.
Entries an archiver adds (`__MACOSX/`, `.DS_Store`, `.ipynb_checkpoints/`, `__pycache__/`)
are ignored. Parse-time light: zipfile only.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path, PurePosixPath

from sdpa_lab.grading.files import read_bytes

MAX_ARCHIVE_BYTES = 50 * 2**20
MAX_ENTRIES = 2000
MAX_MEMBER_BYTES = 20 * 2**20  # a lesson's notebook with its plots is a few MB
GRADED_SUFFIXES = (".py", ".ipynb")
IGNORED_FOLDERS = ("__MACOSX", ".ipynb_checkpoints", "__pycache__")


class ArchiveError(ValueError):
    """A zip that cannot be graded; the message says why in one line (for the overview)."""


def _open(path: str | os.PathLike) -> zipfile.ZipFile:
    try:
        too_large = os.lstat(path).st_size > MAX_ARCHIVE_BYTES  # before reading it; again below, on what was read
        raw = b"" if too_large else read_bytes(path, follow_links=False)
    except (OSError, ValueError) as exc:
        raise ArchiveError(f"the zip cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if too_large or len(raw) > MAX_ARCHIVE_BYTES:
        raise ArchiveError(f"the zip is more than {MAX_ARCHIVE_BYTES // 2**20} MiB")
    try:
        return zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArchiveError(f"not a readable zip ({exc})") from None


def _ignored(name: PurePosixPath) -> bool:
    return any(part in IGNORED_FOLDERS for part in name.parts[:-1]) or name.name.startswith(".")


def graded_member(path: str | os.PathLike) -> str:
    """The name of the one .py or .ipynb in the zip (ArchiveError naming why there is not exactly one, or why the
    zip is refused: too large, too many entries, an entry's name that climbs out or is absolute, encryption)."""
    with _open(path) as z:
        infos = z.infolist()
        if len(infos) > MAX_ENTRIES:
            raise ArchiveError(f"the zip holds {len(infos)} entries, more than {MAX_ENTRIES}")
        found = []
        for info in infos:
            name = PurePosixPath(info.filename.replace("\\", "/"))
            if name.is_absolute() or ".." in name.parts or ":" in info.filename:
                raise ArchiveError(f"an entry's name ({info.filename!r}) points outside the zip: refused unread")
            if info.is_dir() or _ignored(name) or name.suffix not in GRADED_SUFFIXES:
                continue
            if info.flag_bits & 0x1:
                raise ArchiveError(f"{info.filename} is encrypted in the zip")
            found.append(info.filename)
    if len(found) != 1:
        which = f": {', '.join(found[:4])}{', ...' if len(found) > 4 else ''}" if found else ""
        raise ArchiveError(f"the zip holds {len(found)} .py or .ipynb files{which}, and one is graded: hand in one")
    return found[0]


def extract_member(path: str | os.PathLike, member: str, folder: str | os.PathLike) -> Path:
    """The zip's `member` written to `folder` as `submission.py` or `submission.ipynb` (the member's own name is
    never a path); ArchiveError when it decompresses to more than MAX_MEMBER_BYTES or is corrupt."""
    with _open(path) as z:
        try:
            with z.open(member) as f:
                data = f.read(MAX_MEMBER_BYTES + 1)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, KeyError) as exc:
            raise ArchiveError(f"{member} cannot be decompressed ({exc})") from None
    if len(data) > MAX_MEMBER_BYTES:
        raise ArchiveError(f"{member} decompresses to more than {MAX_MEMBER_BYTES // 2**20} MiB")
    out = Path(folder) / ("submission" + PurePosixPath(member).suffix)
    out.write_bytes(data)
    return out
