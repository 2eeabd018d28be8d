"""One formatter for every number on the report's pages (sdpa_lab.numbers.number), and a replication check shown
to the digit that decides it."""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab import claims as C
from sdpa_lab.claims.model import printed as printed_check
from sdpa_lab.numbers import margin, number
from sdpa_lab.report import html as H

from tests.report import test_html as T

decision, report_html, section = T.decision, T.report_html, T.section  # its fixtures, shared

SUPERSCRIPTS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
FIXED = re.compile(r"−?\d{1,3}(,\d{3})*(\.\d+)?")
POWER = re.compile(r"−?\d(\.\d+)? × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+")


def value(text: str) -> float:
    """A formatted number read back."""
    text = text.replace("−", "-").replace(",", "")
    if " × 10" in text:
        mantissa, power = text.split(" × 10")
        return float(f"{mantissa}e{power.translate(SUPERSCRIPTS)}")
    return float(text)


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30)


@given(finite, st.integers(1, 8))
def test_a_number_reads_back_to_its_significant_digits(x, digits):
    text = number(x, digits=digits)
    if x != 0 and not (x == int(x) and abs(x) < 1e15):  # exact integers are written whole
        assert math.isclose(value(text), x, rel_tol=0.51 * 10.0 ** (1 - digits))


@given(finite, st.integers(0, 6))
def test_one_notation_per_size(x, decimals):
    """Thousands separated, a power of ten below 0.001 and from 10^15 up, and never Python's 1e-05."""
    for text in (number(x), number(x, decimals=decimals), number(x, digits=3)):
        assert "e" not in text and "-" not in text
        small_or_large = x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e15)
        assert (POWER if small_or_large else FIXED).fullmatch(text), (x, text)


def test_the_issues_three_pairs_are_written_one_way():
    assert (number(1036.0), number(1027.36, digits=5)) == ("1,036", "1,027.4")
    assert (number(2.8e-05, digits=2), number(0.00019, digits=2)) == ("2.8 × 10⁻⁵", "1.9 × 10⁻⁴")
    assert (number(49.1, decimals=1, integers=False), number(57.76, decimals=1, integers=False)) == ("49.1", "57.8")
    assert number(0.0, decimals=4, integers=False) == "0.0000" and number(float("nan")) == "—"


def printed(measured: float, value: float, decimals: int) -> C.Check:
    return printed_check("A2", "raw score", "key=5", measured, value, decimals, "lesson_forward.csv")


def test_a_replication_check_shows_the_measured_value_two_digits_past_the_printed_one():
    """24.285110937 against the printed 24.29 reads 24.2851 (not 24.285, which looks like the edge); so in the
    terminal and on the page."""
    c = printed(24.285110937, 24.29, 2)
    assert C.describe(c, rule=False) == "raw score [key=5]: measured 24.2851 within 24.29 ± 0.005 (margin 0.98)"
    row = H.check_row(c)
    assert (row.measured, row.expected, row.tolerance) == ("24.2851", "24.29", "± 0.005")
    c = printed(0.291482, 0.291, 3)
    assert C.describe(c, rule=False) == "raw score [key=5]: measured 0.29148 within 0.291 ± 5 × 10⁻⁴ (margin 0.96)"


def test_every_replication_row_of_the_report_shows_the_extra_digits(decision, report_html):
    """Each printed check's measured value on the page has two decimals more than the lesson printed."""
    for c in decision.checks:
        if c.basis != "printed":
            continue
        row = H.check_row(c)
        printed_decimals = len(row.expected.partition(".")[2])
        shown = row.measured.partition(".")[2]
        assert "×" in row.measured or len(shown) == printed_decimals + 2, (c.check, row.measured, row.expected)
        assert f"<strong>{row.measured}</strong>" in section(report_html, c.claim)


def test_a_margin_is_written_to_the_digits_that_place_it_against_1():
    assert [margin(m) for m in (0.5, -1.684, 16.94, 2345.0, math.inf, math.nan)] == \
        ["0.50", "−1.68", "16.9", "2,345", "∞", "n/a"]


def test_the_terminal_writes_numbers_the_one_way_and_never_breaks_one_across_lines():
    """The checker's table: its lines are describe()'s (numbers.number's notation: no 1e-05, no hyphen-minus), and
    a power of ten wrapped at the column's edge stays whole on one line."""
    from sdpa_lab.claims import verdicts as V

    c = C.Check("B7", "gap", "d_k=4", "within", -1.5e-5, 2.2e-5, "statistical", "v.csv", tolerance=3.1e-5, se=6e-6)
    line = C.describe(c, rule=False)
    assert "e-0" not in line and "-" not in line.replace("d_k", "") and "2.20 × 10⁻⁵" in line
    layout = V.Layout.for_width(80, [C.HOLDS])
    for pad in range(80 - 2 * len(V.CHECK_INDENT)):  # every place the line may wrap at (a word that fits a line)
        rows = V.check_lines(layout, C.HOLDS, "x" * pad + " " + line)
        assert max(map(len, rows)) <= 80
        assert not any(r.endswith(("×", " 10", "±")) or r.lstrip().startswith(("×", "10⁻")) for r in rows), rows
        assert " ".join(r.strip() for r in rows).endswith(line)


def test_every_note_of_a_run_is_written_the_one_way_where_it_is_made(decision):
    """A check's note reaches claims.csv and the page as its claim wrote it: no Python 1.5e-06 in any (the notes
    are formatted where they are made, not rewritten after)."""
    python_float = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?e[-+]?\d+\b")
    notes = [c.note for c in decision.checks if c.note]
    assert any("Monte Carlo SE" in n for n in notes)  # the run has notes with small numbers in them
    assert not [n for n in notes if python_float.search(n)]
    assert any(POWER.search(n) for n in notes)  # ... written m × 10ⁿ


def test_a_few_numbers_are_listed_the_one_way_and_a_long_list_is_cut():
    from sdpa_lab.numbers import listed

    assert listed([1.0787, 0.014, 2.5704e-12, -3.0, math.nan]) == "[1.0787, 0.0140, 2.6 × 10⁻¹², −3, —]"
    assert listed(range(10), most=3) == "[0, 1, 2, … (10 numbers)]"


def test_a_signed_distance_carries_its_sign_and_an_unsigned_one_does_not():
    assert [number(z, decimals=1, integers=False, sign=True) for z in (1.04, -2.0, 0.0, math.nan)] == \
        ["+1.0", "−2.0", "0.0", "—"]
    assert number(1.04, decimals=1, integers=False) == "1.0"
