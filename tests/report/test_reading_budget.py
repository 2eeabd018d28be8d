"""A claim read in a minute: plain words first (the lesson, this run's number, the verdict), the statistics one
click away in a <details>, and a shared derivation written once."""

from __future__ import annotations

import re
from html import unescape

from sdpa_lab import claims as C
from sdpa_lab.claims.verdicts import shown_first
from sdpa_lab.numbers import at_unit
from sdpa_lab.report import claim_text as T
from sdpa_lab.report import html as H

from tests.report import test_html as TH

decision, report_html, section = TH.decision, TH.report_html, TH.section  # its fixtures, shared

BUDGET = 120  # words a claim asks a reader to read before its first <details>


def words_before_details(body: str) -> int:
    """The words of a claim's section before its first <details>, its figures and checks tables aside (a figure is
    looked at, a table scanned): its heading, its plain opening and what else it says in prose there."""
    head = body.split("<details")[0]
    head = re.sub(r"<figure.*?</figure>|<table.*?</table>", " ", head, flags=re.S)
    return len(re.sub(r"<[^>]+>", " ", head).split())


def test_each_claim_opens_in_plain_words_within_the_reading_budget(decision, report_html):
    for claim in C.registry().values():
        body = section(report_html, claim.id)
        assert words_before_details(body) < BUDGET, (claim.id, words_before_details(body))
        first = body.split("</h2>")[1].lstrip()
        assert first.startswith('<p class="plain">'), claim.id  # the plain words come first
        assert body.index('class="plain"') < body.index("<figure") if "<figure" in body else True
        assert body.index("<table") < body.index('<details class="derivation"'), claim.id
        derivation = body.split('<details class="derivation"')[1]
        assert 'class="statement"' in derivation and 'class="tolerance"' in derivation, claim.id


# The verdict in the words a learner reads (not the code's sentences: the page must say it), and words that belong
# to the statistics behind the <details>, not to the opening.
SAYS = {C.HOLDS: "It holds", C.FAILS: "It fails", C.NOT_PER_DRAW: "on average", C.NOT_HERE: "does not hold",
        C.INCONCLUSIVE: "Not decided", C.NOT_MEASURED: "could not"}
STATISTICS = ("standard error", "Bonferroni", "Cornish", "cumulant", "quantile", "Monte Carlo", " SE ")


def page_text(html_fragment: str) -> str:
    """What a reader sees of an HTML fragment: its text, entities decoded, whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html_fragment)).split())


def test_the_page_opens_each_claim_with_the_lesson_the_measurement_and_the_verdict(decision, report_html):
    """Read off the rendered page: each claim's plain opening is within the budget on its own, quotes the lesson's
    words, gives the number of the check shown first, says the verdict this run's checks give, and no statistics."""
    for cid, claim in C.registry().items():
        checks = [c for c in decision.checks if c.claim == cid]
        opening = re.search(r'<p class="plain">(.*?)</p>', section(report_html, cid), re.S)
        assert opening, cid
        text = page_text(opening.group(1))
        assert len(text.split()) < BUDGET, (cid, len(text.split()))
        assert page_text(claim.lesson_says) in text, cid
        first = shown_first(checks)
        if first.verdict != C.NOT_MEASURED:
            assert f": {at_unit(first.measured, H.measured_unit(first))}," in text, (cid, text)
        assert SAYS[C.claim_verdict(checks)] in text, (cid, text)
        assert not [w for w in STATISTICS if w in text], (cid, text)


def test_a_shared_derivation_is_written_once_and_referred_to():
    reasons = T.shared_derivations(C.registry().values())
    registry = C.registry()
    referring = {cid: ref for cid, (_, ref) in reasons.items() if ref}
    assert {"B2", "B4", "B8"} <= set(referring) and referring["B2"] == "B1" and reasons["B1"][1] is None
    first_sentence = T.sentences(registry["B1"].tolerance_reason)[0]
    for cid in referring:
        own = reasons[cid][0]
        assert first_sentence not in own and own in registry[cid].tolerance_reason  # its own words, as written
        assert len(own.split()) < len(registry[cid].tolerance_reason.split())


def test_the_shared_derivation_is_shown_once_on_the_page(report_html):
    first_sentence = T.sentences(C.registry()["B1"].tolerance_reason)[0]
    assert report_html.count(first_sentence.replace("'", "&#39;")) == 1
    assert 'as derived for <a href="#tolerance-B1">B1</a>' in section(report_html, "B2")


def test_a_note_on_many_rows_is_said_once_beneath_the_table():
    assert T.repeated_notes(["a", "b", "a", "a", ""]) == ["a"]
    assert T.repeated_notes(["a", "b", "a", "c", "", ""]) == []  # a note of a few rows stays on them
    derived = [f"derived from B1 variance [d_k={d}]: the same evidence" for d in (4, 16, 64)]
    assert T.repeated_notes(derived) == ["derived from B1 variance: the same evidence"]


def test_the_derived_note_stands_once_under_b2s_table_not_on_each_row(report_html):
    body = section(report_html, "B2")
    assert body.count("the same evidence, counted once in the Bonferroni split") == 1
    assert '<p class="note">On several rows: derived from B1' in body
