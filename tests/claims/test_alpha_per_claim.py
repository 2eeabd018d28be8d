"""Each claim's k comes from its own share of the run's false-fail budget, split over its own statistical checks: a
claim added, however many checks it makes, changes no other claim's k; the shares a run spends sum to at most the
budget, and so do the per-check false-alarm rates its tolerances allow (the union bound the run's promise rests on),
at the configs the schema accepts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_lab.calibration.space import draw_configs
from sdpa_lab.claims import deciding as D
from sdpa_lab.claims import exact_laws
from sdpa_lab.claims import model as M
from sdpa_lab.claims import standard_errors as SE
from sdpa_lab.claims.registry import CLAIMS
from sdpa_lab.results import Results

from tests.conftest import write_run


def _claim(cid: str, checks, alpha: float = SE.ALPHA_CLAIM) -> M.Claim:
    return M.Claim(cid, "t", "s", "l", "sec", (), "r", decide=lambda R, c=tuple(checks): list(c), alpha=alpha)


def _statistical(cid: str, n: int, skewness: float = 0.0, **kw) -> list[M.Check]:
    return [M.statistical(cid, f"check {i}", f"i={i}", 1.0 + 0.03 * i, 1.0, 0.1, "within", "x.csv",
                          skewness=skewness, **kw) for i in range(n)]


def two_sided_rate(k: float) -> float:
    """P(|Z| > k) for a standard normal Z, from erfc (not from NormalDist, which bonferroni_k uses)."""
    return math.erfc(k / math.sqrt(2))


def _decide(claims) -> M.Decision:
    return D.decide(Results("mem", {}), claims)


@given(sizes=st.lists(st.integers(1, 80), min_size=1, max_size=6), added=st.integers(1, 600),
       skewness=st.floats(0.0, 0.6))
@settings(max_examples=40)
def test_a_claim_added_changes_no_other_claims_k_nor_any_of_its_tolerances(sizes, added, skewness):
    claims = [_claim(f"B{i + 1}", _statistical(f"B{i + 1}", n, skewness)) for i, n in enumerate(sizes)]
    before = _decide(claims)
    after = _decide([*claims, _claim("C1", _statistical("C1", added))])
    assert {cid: k for cid, k in after.ks.items() if cid != "C1"} == before.ks  # to the last bit
    kept = [(c.k, c.k_prime, c.tolerance, c.verdict) for c in after.checks if c.claim != "C1"]
    assert kept == [(c.k, c.k_prime, c.tolerance, c.verdict) for c in before.checks]
    for cid, n in [*((f"B{i + 1}", n) for i, n in enumerate(sizes)), ("C1", added)]:
        # each claim spends its own share: its checks' two-sided rates at its k sum to it
        assert n * two_sided_rate(after.ks[cid]) == pytest.approx(SE.ALPHA_CLAIM, rel=1e-6)
    assert after.alpha_spent == pytest.approx((len(sizes) + 1) * SE.ALPHA_CLAIM) and after.alpha_spent <= 1e-4


@given(n=st.integers(1, 400), share=st.floats(1e-7, 1e-4))
@settings(max_examples=30)
def test_a_claims_k_is_its_own_share_split_over_its_own_checks(n, share):
    d = _decide([_claim("B1", _statistical("B1", n), alpha=share)])
    assert d.shares == {"B1": share} and d.n_statistical_of("B1") == n
    assert n * two_sided_rate(d.k_of("B1")) == pytest.approx(share, rel=1e-6)
    assert {c.k for c in d.checks} == {d.k_of("B1")}


def test_cornish_fisher_and_the_exact_law_widen_each_claims_own_k():
    law = exact_laws.exact_law(2, 1000)
    small = _claim("B1", [*_statistical("B1", 1, law=law), *_statistical("B1", 1, skewness=0.4)])
    large = _claim("B3", [*_statistical("B3", 1, law=law), *_statistical("B3", 59, skewness=0.4)])
    d = _decide([small, large])
    assert d.k_of("B3") > d.k_of("B1")  # 60 checks share B3's share, 2 share B1's
    for claim in ("B1", "B3"):
        exact, shaped = [c for c in d.checks if c.claim == claim][:2]
        k = d.k_of(claim)
        assert exact.k_prime == exact_laws.variance_k_prime(2, 1000, k) > k  # the law's tails at the claim's k
        assert shaped.k_prime == SE.cornish_fisher(k, 0.4) > k
        assert exact.tolerance == pytest.approx(exact.k_prime * exact.se, rel=1e-15)


def test_a_derived_check_takes_the_k_of_the_claim_whose_evidence_it_repeats():
    source = _statistical("B1", 3)
    repeat = M.derived("B2", "scaled", "i=0", 0.5, 0.5, 0.05, "within", "x.csv", of="B1 check 0 [i=0]")
    d = _decide([_claim("B1", source), _claim("B2", [repeat], alpha=0.0)])
    (got,) = [c for c in d.checks if c.claim == "B2"]
    assert got.k == d.k_of("B1") and got.of_claim == "B1"
    assert "B2" not in d.shares and d.n_statistical == 3  # it needs no share: it spends none
    with pytest.raises(ValueError, match="repeats claim B1's evidence and takes its k: decide B1 with it"):
        _decide([_claim("B2", [repeat], alpha=0.0)])
    with pytest.raises(ValueError, match="must start with the claim id"):
        M.derived("B2", "scaled", "i=0", 0.5, 0.5, 0.05, "within", "x.csv", of="check 0 of B1")


def test_a_claim_without_statistical_checks_needs_no_share_and_one_with_them_does():
    exact = M.exact("B6", "count", "n=1", 0, 0, "x.csv")
    d = _decide([_claim("B6", [exact], alpha=0.0), _claim("B1", _statistical("B1", 2))])
    assert d.shares == {"B1": SE.ALPHA_CLAIM} and math.isnan(d.k_of("B6"))
    with pytest.raises(ValueError, match=r"need a share .* \(Claim.alpha\): C1 \(0.0\)"):
        _decide([_claim("C1", _statistical("C1", 2), alpha=0.0)])
    with pytest.raises(ValueError, match=r"need a share .* C1 \(0.5\)"):
        _decide([_claim("C1", _statistical("C1", 2), alpha=0.5)])


def test_shares_above_the_runs_budget_are_refused_naming_each():
    claims = [_claim(f"B{i}", _statistical(f"B{i}", 1), alpha=3e-5) for i in range(1, 5)]  # 1.2e-4 > 1e-4
    with pytest.raises(ValueError, match=r"sum to 0.00012, above the run's 0.0001 \(B1 3e-05, B2 3e-05, B3 3e-05, "
                                         r"B4 3e-05\): lower some Claim.alpha"):
        _decide(claims)
    assert _decide(claims[:3]).alpha_spent == pytest.approx(9e-5)


@pytest.mark.house
def test_the_registrys_shares_keep_the_runs_promise():
    """The union bound over claims: the shares the registry's claims declare sum to at most ALPHA_FAMILY, whatever
    a run makes of them; a new claim's share that would pass it fails here first, with the shares named."""
    shares = {c.id: c.alpha for c in CLAIMS}
    assert all(0.0 <= a <= SE.ALPHA_FAMILY for a in shares.values()), shares
    assert math.fsum(shares.values()) <= SE.ALPHA_FAMILY, (
        f"the claims' shares sum to {math.fsum(shares.values()):g}, above ALPHA_FAMILY {SE.ALPHA_FAMILY:g}: "
        f"{ {cid: a for cid, a in shares.items() if a} }")


