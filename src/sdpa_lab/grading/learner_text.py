"""Text a learner controls, as the grader takes it in: every control character escaped, its length capped.

A learner's file name, the messages and tracebacks their code raises, the lines of their code the grader quotes, the
arrays they return: any of it may hold ESC or BEL (a terminal escape that rewrites the instructor's screen or title),
a carriage return (which overwrites a line), a right-to-left override (which reorders what is read), or megabytes.
Each is made safe once, where it enters the grader (`shown`, `file_name`, `array_text`), so the terminal, the CSVs,
the JSON records and the pages all receive it already escaped and cut: a character that is not printable is written
as Python escapes it (ESC as \\x1b, U+202E as \\u202e), newlines kept in a message (not in a name), and a text longer
than its cap keeps its beginning and its end (a traceback's error is at its end), the middle replaced by a marked cut.
Light: the Snakefile's parse reads names through it.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_TEXT = 4000  # characters of a message, a traceback or a quoted line kept
MAX_NAME = 200  # characters of a file name kept
MAX_ELEMENTS = 64  # numbers of a returned array written out (a larger array is described by its shape)


def _escaped(text: str, one_line: bool) -> str:
    """`text` with each character that is not printable written as Python escapes it (but newlines and tabs)."""
    kept = "" if one_line else "\n\t"
    return "".join(c if c.isprintable() or c in kept else c.encode("unicode_escape", "backslashreplace").decode()
                   for c in text)


def shown(text: str, limit: int = MAX_TEXT, one_line: bool = False) -> str:
    """`text` safe to print anywhere: characters that are not printable escaped (newlines and tabs kept, unless
    `one_line`), and at most `limit` of its characters kept, its beginning and its end, the cut marked with its size
    (cut before escaping: the work is bounded by the limit, whatever the text's length)."""
    text = str(text)
    if len(text) <= limit:
        return _escaped(text, one_line)
    head, tail = text[:limit // 2], text[len(text) - (limit - limit // 2):]
    return f"{_escaped(head, one_line)} [... {len(text) - limit:,} characters cut ...] {_escaped(tail, one_line)}"


def file_name(path: str | os.PathLike) -> str:
    """A file's name as the grader shows it: its text (bytes that are not UTF-8 replaced by U+FFFD), on one line,
    escaped and capped."""
    return shown(os.fsencode(Path(path).name).decode("utf-8", "replace"), MAX_NAME, one_line=True)


def array_text(a) -> str:
    """A returned array as the grade writes it: its numbers when it holds few, else its shape and type."""
    import numpy as np

    a = np.asarray(a)
    if a.size <= MAX_ELEMENTS and a.ndim <= 2:
        return shown(np.array2string(a, threshold=MAX_ELEMENTS))
    return f"an array of shape ({', '.join(str(n) for n in a.shape)}) of {a.dtype}"
