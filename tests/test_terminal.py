"""Text laid out for the terminal (sdpa_lab.terminal): the width, and wrapping that breaks no word or number."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab import terminal
from sdpa_lab.numbers import number

WORD = st.text(alphabet="abcdefghij-_|[]()=,", min_size=1, max_size=12)
NUMBER = st.floats(allow_nan=False, allow_infinity=False, width=64).map(lambda x: number(x, digits=3))
UNIT = st.sampled_from(["120 s", "4096 MiB", "± 0.03", "+0.8 SE"])


@given(st.lists(st.one_of(WORD, NUMBER, UNIT), min_size=1, max_size=40), st.integers(20, 140),
       st.sampled_from(["", "  ", "    "]))
def test_wrap_keeps_every_word_and_number_whole_within_the_width(tokens, width, indent):
    text = " ".join(tokens)
    lines = terminal.wrap(text, width, indent)
    longest = max(map(len, text.split()))  # a word longer than the line stands alone, unbroken
    assert all(len(line) <= max(width, len(indent) + 2 + longest) for line in lines)
    assert " ".join(line.strip() for line in lines) == text  # joined again: the text, so nothing was split
    assert lines[0].startswith(indent) and all(line.startswith(indent + "  ") for line in lines[1:])


def test_fit_wraps_only_the_lines_too_wide_and_collapses_their_padding():
    text = "short line\n\nsoftmax(x)" + " " * 70 + "pass\n    ok  a check whose words run past the width of the line"
    assert terminal.fit(text, 40).splitlines() == [
        "short line", "", "softmax(x) pass",
        "    ok a check whose words run past the", "      width of the line"]


def test_columns_follow_columns_then_the_terminal_then_80(monkeypatch):
    def not_a_terminal(fd=None):
        raise OSError("not a terminal")

    monkeypatch.setenv("COLUMNS", "57")
    assert terminal.columns() == 57
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(os, "get_terminal_size", not_a_terminal)
    assert terminal.columns() == 80
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=None: os.terminal_size((123, 40)))
    assert terminal.columns() == 123


def test_grade_fits_the_terminal_and_says_the_same_words_at_any_width(repo, capsys, monkeypatch):
    """`sdpa-lab grade` at 60 columns: no line wider, and word for word what it says on a wide terminal (the same
    seed: the same grade), so its wrapping broke nothing."""
    from sdpa_lab.cli import main

    def graded(columns: int) -> str:
        monkeypatch.setenv("COLUMNS", str(columns))
        main(["grade", str(repo / "examples" / "solutions" / "no_scale.py"), "--seed", "3", "--n-samples", "2000",
              "--isolation", "none"])
        return capsys.readouterr().out

    narrow, wide = graded(60), graded(1000)
    assert max(map(len, narrow.splitlines())) <= 60 < max(map(len, wide.splitlines()))
    assert narrow.split() == wide.split()
