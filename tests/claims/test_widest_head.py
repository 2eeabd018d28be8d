"""B7's widest-head checks take their spread from theory's law of the per-trial scaled minus unscaled difference
(expectations.law, kind "scaled_minus_unscaled"): the law against a direct simulation of that difference, and the
check at the numbers of the calibration run it once failed (a correct run, studentized by its own sample SE)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims import model as M
from sdpa_lab.claims.expectations import law
from sdpa_lab.claims.registry import CLAIMS
from sdpa_lab.experiments.gradient import gradient_rows
from sdpa_lab.results import Results

from tests.claims.tables import LJ, J, by_key

WIDEST_LOG = "mean log10 scaled minus unscaled Jacobian norm at the widest head"


def jacobian_norm(s: np.ndarray) -> np.ndarray:
    """||diag(p) - p p^T||_F of p = softmax(s) per row of s (n, T), the matrix built and normed as written."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    jac = p[:, :, None] * np.eye(s.shape[-1]) - p[:, :, None] * p[:, None, :]
    return np.linalg.norm(jac, axis=(1, 2))


def simulated_difference(d_k: int, T: int, n: int, seed: int) -> np.ndarray:
    """n trials of the scaled minus unscaled Jacobian norm and of its log10 on the same scores s = K q, with q and
    the T keys drawn N(0, I_{d_k}) as the gradient experiment draws them: (2, n)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n // 10_000):
        q, K = rng.standard_normal((10_000, d_k)), rng.standard_normal((10_000, T, d_k))
        s = np.einsum("ntd,nd->nt", K, q)
        scaled, unscaled = jacobian_norm(s / math.sqrt(d_k)), jacobian_norm(s)
        out.append([scaled - unscaled, np.log10(scaled) - np.log10(unscaled)])
    return np.concatenate(out, axis=1)


def shape(x: np.ndarray) -> np.ndarray:
    """sd, skewness and excess kurtosis of the values x."""
    c = x - x.mean()
    sd = c.std()
    return np.array([sd, np.mean(c**3) / sd**3, np.mean(c**4) / sd**4 - 3.0])


@pytest.mark.parametrize("d_k, T", [(4, 8), (24, 48)])  # a small case, and the calibration run's
def test_law_of_the_scaled_minus_unscaled_difference_matches_a_simulation(d_k, T):
    n, batches = 200_000, 20
    for x, name in zip(simulated_difference(d_k, T, n, seed=5), (J, LJ), strict=True):
        sim = shape(x)
        # the simulation's own SE of each shape from the spread of its batches' shapes
        sim_se = np.array([shape(b) for b in np.split(x, batches)]).std(axis=0, ddof=1) / math.sqrt(batches)
        got = law("scaled_minus_unscaled", name, d_k, T)
        for (value, mc_se), want, want_se in zip(got, sim, sim_se, strict=True):
            assert abs(value - want) < 5 * math.hypot(mc_se, want_se), (name, got, sim, sim_se)
        assert got[0][1] < 0.01 * got[0][0]  # the sd's own Monte Carlo error: under 1% of the check's SE


def table_2174(se: float) -> pd.DataFrame:
    """A gradient table of calibration run 2174's config (d_k 24, T 48, 100 trials): measured by the experiment,
    then its widest-head log10 difference set to what that run measured, -0.1335, with sample SE `se` (the run's
    own: 0.0278)."""
    t = pd.DataFrame(gradient_rows(2174, [24], 48, 100))
    row = (t.scale == "inv_sqrt_dk_minus_none") & (t.quantity == LJ)
    t.loc[row & (t.statistic == "mean"), "value"] = -0.1335
    t.loc[row & (t.statistic == "se"), "value"] = se
    t.loc[row & (t.statistic == "std"), "value"] = se * 10
    return t


def widest_log(se: float, k: float = 4.46):
    b7 = [c for c in CLAIMS if c.id == "B7"]
    checks = D.decide(Results("mem", {"gradient.csv": table_2174(se)}), claims=b7, k=k).checks
    return by_key(checks)[WIDEST_LOG, "d_k=24, T=48"]


def test_run_2174s_widest_head_check_is_no_longer_a_fail():
    c = widest_log(0.0278)
    (sd, _), (skewness, _), (kurtosis, _) = law("scaled_minus_unscaled", LJ, 24, 48)
    assert (c.relation, c.expected, c.measured) == ("above", 0.0, -0.1335)
    assert c.se == pytest.approx(sd / 10, rel=1e-12) and c.se > 2 * 0.0278  # theory's sd of one trial, over sqrt(100)
    assert c.skewness == pytest.approx(skewness / 10) and c.excess_kurtosis == pytest.approx(kurtosis / 100)
    assert c.tolerance == pytest.approx(c.k_prime * c.se, rel=1e-12) and c.k_prime >= 4.46
    # studentized by the sample SE 0.0278 it was -4.8 SEs, past k = 4.46; by theory's it is well inside k'
    assert c.measured / c.se > -c.k_prime and c.margin < 1 and c.verdict != M.FAILS


def test_widest_head_tolerance_does_not_move_with_the_sample_se():
    base = widest_log(0.0278)
    for se in (0.01, 0.047, 0.081):  # the same config's other seeds had sample SEs 0.047-0.081
        c = widest_log(se)
        assert (c.se, c.tolerance, c.verdict) == (base.se, base.tolerance, base.verdict)
    # a difference far below theory's spread still fails: the check can fail
    far = D.decide(Results("mem", {"gradient.csv": table_2174(0.0278).assign(
        value=lambda t: t.value.where(~((t.scale == "inv_sqrt_dk_minus_none") & (t.quantity == LJ)
                                        & (t.statistic == "mean")), -3 * base.tolerance))}),
        claims=[c for c in CLAIMS if c.id == "B7"], k=4.46).checks
    assert by_key(far)[WIDEST_LOG, "d_k=24, T=48"].verdict == M.FAILS


def test_expectation_gives_the_paired_law_by_its_kind_and_only_of_the_jacobian_norm():
    from sdpa_lab.claims.expectations import expectation

    assert expectation("scaled_minus_unscaled:skewness", LJ, 4, 8) == law("scaled_minus_unscaled", LJ, 4, 8)[1]
    with pytest.raises(ValueError, match="unknown law 'scaled_minus_unscaled' of 'entropy'"):
        law("scaled_minus_unscaled", "entropy", 4, 8)
    with pytest.raises(ValueError, match="unknown expectation 'scaled_minus_unscaled'"):
        expectation("scaled_minus_unscaled", J, 4, 8)  # its mean is the difference of the two expectations
