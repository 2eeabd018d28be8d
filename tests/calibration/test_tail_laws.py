"""The tail table's predictions and the QQ figure's scores where a check names its statistic's exact law
(calibration.tails): against a closed form, a seeded simulation, and the normal law where a check names none."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from sdpa_lab.calibration.summary import tails
from sdpa_lab.calibration.tails import TAIL_THRESHOLDS, law_tails, normal_scores
from sdpa_lab.claims import exact_laws
from sdpa_lab.claims.standard_errors import log_std_cumulants, variance_se
from sdpa_lab.rates import normal_tail

from tests.calibration.test_tails import checks


def _two_laplace_squares_tail(t: float) -> float:
    """P(|z| > t) for the variance law of n = 2 scores of length 2, computed apart from the lattice: a score of length
    2 is Laplace(0, 1), so its square Y has P(Y > y) = exp(-sqrt(y)), and the law's X = Y1 + Y2 has
    P(X > x) = exp(-sqrt(x)) + int_0^sqrt(x) exp(-u - sqrt(x - u^2)) du (Y1 = u^2); the variance is X - d at n = 2."""
    from scipy import integrate

    def above(x: float) -> float:
        if x <= 0:
            return 1.0
        inner = integrate.quad(lambda u: math.exp(-u - math.sqrt(max(x - u * u, 0.0))), 0, math.sqrt(x),
                               epsabs=1e-14, epsrel=1e-10, limit=200)[0]
        return math.exp(-math.sqrt(x)) + inner

    d, se = 2, variance_se(2, 2)
    return above(2 * d + t * se) + 1.0 - above(2 * d - t * se)


def test_a_variance_law_s_tail_prediction_is_the_closed_form_s():
    predicted = law_tails("variance 2 2", 0.0, 1.0)
    for t, p in zip(TAIL_THRESHOLDS, predicted, strict=True):
        assert p == pytest.approx(_two_laplace_squares_tail(t), rel=0.02), t
        assert p > 3 * normal_tail(t)  # far heavier than a normal z's


def test_a_std_ratio_law_s_tail_prediction_is_that_of_its_simulation():
    """10,000 seeded std ratios d_k 1 -> 2 of 1000 scores each, z taken with B3's SE: the count of |z| > 3 is the
    law's prediction within 4 Poisson SEs; past 4 and 4.5 the law predicts more than a normal z (as the
    pre-registered study saw)."""
    n, runs, part = 1000, 10_000, 2000
    rng = np.random.default_rng(56)
    s2 = {1: np.empty(runs), 2: np.empty(runs)}
    for start in range(0, runs, part):
        for d in (1, 2):
            s = np.einsum("rnd,rnd->rn", rng.standard_normal((part, n, d)), rng.standard_normal((part, n, d)))
            s2[d][start:start + part] = s.var(axis=1, ddof=1)
    expected = math.sqrt(2)
    se = expected * math.sqrt(log_std_cumulants(1, n)[0] + log_std_cumulants(2, n)[0])  # as B3 takes it
    z = (np.sqrt(s2[2] / s2[1]) - expected) / se
    at_3, at_4, at_45 = law_tails(f"ratio 1 2 {n}", expected, se)
    observed = int(np.sum(np.abs(z) > 3))
    assert abs(observed - runs * at_3) <= 4 * math.sqrt(runs * at_3), (observed, runs * at_3)
    assert at_4 > 2 * normal_tail(4) and at_45 > 3 * normal_tail(4.5)


def test_a_family_s_prediction_adds_its_laws_and_a_normal_family_s_is_unchanged():
    law = "variance 1 1000"
    mixed = pd.concat([checks({"v": [0.0] * 300}, law=law), checks({"v": [0.0] * 700}),
                       checks({"plain": [0.0] * 1000})], ignore_index=True)
    t = tails(mixed).set_index("check")
    exact = law_tails(law, 0.0, 1.0)
    for i, threshold in enumerate(TAIL_THRESHOLDS):
        column = f"predicted_over_{threshold}"
        assert t.loc["v", column] == pytest.approx(300 * exact[i] + 700 * normal_tail(threshold), rel=1e-12)
        assert t.loc["v", f"normal_over_{threshold}"] == pytest.approx(1000 * normal_tail(threshold), rel=1e-12)
        assert t.loc["plain", column] == t.loc["plain", f"normal_over_{threshold}"] == 1000 * normal_tail(threshold)
        assert t.loc["all", column] == pytest.approx(t.loc["v", column] + t.loc["plain", column], rel=1e-12)
    assert t.loc["v", "predicted_over_4"] > 2 * t.loc["v", "normal_over_4"]  # 300 of d_k = 1 double the tail


def test_a_lattice_too_large_is_predicted_normal():
    too_large = "variance 1 100000000"
    assert exact_laws.sum_law(1, 100_000_000) is None
    assert law_tails(too_large, 0.0, 1.0) == tuple(normal_tail(t) for t in TAIL_THRESHOLDS)


def test_a_law_s_normal_score_is_its_cdf_on_the_normal_scale_and_a_plain_z_is_kept():
    d, n = 1, 1000
    z = np.array([-3.0, -1.0, 0.0, 0.7, 2.5, 4.0, 6.0])
    rows = pd.concat([checks({"v": z.tolist()}, law=f"variance {d} {n}"), checks({"plain": z.tolist()})],
                     ignore_index=True)
    scores = normal_scores(rows).to_numpy()
    below, above = exact_laws.z_law(("variance", d, n), z, 0.0, 1.0)
    want = [NormalDist().inv_cdf(b) if b < 0.5 else -NormalDist().inv_cdf(a) for b, a in zip(below, above, strict=True)]
    np.testing.assert_allclose(scores[:len(z)], want, atol=2e-3)
    assert scores[len(z) - 1] < z[-1] - 0.5  # a heavy upper tail: z = 6 is not six normal SDs out
    assert (scores[len(z):] == z).all()


def test_a_law_key_reads_back_and_an_unknown_one_is_refused():
    for law in (("variance", 1, 1000), ("ratio", 2, 4, 1000)):
        assert exact_laws.read_law(exact_laws.law_text(law)) == law
    assert exact_laws.law_text(None) == "" and exact_laws.read_law("") is None and exact_laws.read_law(math.nan) is None
    with pytest.raises(ValueError, match="unknown law"):
        exact_laws.z_law(("mean", 1, 2), np.zeros(1), 0.0, 1.0)
