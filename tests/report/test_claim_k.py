"""The report says each claim's own k: its share of the run's false-fail budget over its own statistical checks, and
the k its checks repeating another claim's evidence take from that claim."""

from __future__ import annotations

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims import model as M
from sdpa_lab.claims import standard_errors as SE
from sdpa_lab.report.claim_text import k_sentence
from sdpa_lab.results import Results


def _claim(cid, checks, alpha=SE.ALPHA_CLAIM):
    return M.Claim(cid, "t", "s", "l", "sec", (), "r", decide=lambda R, c=tuple(checks): list(c), alpha=alpha)


def _decided():
    b1 = [M.statistical("B1", "v", f"d_k={d}", d, d, 0.1, "within", "variance.csv") for d in (1, 2, 4, 8)]
    b4 = [M.statistical("B4", "raw", "d_k=1024", 1024.0, 1024.0, 1.0, "within", "variance.csv"),
          M.derived("B4", "sweep", "d_k=4", 4.0, 4.0, 0.1, "within", "variance.csv", of="B1 v [d_k=4]")]
    b2 = [M.derived("B2", "scaled", "d_k=4", 1.0, 1.0, 0.02, "within", "variance.csv", of="B1 v [d_k=4]")]
    return D.decide(Results("mem", {}), [_claim("B1", b1), _claim("B2", b2, alpha=0.0), _claim("B4", b4)])


def test_a_claims_k_sentence_names_its_own_share_and_the_k_it_takes_from_another():
    d = _decided()
    of = {cid: [c for c in d.checks if c.claim == cid] for cid in ("B1", "B2", "B4")}
    k1, k4 = (f"{d.k_of(cid):.3f}" for cid in ("B1", "B4"))
    assert k_sentence("B1", of["B1"], d) == (
        f"Here k = {k1} standard errors: B1's share 1 × 10⁻⁵ of the run's false-fail budget 1 × 10⁻⁴, split over its 4 "
        "statistical checks (a false-alarm rate of 2.5 × 10⁻⁶ per check), however many checks the other claims make.")
    assert k_sentence("B4", of["B4"], d).startswith(f"Here k = {k4} standard errors: B4's share")
    assert k_sentence("B4", of["B4"], d).endswith(f"; its checks repeating B1's evidence take B1's k = {k1}.")
    assert k_sentence("B2", of["B2"], d) == f"Its checks repeating B1's evidence take B1's k = {k1}."
    assert k_sentence("A1", [], d) == ""
