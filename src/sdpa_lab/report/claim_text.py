"""A claim's words on the report page: its plain opening (what the lesson says, what this run measured, whether it
holds, read without statistics), a tolerance derivation shared by several claims written once and referred to,
and a note repeated on many rows of a checks table said once beneath it."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from sdpa_lab.claims.model import (
    CONDITION_NOT_MET,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_HERE,
    NOT_PER_DRAW,
    Check,
    Claim,
    Decision,
)
from sdpa_lab.claims.verdicts import unit_of
from sdpa_lab.numbers import at_unit, num, number
from sdpa_lab.report.leads import lead_sentence

# A shared derivation is referred to, not repeated, when it runs to at least this many words.
SHARED_WORDS = 25
SENTENCE_END = re.compile(r"(?<=[a-z0-9)])[.;] (?=[A-Z])")


# A plain sentence per kind of tolerance, said before the statistics of the claim's tolerance paragraph.
PLAIN_TOLERANCE = {
    "printed": "The lesson printed these numbers rounded, so each must match to half a unit in the last digit "
               "it printed.",
    "statistical": "A measured average moves a little from run to run, so each is allowed a distance from the "
                   "expected value that a correct run exceeds by chance less than once in {runs} runs; beyond "
                   "it, the claim fails.",
    "rounding": "Floating-point arithmetic rounds, so sums and differences may miss the exact value by the "
                "rounding of the arithmetic, and by no more.",
    "exact": "Shapes, orderings and counts must match exactly.",
}


def plain_tolerance(checks: Sequence[Check], alpha_family: float) -> str:
    """The plain sentences for the kinds of tolerance a claim's checks use, in a fixed order."""
    bases = {"statistical" if c.basis == "derived" else c.basis for c in checks}
    return " ".join(PLAIN_TOLERANCE[b].format(runs=number(1 / alpha_family, decimals=0))
                    for b in PLAIN_TOLERANCE if b in bases)


def k_sentence(claim: str, checks: Sequence[Check], decision: Decision) -> str:
    """The k a claim's checks held to standard errors use, and where it comes from: the claim's own share of the
    run's false-fail budget split over its own statistical checks; a check repeating another claim's evidence
    (derived) takes that claim's k. "" for a claim without such checks."""
    own = [c for c in checks if c.basis == "statistical"]
    parts = []
    if own:
        share = decision.shares.get(claim, math.nan)
        parts.append(f"Here k = {number(own[0].k, decimals=3, integers=False)} standard errors: {claim}'s share "
                     f"{num(share)} of the run's false-fail budget {num(decision.alpha_family)}, split over its "
                     f"{len(own)} statistical check{'s' if len(own) != 1 else ''} (a false-alarm rate of "
                     f"{num(share / len(own), 3)} per check), however many checks the other claims make")
    repeated = {c.of_claim: c.k for c in checks if c.basis == "derived" and c.of_claim not in ("", claim)}
    parts += [f"its checks repeating {other}'s evidence take {other}'s k = {number(k, decimals=3, integers=False)}"
              for other, k in sorted(repeated.items())]
    text = "; ".join(parts)
    return f"{text[:1].upper()}{text[1:]}." if text else ""


def why_not_per_draw(checks: Sequence[Check]) -> str:
    """Why a claim holds on average and not per draw, in words, from its checks: its checks of averages
    hold, and its literal single-draw check says what share of single draws show the lesson's statement."""
    literal = [c for c in checks if c.verdict == NOT_PER_DRAW]
    others = [c for c in checks if c.verdict != NOT_PER_DRAW]
    if not literal:
        return ""
    c = literal[0]
    n = re.search(r"\bn=(\d+)", c.parameters)
    draws = f" of {number(int(n.group(1)))} single draws" if n else " of single draws"
    held = sum(o.verdict == HOLDS for o in others)
    held_text = f"all {held} of its checks" if held == len(others) else f"{held} of its {len(others)} checks"
    share = (f"only {number(100 * c.measured, decimals=0)}%{draws} show it ({c.check}), where the statement taken "
             f"per draw would need {number(100 * c.expected, decimals=0)}%" if 0 <= c.measured <= 1 and c.expected == 1
             else
             f"{c.check} measured {at_unit(c.measured, unit_of(c))} where it would need "
             f"{at_unit(c.expected, unit_of(c))}")
    return (f"{held_text[0].upper() + held_text[1:]} on averages over many draws hold, as the lesson claims; the "
            f"lesson's literal statement is about one draw, and {share}: one draw need not show what the "
            "average does.")


