"""One legend, true for every row under it: "above 1 it fails" above each checks table, with the exceptions its rows
have, and a row whose margin is not that failure margin says what its margin is, in that row."""

from __future__ import annotations

from sdpa_lab import claims as C
from sdpa_lab.claims.model import statistical
from sdpa_lab.report import html as H

from tests.report import test_html as T

decision, report_html, section = T.decision, T.report_html, T.section  # its fixtures, shared


def literal(measured: float) -> C.Check:
    return statistical("B5", "fraction of sequences whose entropy falls at every step (literal)", "n=4000", measured,
                       1.0, 0.01, "not below", "entropy_exercise2.csv", literal=True, tolerance=0.04)


def test_a_per_draw_margin_says_it_is_not_a_failure_in_its_row_and_line():
    c = literal(0.3575)
    assert c.margin > 1 and c.verdict == C.NOT_PER_DRAW
    row = H.check_row(c)
    assert "not a failure" in row.margin_kind
    assert "a per-draw shortfall, not a failure" in C.describe(c, rule=False)
    assert "fails above 1" not in C.describe(c)  # nor does the line claim the failing line
    ordinary = statistical("B1", "v", "d_k=4", 4.2, 4.0, 0.1, "within", "variance.csv", tolerance=0.48)
    assert H.check_row(ordinary).margin_kind == "" and "not a failure" not in C.describe(ordinary)


def test_every_row_whose_margin_above_1_is_no_failure_says_what_it_is(decision, report_html):
    """From the run's data: every check with a margin above 1 and a verdict that is not "fails" carries its
    margin's meaning in its row of the page; so does every claimed rise or fall (a margin below −1 holds)."""
    odd = [c for c in decision.checks if (c.margin > 1 and c.verdict != C.FAILS) or c.margin < -1]
    assert odd  # the run has such rows (B5's per-draw fraction at least, and the claimed directions)
    for c in odd:
        row = H.check_row(c)
        assert row.margin_kind, (c.claim, c.check)
        cell = f'{row.margin}<div class="why">{row.margin_kind}</div>'
        assert cell in section(report_html, c.claim), (c.claim, c.check)
    for cid in {c.claim for c in odd}:  # above such a table, the margin's sentence names their exception
        rule = section(report_html, cid).split('<p class="margin-rule">')[1].split("</p>")[0]
        checks = [c for c in decision.checks if c.claim == cid]
        assert "above 1 it fails" in rule, cid
        assert ("never a failure" in rule) == any(c.literal for c in checks), cid
        assert ("holds only below −1" in rule) == any(c.relation in ("above", "below") for c in checks), cid