def _drawn() -> list[dict]:
    return draw_configs(20261207, 3, 0.6)  # the schema's space, each run at most 0.6 CPU s by the cost model


@pytest.mark.pipeline  # every experiment of a config, then every claim decided
@pytest.mark.parametrize("which", ["tiny", *(f"drawn {i}" for i in range(3))])
def test_the_per_check_false_alarm_rates_sum_to_at_most_the_budget(which, tiny_config, tmp_path):
    """At a config the schema accepts, every check held to standard errors allows at most the two-sided rate of its
    claim's k (k' >= k: Cornish-Fisher and the exact laws only widen a tail to keep it at the normal's), and those
    rates sum, claim by claim, to each claim's share, and over the run to at most ALPHA_FAMILY."""
    config = tiny_config if which == "tiny" else _drawn()[int(which.split()[1])]
    d = D.decide(write_run(tmp_path, config))
    held = [c for c in d.checks if c.basis in ("statistical", "derived")]
    assert held and all(c.k_prime >= c.k for c in held)
    statistical = [c for c in held if c.basis == "statistical"]
    for cid, share in d.shares.items():
        own = [c for c in statistical if c.claim == cid]
        assert math.fsum(two_sided_rate(c.k) for c in own) == pytest.approx(share, rel=1e-6), cid
    assert {c.claim for c in statistical} == set(d.shares)
    assert math.fsum(two_sided_rate(c.k) for c in statistical) <= SE.ALPHA_FAMILY * (1 + 1e-9)
    assert d.alpha_spent <= SE.ALPHA_FAMILY
