"""How verdicts are shown: one check in a line, a claim's verdict from its checks, and the checker's summary
table. `sdpa-lab check` and the report both use these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
from sdpa_lab.terminal import columns, wrap


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
# never a failure (its verdict is NOT_PER_DRAW; it fails only departing from theory's chance, its theory margin), so
# its line says so where "above 1 it fails" would mislead.
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


# Every verdict kind, best first: the order the totals count them in (the report's summary lists them worst first).
VERDICT_KINDS = (HOLDS, NOT_PER_DRAW, NOT_HERE, CONDITION_NOT_MET, INCONCLUSIVE, NOT_MEASURED, FAILS)


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


def margin_rule(checks: Iterable[Check]) -> str:
    """The margin's meaning in one sentence, true for each of `checks` (those whose margins are shown under it): the
    failing line at 1, and only where such checks are shown, a claimed rise or fall's line at −1, a per-draw check's
    shortfall that never fails; "" where none of them shows a margin."""
    checks = [c for c in checks if c.verdict != NOT_MEASURED]
    if not checks:
        return ""
    literal = any(c.literal for c in checks)
    direction = any(c.relation in ("above", "below") and c.tolerance > 0 for c in checks)
    rule = "Margin: how far a check went toward failing, in units of its tolerance; above 1 it fails"
    if literal:
        rule += (", except a per-draw check (Exercise 2, literal): how far single draws fall short of “every draw”, "
                 "never a failure (it fails only off theory's chance)")
    if direction:
        rule += "; a claimed rise or fall holds only below −1 (between −1 and 1: inconclusive)"
    return rule + "."


def counted(verdict: str, n: int) -> str:
    """"n verdict", the verdict's verb agreeing with n ("1 holds", "12 hold", "2 do not hold here ...")."""
    if n == 1:
        return f"1 {verdict}"
    first, _, rest = verdict.partition(" ")
    plural = {"holds": "hold", "fails": "fail", "does": "do"}.get(first, first)
    return f"{n} {plural}{' ' + rest if rest else ''}"



# The checker's table: a claim's id, its number of checks, its verdict (wrapped inside its column), the margin of its
# closest check; beneath a claim, checks in full, each its verdict and its line, wrapped under it.
CLAIM_WIDTH, COUNT_WIDTH, K_WIDTH = 5, 6, 4
MARGIN_HEADER = "closest margin"
CHECK_INDENT, WHY = "  ", "why"


@dataclass(frozen=True)
class Layout:
    """Where the checker's columns stand for a terminal `width` wide and the verdicts it shows."""

    width: int
    verdict_width: int

    @property
    def text_start(self) -> int:
        return CLAIM_WIDTH + 1 + COUNT_WIDTH + 1 + K_WIDTH + 1 + self.verdict_width + 1

    @classmethod
    def for_width(cls, width: int, verdicts: Sequence[str]) -> Layout:
        """The verdict column as wide as the longest verdict shown, leaving the margin's words room (a verdict
        wraps inside its column only on a terminal too narrow for it)."""
        room = width - (CLAIM_WIDTH + 1 + COUNT_WIDTH + 1 + K_WIDTH + 1 + 1) - len(MARGIN_HEADER)
        return cls(width, max(len("verdict"), min(max(map(len, verdicts), default=0), room)))


def table_row(layout: Layout, claim: str, count: str, k: str, verdict: str, text: str) -> list[str]:
    """A claim's row: its count of checks, its k, its verdict wrapped inside its column, `text` (its closest margin)
    inside the rest."""
    verdicts = wrap(verdict, layout.verdict_width, subsequent="") if verdict else [""]
    texts = wrap(text, layout.width - layout.text_start, subsequent="") if text else [""]
    lines = []
    for i in range(max(len(verdicts), len(texts))):
        v = verdicts[i] if i < len(verdicts) else ""
        t = texts[i] if i < len(texts) else ""
        first = i == 0
        lines.append(f"{claim if first else '':<{CLAIM_WIDTH}} {count if first else '':>{COUNT_WIDTH}} "
                     f"{k if first else '':>{K_WIDTH}} {v:<{layout.verdict_width}} {t}".rstrip())
    return lines


def check_lines(layout: Layout, label: str, text: str) -> list[str]:
    """A check in full beneath its claim ("  verdict: line"), or why it is not decided ("  why: ..."), wrapped to
    the terminal with its continuation lines indented under it."""
    return wrap(f"{label}: {text}", layout.width, CHECK_INDENT, CHECK_INDENT * 2)


