"""How verdicts are shown: one check in a line, a claim's verdict from its checks, and the checker's summary
table. `sdpa-lab check` and the report both use these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sdpa_lab.claims.model import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    NOT_PER_DRAW,
    Check,
    Decision,
)
from sdpa_lab.claims.registry import registry


def _num(x: float) -> str:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.6g}"


def margin_text(c: Check) -> str:
    """A check's margin as the checker prints it: "n/a" where it has none (Check.margin is nan)."""
    return "n/a" if math.isnan(c.margin) else _num(c.margin)


def describe(c: Check) -> str:
    """One check in a line: measured vs expected, tolerance, margin."""
    if c.verdict == NOT_MEASURED:
        return f"{c.check} [{c.parameters}]: not measured ({c.note})"
    tol = f" ± {_num(c.tolerance)}" if c.tolerance > 0 else ""
    return (f"{c.check} [{c.parameters}]: measured {_num(c.measured)} {c.relation} {_num(c.expected)}{tol}"
            f" (margin {margin_text(c)})")


def closeness(c: Check) -> float:
    """How close a check came to failing, for picking the one to show: minus its distance to the boundary."""
    if c.verdict in (FAILS, NOT_PER_DRAW, INCONCLUSIVE):
        return math.inf
    if c.tolerance == 0:
        return -math.inf
    m = c.margin
    distance = {"within": 1 - abs(m), "not above": 1 - m, "not below": m + 1, "above": m - 1, "below": -1 - m}
    return -distance[c.relation]


def claim_verdict(checks: Sequence[Check]) -> str:
    verdicts = {c.verdict for c in checks}
    for v in (FAILS, INCONCLUSIVE, NOT_PER_DRAW, NOT_MEASURED):
        if v in verdicts:
            return v
    return HOLDS


def summary(decision: Decision, show_all: bool = False) -> str:
    """The compact table: per claim, its verdict and its closest check (every failing check in full)."""
    lines = [f"{'claim':<5} {'checks':>6}  {'verdict':<31} closest check"]
    by_claim: dict[str, list[Check]] = {}
    for c in decision.checks:
        by_claim.setdefault(c.claim, []).append(c)
    for cid in registry():
        checks = by_claim.get(cid, [])
        if not checks:
            continue
        worst = max(checks, key=closeness)
        lines.append(f"{cid:<5} {len(checks):>6}  {claim_verdict(checks):<31} {describe(worst)}")
        shown = checks if show_all else [c for c in checks if c.verdict == FAILS and c is not worst]
        lines += [f"{'':<5} {'':>6}  {c.verdict:<31} {describe(c)}" for c in shown]
    verdicts = {cid: claim_verdict(checks) for cid, checks in by_claim.items()}
    others = [f"{sum(v == o for v in verdicts.values())} {o}" for o in (INCONCLUSIVE, NOT_PER_DRAW, NOT_MEASURED)
              if o in verdicts.values()]
    failing = [cid for cid, v in verdicts.items() if v == FAILS]
    lines.append("")
    lines.append(f"statistical checks: {decision.n_statistical}, each within k = {decision.k:.3f} standard errors, "
                 "more on the long side of a skewed statistic "
                 f"(Bonferroni: a correct run fails by chance less than once in {1 / decision.alpha_family:,.0f})")
    lines.append(f"{sum(v == HOLDS for v in verdicts.values())} of {len(verdicts)} claims hold"
                 + "".join(f"; {o}" for o in others)
                 + (f"; FAILING: {', '.join(failing)}" if failing else ""))
    return "\n".join(lines)
