"""A claim's lead (sdpa_lab.report.leads): the claim's own measured numbers, said from its decided checks."""

from __future__ import annotations

from sdpa_lab import claims as C
from sdpa_lab.claims.model import exact, printed, statistical
from sdpa_lab.report import leads as L


def variance(d: int, measured: float) -> C.Check:
    return statistical("B1", "variance of raw scores", f"d_k={d}, n=100000", measured, float(d), d * 0.0045,
                       "within", "variance.csv", tolerance=d * 0.02)


def claim(*lead: str) -> C.Claim:
    return C.Claim("B1", "t", "s", "the score has variance d_k", "sec", (), "r", decide=lambda R: [], lead=lead)


def test_every_claim_declares_checks_of_its_own_that_it_makes():
    for c in C.registry().values():
        assert c.lead and set(c.lead) <= set(c.sentences), c.id


def test_a_series_over_one_swept_setting_lists_every_number_with_its_setting_and_theory():
    checks = [variance(d, m) for d, m in ((4, 4.014), (16, 16.024), (64, 63.89), (256, 256.69), (1024, 1027.36))]
    text = L.lead_sentence(claim("variance of raw scores"), checks)
    assert text == ("This run measured variance of raw scores: 4.014, 16.024, 63.89, 256.7, 1,027.4 for d_k = 4, 16, "
                    "64, 256, 1024 (expected 4, 16, 64, 256, 1,024).")


def test_one_number_at_every_point_a_bound_and_the_lessons_print():
    zeros = [exact("B6", "disagreements", f"d_k={d}, {t}", 0, 0, "r.csv") for d in (4, 16) for t in ("f32", "f64")]
    assert L.series(zeros) == "disagreements: 0 at all 4 points"
    sums = [C.Check("B9", "largest |row sum - 1|", f"shape {i}, {t}", "not above", 0.0, m, "rounding", "f.csv",
                    tolerance=4.8e-7) for i, (t, m) in enumerate((("f32", 1.4e-7), ("f64", 2.2e-16), ("f32", 6e-8)))]
    assert L.series(sums) == "largest |row sum - 1|: at most 1.4\u00a0×\u00a010⁻⁷ over 3 points " \
                             "(within floating-point rounding)"
    a1 = printed("A1", "raw score variance", "d_k=4", 3.98830, 3.988, 3, "lesson_variance.csv")
    assert L.series([a1]) == "raw score variance: 3.98830 (the lesson printed 3.988)"


def test_the_lead_reads_the_checks_as_decided_now_and_falls_back_to_the_first():
    checks = [variance(4, 4.0), variance(16, 99.0)]  # a run whose d_k = 16 variance is off: said as measured
    assert "4.000, 99.000 for d_k = 4, 16" in L.lead_sentence(claim("variance of raw scores"), checks)
    assert L.lead_checks(claim("a check this run did not make"), checks) == [checks]  # its first check's group
    assert L.lead_sentence(claim(), []) == "This run made no check of it."