def verdict_sentence(verdict: str, checks: Sequence[Check]) -> str:
    """Whether the claim holds, in a sentence without statistics."""
    n = len(checks)
    if verdict == HOLDS:
        return f"It holds (all {n} checks)." if n > 1 else "It holds."
    if verdict == FAILS:
        return f"It fails: {sum(c.verdict == FAILS for c in checks)} of {n} checks are beyond what chance allows."
    if verdict == NOT_PER_DRAW:
        literal = next(c for c in checks if c.verdict == NOT_PER_DRAW)
        share = (f": only {number(100 * literal.measured, decimals=0)}% of single draws show it"
                 if 0 <= literal.measured <= 1 and literal.expected == 1 else "")
        return f"It holds on average over many draws, not in every single draw{share}."
    if verdict == NOT_HERE:
        return ("At this config it does not hold, and theory says it should not: the measurements agree with "
                "theory, so the pipeline is right.")
    if verdict == INCONCLUSIVE and any(c.theory_unclear for c in checks):
        return ("Not decided: at some points theory's own expectation of the difference is within its Monte Carlo "
                "uncertainty of 0, so there the sentence can be neither confirmed nor contradicted.")
    if verdict == INCONCLUSIVE:
        return "Not decided: the direction it claims is within this run's noise; more samples would tell."
    if verdict == CONDITION_NOT_MET:
        return "Not decided: at this config the lesson's premise does not hold, so its sentence does not speak here."
    return "This run could not decide it."


def opening(claim: Claim, verdict: str, checks: Sequence[Check]) -> dict[str, str]:
    """A claim's plain opening: the lesson's words, this run's numbers of the claim (leads.lead_sentence), the
    verdict in words."""
    return {"lesson": claim.lesson_says, "section": claim.lesson_section, "measured": lead_sentence(claim, checks),
            "verdict": verdict_sentence(verdict, checks)}


def sentences(text: str) -> list[str]:
    """A derivation's sentences (a full stop or semicolon before a capital letter ends one)."""
    return SENTENCE_END.split(text)


def after_sentences(text: str, n: int) -> str:
    """`text` from its (n+1)th sentence on, as written."""
    if n == 0:
        return text
    ends = list(SENTENCE_END.finditer(text))
    return text[ends[n - 1].end():] if n <= len(ends) else ""


def shared_derivations(claims: Iterable[Claim]) -> dict[str, tuple[str, str | None]]:
    """Per claim, its tolerance reason without the sentences it opens with in common with an earlier claim's (at
    least SHARED_WORDS words of them), and that earlier claim's id (None where it shares none)."""
    out: dict[str, tuple[str, str | None]] = {}
    earlier: list[Claim] = []
    for claim in claims:
        mine = sentences(claim.tolerance_reason)
        best, ref = 0, None
        for other in earlier:
            if out[other.id][1] is not None:
                continue  # refer to the claim that writes the derivation out
            theirs = sentences(other.tolerance_reason)
            common = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
                          min(len(mine), len(theirs)))
            if common > best and sum(len(s.split()) for s in mine[:common]) >= SHARED_WORDS:
                best, ref = common, other.id
        out[claim.id] = (after_sentences(claim.tolerance_reason, best), ref)
        earlier.append(claim)
    return out


def note_key(note: str) -> str:
    """A note without the sweep points it names in brackets (the row's parameters column says them)."""
    return re.sub(r"\s*\[[^\]]*\]", "", note)


def repeated_notes(notes: Sequence[str]) -> list[str]:
    """The notes that stand on most rows of a claim's checks (more than half, and more than one), each without the
    points it names (note_key): said once beneath its table. A note on a few rows (one sweep point's) stays."""
    return [key for key, n in Counter(note_key(n) for n in notes if n).items() if n > 1 and 2 * n > len(notes)]

