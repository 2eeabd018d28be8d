"""A claim read in a minute: plain words first (the lesson, this run's number, the verdict), the statistics one
click away in a <details>, and a shared derivation written once."""

from __future__ import annotations

import re
from html import unescape

from sdpa_lab import claims as C
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


def lead(html: str, cid: str) -> str:
    """The HTML of a claim's lead, <article id="lead-CID"> of the leads section."""
    match = re.search(rf'<article[^>]*\bid="lead-{re.escape(cid)}"[^>]*>(.*?)</article>', html, re.S)
    assert match, f"no lead of {cid}"
    return match.group(1)


def test_each_claim_is_led_in_plain_words_and_detailed_below(decision, report_html):
    """The leads come right after the summary, in the registry's order, each a heading and its plain words with a
    link to its section; each section shows figures and checks before the derivation, its prose within budget."""
    leads = section(report_html, "leads")
    assert report_html.index('id="summary"') < report_html.index('id="leads"') < report_html.index('id="A1"')
    assert re.findall(r'<article[^>]*id="lead-([A-Z]+\d+)"', leads) == list(C.registry())
    for claim in C.registry().values():
        head = lead(report_html, claim.id)
        assert head.lstrip().startswith("<h3>") and head.split("</h3>")[1].lstrip().startswith('<p class="plain">')
        assert f'href="#{claim.id}"' in head.split("</h3>")[1], claim.id  # its figures and checks: one tap
        body = section(report_html, claim.id)
        assert words_before_details(body) < BUDGET, (claim.id, words_before_details(body))
        assert body.index("<figure") < body.index("<table") if "<figure" in body else True
        assert body.index("<table") < body.index('<details class="derivation"'), claim.id
        derivation = body.split('<details class="derivation"')[1]
        assert 'class="statement"' in derivation and 'class="tolerance"' in derivation, claim.id


# The verdict in the words a learner reads (not the code's sentences: the page must say it), and words that belong
# to the statistics behind the <details>, not to the opening.
SAYS = {C.HOLDS: "It holds", C.FAILS: "It fails", C.NOT_PER_DRAW: "on average", C.NOT_HERE: "does not hold",
        C.INCONCLUSIVE: "Not decided", C.NOT_MEASURED: "could not"}
STATISTICS = ("standard error", "Bonferroni", "Cornish", "cumulant", "quantile", "Monte Carlo", " SE ")
# How a lead once read, quoting the closest check against what "the claim expects": never again.
CHECKER_WORDS = ("expects at most", "expects exactly", "the claim expects")


def page_text(html_fragment: str) -> str:
    """What a reader sees of an HTML fragment: its text, entities decoded, whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html_fragment)).split())


def test_the_page_leads_each_claim_with_the_lesson_its_own_numbers_and_the_verdict(decision, report_html):
    """Read off the rendered page: each claim's lead is within the budget, quotes the lesson's words, gives every
    measured number of the checks the claim declares its own (Claim.lead; each series short enough to list), says
    the verdict this run's checks give, and no statistics nor the checker's words."""
    for cid, claim in C.registry().items():
        checks = [c for c in decision.checks if c.claim == cid]
        text = page_text(re.search(r'<p class="plain">(.*?)</p>', lead(report_html, cid), re.S).group(1))
        assert len(text.split()) < BUDGET, (cid, len(text.split()))
        assert page_text(claim.lesson_says) in text, cid
        own = [c for c in checks if c.check in claim.lead and c.verdict != C.NOT_MEASURED]
        assert own, cid  # every claim declares checks of its own that the run made
        for name in dict.fromkeys(c.check for c in own):
            series = [c for c in own if c.check == name]
            said = re.split(rf"(?:measured |; ){re.escape(name)}: ", text)[1]
            values = [at_unit(c.measured, H.measured_unit(c)) for c in series]
            if len(series) <= 6 and len(set(values)) > 1:
                assert said.startswith(", ".join(values)), (cid, name, values, said[:200])
            else:
                assert any(v in said.split(";")[0] for v in values), (cid, name, values, said[:200])
        assert SAYS[C.claim_verdict(checks)] in text, (cid, text)
        assert not [w for w in STATISTICS + CHECKER_WORDS if w in text], (cid, text)


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
