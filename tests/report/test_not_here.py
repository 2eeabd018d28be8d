"""The report where theory says a lesson sentence is false at the config: said in words, apart from failing."""

from __future__ import annotations

from sdpa_lab import claims as C
from sdpa_lab.report import html as H
from sdpa_lab.report import provenance as P

from tests.report.conftest import REPORT_CONFIG
from tests.report.test_html import group, section


def test_where_theory_says_the_sentence_is_false_the_report_says_so_in_words(tmp_path):
    """A claim whose sentence theory says is false at this config: in the summary apart from the failing claims,
    under a heading that says so, with why in words (the point, measured and theory's value, the lesson's
    sentence), and in its section; never styled as failing."""
    from dataclasses import replace

    here = C.Check("B7", "mean scaled minus unscaled Jacobian norm at the widest head", "d_k=64, T=1024", "within",
                   -0.198, -0.177, "statistical", "gradient.csv", tolerance=0.03, se=0.01, theory_says_false=True)
    holds = replace(here, check="mean scaled Jacobian norm ||diag(p) - p p^T||_F", expected=0.05, measured=0.05,
                    theory_says_false=False)
    decision = C.Decision((holds, here), {"B7": C.ALPHA_CLAIM}, statements={"B7": "s"})
    html = H.render_report(decision, {}, P.provenance(REPORT_CONFIG, [], tmp_path))
    summary = section(html, "summary")
    assert 'class="attention"' not in summary
    caveats = group(summary, "not-here")  # under a heading naming its kind
    assert 'href="#B7"' in caveats and "theory says it should not" in caveats
    why = ("At this config theory says the lesson's sentence “The scale is what keeps softmax in its responsive, "
           "high-gradient regime as the model grows wide.” is false at 1 point, and the measurements agree with "
           "theory (mean scaled minus unscaled Jacobian norm at the widest head [d_k=64, T=1024]: measured −0.177, "
           "theory −0.198): the lesson's claim does not hold here, as theory predicts.")
    assert H.claim_views(decision, [C.registry()["B7"]], {})[0].why.startswith(why)
    claim = section(html, "B7")
    assert '<span class="badge not-here">' in claim.split("</h2>")[0] and "Why “does not hold here" in claim
    assert '<tr class="row-not-here">' in claim and "row-fails" not in claim


def test_where_the_premise_does_not_hold_the_report_shows_the_point_without_deciding_it(tmp_path):
    """A check whose premise is not met (B7 over 64 keys at d_k 1 -> 2: the unscaled softmax not yet saturated): the
    claim holds on its other checks, its section says where the premise does not hold and why, and the row carries
    its own verdict, neither holding nor failing."""
    from dataclasses import replace

    unmet = C.Check("B7", "fall of mean unscaled Jacobian norm ||diag(p) - p p^T||_F", "d_k=1->2, T=64", "within",
                    -0.037, -0.041, "statistical", "gradient.csv", tolerance=0.01, se=0.002, premise_not_met=True,
                    note="theory says the unscaled softmax is not yet saturated here")
    holds = replace(unmet, check="mean scaled Jacobian norm ||diag(p) - p p^T||_F", expected=0.17, measured=0.17,
                    premise_not_met=False, note="")
    decision = C.Decision((holds, unmet), {"B7": C.ALPHA_CLAIM}, statements={"B7": "s"})
    (view,) = H.claim_views(decision, [C.registry()["B7"]], {})
    assert view.verdict == C.HOLDS and "the lesson's premise does not hold (fall of mean unscaled" in view.why
    claim = section(H.render_report(decision, {}, P.provenance(REPORT_CONFIG, [], tmp_path)), "B7")
    assert C.CONDITION_NOT_MET in claim and "row-fails" not in claim


def test_where_theorys_sign_is_unclear_the_opening_says_theory_decides_nothing_there():
    from dataclasses import replace

    unclear = C.Check("B7", "mean scaled minus unscaled Jacobian norm at the widest head", "d_k=4096, T=1024",
                      "within", 0.0099, 0.0003, "statistical", "gradient.csv", tolerance=0.03, se=0.005,
                      theory_unclear=True)
    holds = replace(unclear, check="mean scaled Jacobian norm ||diag(p) - p p^T||_F", theory_unclear=False)
    decision = C.Decision((holds, unclear), {"B7": C.ALPHA_CLAIM}, statements={"B7": "s"})
    (view,) = H.claim_views(decision, [C.registry()["B7"]], {})
    assert view.verdict == C.INCONCLUSIVE
    assert view.opening["verdict"].startswith("Not decided: at some points theory's own expectation")
