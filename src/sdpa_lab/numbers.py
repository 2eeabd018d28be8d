"""The one way numbers are written, on the report's pages and in the terminal (number()), and the helpers that ask
it for a number to a unit's digits, a margin, or a short list. A leaf: the claims (their checks' lines and notes, made
where the numbers are), the grader's details and the reports all use it; nothing is rewritten after the fact.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
SMALL = 1e-3  # below this (and from LARGE up) a number is written with its power of ten
LARGE = 1e15


def number(x: float | None, digits: int | None = None, decimals: int | None = None, integers: bool = True,
           sign: bool = False) -> str:
    """Every number on the report's pages, one way: `digits` significant digits, or `decimals` fixed decimals;
    thousands separated by commas; below 0.001 or from 10^15 up, as m × 10ⁿ with the digits that carry meaning;
    true minus signs (and, with `sign`, a plus sign on a positive number: a signed distance), ∞ for infinities, —
    for none or not-a-number. An exact integer is written whole (with `integers`), whatever the digits asked."""
    text = _unsigned_or_minus(x, digits, decimals, integers)
    return "+" + text if sign and x is not None and x > 0 else text


def _unsigned_or_minus(x: float | None, digits: int | None, decimals: int | None, integers: bool) -> str:
    """number() before its plus sign."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if decimals is None and digits is None:
        digits = 6
    if integers and x == int(x) and abs(x) < LARGE:
        return f"{int(x):,}".replace("-", "−")
    if x == 0:
        return f"{0:.{decimals or 0}f}"
    e = math.floor(math.log10(abs(x)))
    if decimals is not None and e + 1 + decimals > 10:  # more digits than any measurement here carries
        decimals, digits = None, 6
    if abs(x) < SMALL or abs(x) >= LARGE:
        sig = digits if digits is not None else max(2, e + decimals + 1)
        mantissa, _, power = f"{x:.{sig - 1}e}".partition("e")
        if digits is not None and "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa} × 10{str(int(power)).translate(SUPERSCRIPT)}".replace("-", "−")
    if decimals is not None:
        return f"{x:,.{decimals}f}".replace("-", "−")
    text = f"{x:,.{max(0, digits - 1 - e)}f}"
    if "." in text:  # significant digits: trailing zeros carry none
        text = text.rstrip("0").rstrip(".")
    return text.replace("-", "−")


def num(x: float | None, digits: int = 6) -> str:
    """A number for a reader to `digits` significant digits (number())."""
    return number(x, digits=digits)


def at_unit(x: float | None, unit: float) -> str:
    """x to the digits that mean something next to `unit` (its standard error or tolerance): the unit's first two
    significant digits' decimals, an integer too (3.00 next to 0.1); 6 significant digits where there is no unit
    (number())."""
    if unit > 0 and math.isfinite(unit):
        return number(x, decimals=max(0, 1 - math.floor(math.log10(unit))), integers=False)
    return number(x, digits=6)


def margin(m: float) -> str:
    """A check's margin: two decimals (one from 10, three significant digits from 1000), so the line at 1 reads
    plainly; "n/a" where a check has none (nan), ∞ where it fails without a tolerance."""
    if math.isnan(m):
        return "n/a"
    if math.isinf(m) or abs(m) >= 1000:
        return number(m, digits=3)
    return number(m, decimals=2 if abs(m) < 10 else 1, integers=False)


def listed(values: Iterable[float], decimals: int = 4, most: int = 8) -> str:
    """A few numbers in brackets, each number()'s to `decimals` decimals (as the lesson prints its arrays); past
    `most`, the first ones and how many there are (a learner's wrong return can be a whole matrix)."""
    values = [float(v) for v in values]
    shown = ", ".join(number(v, decimals=decimals) for v in values[:most])
    return f"[{shown}]" if len(values) <= most else f"[{shown}, … ({number(len(values))} numbers)]"