def margin_words(c: Check) -> str:
    """The closest check's margin in a few words, with what it is where "above 1 it fails" does not say it."""
    if c.verdict == NOT_MEASURED:
        return "not measured"
    if c.literal:
        return f"{margin(c.margin)}, a per-draw shortfall"
    if c.relation in ("above", "below") and c.tolerance > 0:
        return f"{margin(c.margin)}, holds below −1"
    return margin(c.margin)


def _own_statistical(decision: Decision) -> dict[str, list[Check]]:
    """Each claim with statistical checks of its own, and those checks, as decided."""
    own: dict[str, list[Check]] = {}
    for c in decision.checks:
        if c.basis == "statistical":
            own.setdefault(c.claim, []).append(c)
    return own


def own_ks(decision: Decision) -> dict[str, float]:
    """Each claim with statistical checks of its own, and its k as its checks were decided (the checker's column)."""
    return {cid: checks[0].k for cid, checks in _own_statistical(decision).items()}


def claim_ks(decision: Decision) -> str:
    """Each claim with statistical checks, its k (as its checks were decided) and how many checks its share is split
    over: "B1 k = 4.892 over 10, B3 k = 4.790 over 6"."""
    return ", ".join(f"{cid} k = {number(checks[0].k, decimals=3, integers=False)} over {number(len(checks))}"
                     for cid, checks in _own_statistical(decision).items())


def summary(decision: Decision, show_all: bool = False, width: int | None = None) -> str:
    """The checker's table, `width` columns wide (default: the terminal's, sdpa_lab.terminal): per claim a row (its
    verdict and its closest check's margin), beneath it in full the checks that fail, that theory says do not hold
    here, or whose premise is not met (with `show_all`, every check), grouped by claim; then the statistics, the
    margin's meaning, the totals per verdict kind and what the rarer verdicts mean. No word or number is broken."""
    width = columns() if width is None else width
    by_claim: dict[str, list[Check]] = {}
    for c in decision.checks:
        by_claim.setdefault(c.claim, []).append(c)
    claims = [cid for cid in registry() if by_claim.get(cid)]
    verdicts = {cid: claim_verdict(by_claim[cid]) for cid in claims}
    layout = Layout.for_width(width, list(verdicts.values()))
    ks = {cid: number(k, decimals=2, integers=False) for cid, k in own_ks(decision).items()}
    lines = table_row(layout, "claim", "checks", "k", "verdict", MARGIN_HEADER)
    margins: list[Check] = []
    for cid in claims:
        checks = by_claim[cid]
        worst = shown_first(checks)
        margins.append(worst)
        lines += table_row(layout, cid, str(len(checks)), ks.get(cid, ""), verdicts[cid], margin_words(worst))
        shown = checks if show_all else [c for c in checks if c.verdict in (FAILS, INCONCLUSIVE, NOT_HERE,
                                                                               CONDITION_NOT_MET)]
        for c in shown:
            lines += check_lines(layout, c.verdict, describe(c, rule=False))
            if c.verdict == INCONCLUSIVE and c.note:  # why it is not decided, in words
                lines += check_lines(layout, WHY, c.note)
        margins += shown
    counts = {v: sum(x == v for x in verdicts.values()) for v in VERDICT_KINDS}
    runs = number(1 / decision.alpha_family, decimals=0)
    footer = [f"statistical checks: {number(decision.n_statistical)}, each within its claim's k standard errors "
              "(k: its share of the false-fail budget over its own checks), more on a skewed statistic's long side; "
              f"a correct run fails by chance less than once in {runs}",
              margin_rule(margins)]
    if counts[NOT_HERE]:
        footer.append(f"'{NOT_HERE}': at this config theory says the lesson's sentence is false, and the measurement "
                      "agrees with theory (the pipeline is right; not a failure, exit 0); a measurement that departs "
                      "from theory there fails")
    unmet = sum(c.verdict == CONDITION_NOT_MET for c in decision.checks)
    if unmet:
        footer.append(f"'{CONDITION_NOT_MET}' ({unmet} check{'s' if unmet > 1 else ''}): the lesson's premise does not "
                      "hold at that point (e.g. an unscaled softmax not yet saturated), so the sentence does not speak "
                      "there; the measurement agrees with theory's value (one that departs from it fails), counted "
                      "neither for nor against its claim")
    failing = [cid for cid, v in verdicts.items() if v == FAILS]
    totals = ", ".join(counted(v, counts[v]) for v in VERDICT_KINDS if counts[v])
    footer.append(f"{len(claims)} claim{'s' if len(claims) != 1 else ''}: {totals}"
                  + (f"; FAILING: {', '.join(failing)}" if failing else ""))
    lines.append("")
    for paragraph in filter(None, footer):
        lines += wrap(paragraph, width, subsequent="")
    return "\n".join(lines)
