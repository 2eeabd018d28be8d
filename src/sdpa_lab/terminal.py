"""Text laid out for the terminal it is printed to: its width, and lines wrapped to it without breaking a word or a
number. `sdpa-lab check` and `sdpa-lab grade` print through these, so the width is decided here only."""

from __future__ import annotations

import re
import shutil
import textwrap

# The width when the output is not a terminal (a pipe, a file, a test) and COLUMNS is not set.
NOT_A_TERMINAL = 80
NO_BREAK = "\u00a0"
# A number and the unit after it ("120 s", "4096 MiB", "0.8 SE") stay on one line.
UNIT = re.compile(r"(\d) (?=(?:s|ms|MiB|GiB|MB|GB|SE|SEs)\b)")


def columns() -> int:
    """The width to lay out for: COLUMNS if set, else the terminal's, else NOT_A_TERMINAL (shutil's order)."""
    return shutil.get_terminal_size((NOT_A_TERMINAL, 24)).columns


def wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """`text` in lines of at most `width` characters, broken only between words: a number written m × 10ⁿ stays
    whole, a hyphenated word too, and a word longer than the line stands alone on its line, unbroken. The first
    line starts with `indent`, the others with `subsequent` (default: `indent` and two spaces)."""
    subsequent = indent + "  " if subsequent is None else subsequent
    # textwrap breaks only at ASCII whitespace: a number's inner spaces (m × 10ⁿ, ± m) held unbreakable
    held = UNIT.sub(f"\\1{NO_BREAK}", text.replace(" × ", f"{NO_BREAK}×{NO_BREAK}").replace("± ", f"±{NO_BREAK}"))
    lines = textwrap.wrap(held, max(width, len(subsequent) + 1), initial_indent=indent, subsequent_indent=subsequent,
                          break_long_words=False, break_on_hyphens=False)
    return [line.replace(NO_BREAK, " ") for line in lines] or [""]


def fit(text: str, width: int | None = None) -> str:
    """`text` with each line wider than `width` (default: columns()) wrapped to it, its continuation lines indented
    two spaces more than it is, and its runs of spaces (a column's padding, which no longer aligns once wrapped)
    made one; lines that fit, and blank lines, as they are."""
    width = columns() if width is None else width
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        out += wrap(" ".join(line.split()), width, indent)
    return "\n".join(out)
