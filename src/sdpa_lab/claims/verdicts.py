"""How verdicts are shown: one check in a line, a claim's verdict from its checks, and the checker's summary
table. `sdpa-lab check` and the report both use these.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from sdpa_lab.claims.model import (
    CONDITION_NOT_MET,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_HERE,
    NOT_MEASURED,
    NOT_PER_DRAW,
    Check,
    Decision,
)
from sdpa_lab.claims.registry import registry
from sdpa_lab.numbers import at_unit, margin, number


def unit_of(c: Check) -> float:
    """The size below which a check's numbers carry no meaning: its standard error (statistical), one unit of
    the last digit the lesson printed (printed), else its tolerance (a rounding bound); 0 for an exact check."""
    if c.basis in ("statistical", "derived") and c.se > 0:
        return c.se
    if c.basis == "printed":
        return 2 * c.tolerance
    return c.tolerance


def measured_unit(c: Check) -> float:
    """The unit a check's measured value is shown to: a replication (printed) check's one digit past the digit its
    tolerance is in (two past the lesson's printed digit: 24.2851 within 24.29 ± 0.005, so a reader sees why it
    holds); else unit_of."""
    return c.tolerance / 5 if c.basis == "printed" and c.tolerance > 0 else unit_of(c)


def expected_text(c: Check) -> str:
    """The expected value: as the lesson printed it for a printed check (its own digits), an exact integer whole
    (0, 1, d_k), else to the digits its unit leaves (at_unit)."""
    if c.basis == "printed" and c.tolerance > 0:
        return number(c.expected, decimals=max(0, round(-math.log10(2 * c.tolerance))), integers=False)
    return value_text(c, c.expected)


def value_text(c: Check, value: float) -> str:
    """A value a check is compared with: an exact integer whole (0, 1, d_k), else to the digits its unit leaves."""
    if math.isfinite(value) and value == int(value):
        return number(value)
    return at_unit(value, unit_of(c))


# A literal single-draw check's margin is how far single draws fall short of the lesson's every-draw statement:
# never a failure (its verdict is NOT_PER_DRAW), so its line says so where "above 1 it fails" would mislead.
MARGIN_KIND = "; a per-draw shortfall, not a failure"


def describe(c: Check, rule: bool = True) -> str:
    """One check in a line, the same in the terminal and on the report: measured vs expected, tolerance, margin
    (and, with `rule`, that 1 is the failing line), each number to the digits its standard error or tolerance
    leaves meaningful (a replication check's measured value one digit past its tolerance's), written by
    sdpa_lab.numbers."""
    if c.verdict == NOT_MEASURED:
        return f"{c.check} [{c.parameters}]: not measured ({c.note})"
    tol = f" ± {number(c.tolerance, digits=2)}" if c.tolerance > 0 else ""
    line = (f"{c.check} [{c.parameters}]: measured {at_unit(c.measured, measured_unit(c))} {c.relation} "
            f"{expected_text(c)}{tol} (margin {margin(c.margin)}{MARGIN_KIND if c.literal else ''}"
            f"{'; fails above 1' if rule and not c.literal else ''}"
            f"{f'; {UNDECIDED_WHY[c.undecided]}' if c.undecided else ''}{held_to_theory(c)})")
    return f"{line}: {departure(c)}" if c.verdict == FAILS and (c.undecided or c.departs_from_theory) else line


def held_to_theory(c: Check) -> str:
    """For a check held to a theory value besides its relation (Check.theory), that value, its tolerance and how far
    the measurement is from it, in that tolerance; "" for any other."""
    if not math.isfinite(c.theory_margin):
        return ""
    return (f"; held to theory's {value_text(c, c.theory)} ± {number(c.theory_tolerance, digits=2)} too, margin "
            f"{margin(c.theory_margin)}")


# Why a check held to theory's value leaves the lesson's sentence undecided, by the verdict it then shows.
UNDECIDED_WHY = {CONDITION_NOT_MET: "the lesson's premise does not hold here: held to theory's value",
                 INCONCLUSIVE: "theory's sign is unclear here: held to theory's value",
                 NOT_HERE: "theory says the lesson's sentence is false here: held to theory's value"}


def departure(c: Check) -> str:
    """Why a check held to theory's value fails, in words: the measurement, theory's value and its tolerance, and
    how many tolerances apart ("measured -0.93 where theory expects 0.0003 ± 0.062, 15 tolerances off")."""
    theory, tolerance = (c.theory, c.theory_tolerance) if c.departs_from_theory else (c.expected, c.tolerance)
    apart = abs(c.measured - theory) / tolerance if tolerance > 0 else math.inf
    return (f"the measurement departs from theory: measured {at_unit(c.measured, measured_unit(c))} where theory "
            f"expects {value_text(c, theory)} ± {number(tolerance, digits=2)}, {margin(apart)} tolerances off")


def closeness(c: Check) -> float:
    """How close a check came to no longer holding, for picking the one to show: minus its distance to that
    line, in margins (a check fails above margin 1; a claimed rise or fall stops holding above -1)."""
    if c.verdict in (FAILS, NOT_PER_DRAW, INCONCLUSIVE, NOT_HERE):
        return math.inf
    if c.tolerance == 0 or c.verdict == CONDITION_NOT_MET:
        return -math.inf
    # held to theory besides: it stops holding at whichever line it is nearer
    return max(c.margin - (-1.0 if c.relation in ("above", "below") else 1.0), c.theory_margin - 1.0)


def why_not_here(checks: Sequence[Check]) -> str:
    """Where, and why, a claim's lesson sentence does not hold at this config, in words, from its checks: each check
    where theory says the sentence is false (its point, measured and theory's value) and the sentence it decides;
    "" if there is none."""
    here = [c for c in checks if c.verdict == NOT_HERE]
    if not here:
        return ""
    points = "; ".join(f"{c.check} [{c.parameters}]: measured {at_unit(c.measured, unit_of(c))}, theory "
                       f"{at_unit(c.expected, unit_of(c))}" for c in here)
    claims = registry()
    sentences = sorted({claims[c.claim].sentences.get(c.check, "") for c in here if c.claim in claims} - {""})
    quoted = " and ".join(f"“{s}”" for s in sentences)
    held = sum(c.verdict == HOLDS for c in checks)
    which = f"sentences {quoted} are" if len(sentences) > 1 else f"sentence {quoted} is"
    return (f"At this config theory says the lesson's {which} false at {len(here)} point"
            f"{'s' if len(here) > 1 else ''}, and the measurements agree with theory ({points}): the lesson's claim "
            "does not hold here, as theory predicts. This is what the sentence does at this config, not a failure "
            f"of the pipeline (a measurement departing from theory's value there would fail); {held} of the "
            f"claim's {len(checks)} checks hold.")


def why_condition_not_met(checks: Sequence[Check]) -> str:
    """Where a claim's lesson sentence does not speak at this config (its premise does not hold), in words: each such
    point and its theory; "" if there is none."""
    out = [c for c in checks if c.verdict == CONDITION_NOT_MET]
    if not out:
        return ""
    points = "; ".join(f"{c.check} [{c.parameters}]" for c in out)
    return (f"At {len(out)} point{'s' if len(out) > 1 else ''} the lesson's premise does not hold ({points}): "
            f"{out[0].note}. The lesson's sentence does not speak there, so those points count neither for nor "
            "against the claim; their measurements agree with theory's values (one departing from them would fail).")


def shown_first(checks: Sequence[Check]) -> Check:
    """The check to show for a claim: the closest to no longer holding among those whose verdict is the claim's
    (an inconclusive claim shows an inconclusive check, not one that does not hold here as theory predicts)."""
    verdict = claim_verdict(checks)
    return max(checks, key=lambda c: (c.verdict == verdict, closeness(c)))


def claim_verdict(checks: Sequence[Check]) -> str:
    """A claim's verdict: its worst check's (FAILS, then INCONCLUSIVE, NOT_PER_DRAW, NOT_HERE, NOT_MEASURED), else
    HOLDS; the checks whose premise is not met count for nothing (CONDITION_NOT_MET only if every check is one)."""
    verdicts = {c.verdict for c in checks}
    if verdicts == {CONDITION_NOT_MET}:
        return CONDITION_NOT_MET
    for v in (FAILS, INCONCLUSIVE, NOT_PER_DRAW, NOT_HERE, NOT_MEASURED):
        if v in verdicts:
            return v
    return HOLDS


# The terminal table fits LINE columns; a verdict wraps inside VERDICT_WIDTH, a check's line inside the rest.
LINE = 100
VERDICT_WIDTH = 18
CLAIM_WIDTH, COUNT_WIDTH = 5, 6
TEXT_START = CLAIM_WIDTH + COUNT_WIDTH + VERDICT_WIDTH + 4  # the four spaces between the columns
TEXT_WIDTH = LINE - TEXT_START
NO_BREAK = "\u00a0"


def table_row(claim: str, count: str, verdict: str, text: str) -> list[str]:
    """One row of the checker's table, its verdict and its text each wrapped inside its own column (the text's
    continuation lines indented two spaces, so a row's first line stands out)."""
    verdicts = textwrap.wrap(verdict, VERDICT_WIDTH) or [""]
    # a number m × 10ⁿ stays on one line: its spaces held unbreakable while wrapping
    texts = [t.replace(NO_BREAK, " ") for t in textwrap.wrap(text.replace(" × ", f"{NO_BREAK}×{NO_BREAK}"),
                                                            TEXT_WIDTH, subsequent_indent="  ",
                                                            break_on_hyphens=False)] or [""]
    lines = []
    for i in range(max(len(verdicts), len(texts))):
        v = verdicts[i] if i < len(verdicts) else ""
        t = texts[i] if i < len(texts) else ""
        first = i == 0
        lines.append(f"{claim if first else '':<{CLAIM_WIDTH}} {count if first else '':>{COUNT_WIDTH}}  "
                     f"{v:<{VERDICT_WIDTH}} {t}".rstrip())
    return lines


def summary(decision: Decision, show_all: bool = False) -> str:
    """The compact table: per claim, its verdict and its closest check (every failing check, and every check where
    theory says the lesson's sentence does not hold, in full); then, where the sentence does not hold, why. Every
    line fits LINE columns."""
    lines = table_row("claim", "checks", "verdict", "closest check (margin: how far toward failing, in tolerances; "
                      "above 1 it fails)")
    by_claim: dict[str, list[Check]] = {}
    for c in decision.checks:
        by_claim.setdefault(c.claim, []).append(c)
    for cid in registry():
        checks = by_claim.get(cid, [])
        if not checks:
            continue
        worst = shown_first(checks)
        lines += table_row(cid, str(len(checks)), claim_verdict(checks), describe(worst, rule=False))
        if worst.verdict == INCONCLUSIVE and worst.note:  # why it is not decided, in words
            lines += table_row("", "", "", f"why: {worst.note}")
        shown = checks if show_all else [c for c in checks if c.verdict in (FAILS, NOT_HERE, CONDITION_NOT_MET)
                                         and c is not worst]
        for c in shown:
            lines += table_row("", "", c.verdict, describe(c, rule=False))
    verdicts = {cid: claim_verdict(checks) for cid, checks in by_claim.items()}
    others = [f"{sum(v == o for v in verdicts.values())} {o}"
              for o in (INCONCLUSIVE, NOT_PER_DRAW, NOT_HERE, NOT_MEASURED, CONDITION_NOT_MET)
              if o in verdicts.values()]
    failing = [cid for cid, v in verdicts.items() if v == FAILS]
    k, runs = number(decision.k, decimals=3, integers=False), number(1 / decision.alpha_family, decimals=0)
    footer = [f"statistical checks: {number(decision.n_statistical)}, each within k = {k} standard errors, "
              "more on the long side of a skewed statistic "
              f"(Bonferroni: a correct run fails by chance less than once in {runs})",
              f"{sum(v == HOLDS for v in verdicts.values())} of {len(verdicts)} claims hold"
              + "".join(f"; {o}" for o in others)
              + (f"; FAILING: {', '.join(failing)}" if failing else "")]
    if any(v == NOT_HERE for v in verdicts.values()):
        footer.append(f"'{NOT_HERE}': at this config theory says the lesson's sentence is false, and the measurement "
                      "agrees with theory (the pipeline is right; not a failure, exit 0); a measurement that departs "
                      "from theory there fails")
    unmet = sum(c.verdict == CONDITION_NOT_MET for c in decision.checks)
    if unmet:
        footer.append(f"'{CONDITION_NOT_MET}' ({unmet} check{'s' if unmet > 1 else ''}): the lesson's premise does not "
                      "hold at that point (e.g. an unscaled softmax not yet saturated), so the sentence does not speak "
                      "there; the measurement agrees with theory's value (one that departs from it fails), counted "
                      "neither for nor against its claim")
    lines.append("")
    for paragraph in footer:
        lines += textwrap.wrap(paragraph, LINE, break_on_hyphens=False)
    return "\n".join(lines)
