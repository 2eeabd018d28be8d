"""A claim's lead on the report: the claim's own measured numbers in a sentence, read from its decided checks.

Which checks a lead quotes is the claim's declaration (`Claim.lead`); how their numbers are said is here: a series
over one swept setting ("4.014, 16.02, … for d_k = 4, 16, …"), one number, one number at every point, or the range
over many points; beside it what it is held to, in words (the lesson's printed numbers, theory's values, a bound).
"""

from __future__ import annotations

from collections.abc import Sequence

from sdpa_lab.claims.model import NOT_MEASURED, Check, Claim
from sdpa_lab.claims.verdicts import expected_text, measured_unit
from sdpa_lab.numbers import at_unit

# A series longer than this is said by its range, not number by number.
LISTED = 6
# How a check's expected value reads beside its measured numbers, by its relation (model.RELATIONS).
HELD_TO = {"equals": "expected {}", "within": "expected {}", "not above": "bound {}", "not below": "bound {}",
           "above": "claimed above {}", "below": "claimed below {}"}


def lead_checks(claim: Claim, checks: Sequence[Check]) -> list[list[Check]]:
    """The checks a claim's lead quotes, grouped by name in the declaration's order (`Claim.lead`); the first
    check's group where the claim declares none, or none of its declared checks was made."""
    measured = [c for c in checks if c.verdict != NOT_MEASURED]
    groups = [[c for c in measured if c.check == name] for name in claim.lead]
    groups = [g for g in groups if g]
    if not groups and measured:
        groups = [[c for c in measured if c.check == measured[0].check]]
    return groups


def parameters(c: Check) -> dict[str, str]:
    """A check's sweep point as {setting: value} ("d_k=4, n=100000" -> {"d_k": "4", "n": "100000"}); a part
    without "=" is its own key and value."""
    out = {}
    for part in c.parameters.split(", "):
        key, _, value = part.partition("=")
        out[key] = value or key
    return out


def swept(group: Sequence[Check]) -> list[str]:
    """The settings whose value differs between the checks of a group, in the order the first check names them."""
    points = [parameters(c) for c in group]
    return [k for k in points[0] if len({p.get(k) for p in points}) > 1]


def held_to(group: Sequence[Check]) -> str:
    """What a group's numbers are held to, in words: the lesson's printed numbers, the expected values (one, or
    one per point), or the bound; "" where every check equals what it expects (the number says it)."""
    expected = [expected_text(c) for c in group]
    shown = expected[0] if len(set(expected)) == 1 else ", ".join(expected)
    first = group[0]
    if first.basis == "printed":
        return f"the lesson printed {shown}"
    if first.relation == "equals" and all(c.measured == c.expected for c in group):
        return ""
    if first.basis == "rounding":
        return "within floating-point rounding"
    if first.relation in ("within", "equals") and len(set(expected)) > 1:
        return f"expected {shown}"
    return HELD_TO[first.relation].format(shown)


def series(group: Sequence[Check]) -> str:
    """A group's measured numbers in words, each to its unit's digits: one number; the same number at every point;
    a series over the one setting swept; or, over many points, its range (its largest under an upper bound, its
    smallest under a lower one)."""
    first, n = group[0], len(group)
    values = [c.measured for c in group]
    texts = [format_measured(c) for c in group]
    keys = swept(group)
    if n == 1:
        said = texts[0]
    elif len(set(texts)) == 1:
        said = f"{texts[0]} at all {n} points"
    elif len(keys) == 1 and n <= LISTED:
        said = f"{', '.join(texts)} for {keys[0]} = {', '.join(parameters(c)[keys[0]] for c in group)}"
    elif first.relation == "not above":
        said = f"at most {format_measured(group[values.index(max(values))])} over {n} points"
    elif first.relation == "not below":
        said = f"at least {format_measured(group[values.index(min(values))])} over {n} points"
    else:
        low, high = group[values.index(min(values))], group[values.index(max(values))]
        said = f"from {format_measured(low)} to {format_measured(high)} over {n} points"
    held = held_to(group)
    return unbroken(f"{first.check}: {said}" + (f" ({held})" if held else ""))


def unbroken(text: str) -> str:
    """`text` with its numbers held whole where a line wraps: m × 10ⁿ and a step "4->16" never split."""
    return text.replace(" × ", "\u00a0×\u00a0").replace("->", "\u2011>")


def format_measured(c: Check) -> str:
    """A check's measured number to the digits its unit leaves (as its row in the checks table)."""
    return at_unit(c.measured, measured_unit(c))


def lead_sentence(claim: Claim, checks: Sequence[Check]) -> str:
    """What this run measured, as the claim's own numbers: its lead checks' series, in one sentence."""
    groups = lead_checks(claim, checks)
    if not groups:
        return "This run could not measure it (its checks below say why)." if checks else \
            "This run made no check of it."
    return f"This run measured {'; '.join(series(g) for g in groups)}."
