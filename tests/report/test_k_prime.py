"""k', the standard errors a statistical check's tolerance allows: set where it is decided, kept in claims.csv, and
shown by the report as decided (never worked back from the tolerance)."""

from __future__ import annotations

import math

from markupsafe import escape

from sdpa_lab import claims as C
from sdpa_lab.claims import exact_laws
from sdpa_lab.claims.standard_errors import cornish_fisher
from sdpa_lab.numbers import number
from sdpa_lab.report import html as H

from tests.report import test_html as T

decision, report_html, section = T.decision, T.report_html, T.section  # its fixtures, shared


def test_each_statistical_check_carries_the_k_prime_its_tolerance_was_made_with(decision):
    statistical = [c for c in decision.checks if c.basis in ("statistical", "derived")]
    assert any(c.k_prime > c.k for c in statistical)  # a skewed statistic's k' is wider than its claim's k
    for c in statistical:  # from the statistic's exact law where it names one (small d_k), else Cornish-Fisher's
        k = decision.k_of(c.of_claim or c.claim)  # its claim's own k (a derived check's: the one it repeats)
        assert c.k == k
        exact = exact_laws.k_prime(c.law, k, c.expected, c.se) if c.law else None
        assert c.k_prime == (exact if exact is not None else cornish_fisher(k, c.skewness,
                                                                            c.excess_kurtosis)), (c.claim, c.check)
        assert math.isclose(c.tolerance, c.k_prime * c.se + k * c.expected_se, rel_tol=1e-12)
    assert all(math.isnan(c.k_prime) for c in decision.checks if c.basis not in ("statistical", "derived"))


def test_the_report_shows_k_prime_as_claims_csv_records_it(run_dir, decision, report_html):
    """claims.csv gives k' back exactly (it holds no skewness to compute it from), and each statistical row of the
    page says its tolerance is k' standard errors, k' to one decimal, as decided."""
    read = C.read_claims(run_dir / "results" / "claims.csv")
    for decided, back in zip(decision.checks, read.checks, strict=True):
        assert back.k_prime == decided.k_prime or (math.isnan(back.k_prime) and math.isnan(decided.k_prime))
        if decided.basis in ("statistical", "derived") and decided.se > 0:
            row = H.check_row(back)
            assert row.tolerance_why.startswith(f"{number(decided.k_prime, decimals=1, integers=False)} × SE "), row
            assert f'{row.tolerance}<div class="why">{escape(row.tolerance_why)}</div>' in section(report_html,
                                                                                              back.claim)


def test_a_check_shows_its_own_k_prime_whatever_its_tolerance_adds():
    """The tolerance's words take k' from the check, not from the tolerance (worked back here it would read 4.2)."""
    c = C.Check("B7", "gap", "d_k=4", "within", 0.0, 0.01, "statistical", "g.csv", tolerance=0.5, se=0.1,
                expected_se=0.02, k_prime=4.61, k=4.2)
    assert H.check_row(c).tolerance_why == "4.6 × SE 0.1 + 4.2 × its expectation's Monte Carlo SE 0.02"
