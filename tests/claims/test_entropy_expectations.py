"""Theory's entropy under 1/d_k and Exercise 2's chance of a fall at every step (claims.entropy_expectations),
against plain Monte Carlo of the experiments' designs: q and K drawn, the entropy of the softmax written out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.claims.entropy_expectations import one_draw_falls, over_d_k_entropy, over_d_k_gap
from sdpa_lab.claims.expectation_kinds import expectation, unit_variance_asked


def _entropy(s: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """-sum p log(p + eps) of p = softmax(s), row by row (eps: the lesson's guard; 0 with 0 log 0 = 0)."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) + eps), 0.0), axis=-1)


def _raw_scores(rng: np.random.Generator, d_k: int, T: int, n: int) -> np.ndarray:
    """K q of n fresh (q, K): (n, T)."""
    return np.einsum("ntd,nd->nt", rng.standard_normal((n, T, d_k)), rng.standard_normal((n, d_k)))


@pytest.mark.parametrize("d_k, T", [(2, 8), (16, 3), (32, 40)])
def test_the_entropy_under_one_over_d_k_and_its_gap_match_plain_monte_carlo(d_k, T):
    raw = _raw_scores(np.random.default_rng(d_k), d_k, T, 20000)
    over, scaled = _entropy(raw / d_k), _entropy(raw / math.sqrt(d_k))
    for (mean, se), x in ((over_d_k_entropy(d_k, T), over), (over_d_k_gap(d_k, T), over - scaled)):
        plain_se = x.std(ddof=1) / math.sqrt(len(x))
        assert abs(mean - x.mean()) < 4.5 * math.hypot(se, plain_se), (mean, x.mean(), se, plain_se)
        assert se > 0


def test_at_one_head_the_two_scales_are_one_and_the_gap_reads_the_unit_variance_means_given():
    assert over_d_k_gap(1, 8) == (0.0, 0.0)
    assert ("entropy", 8) in unit_variance_asked([("inv_dk_minus_scaled", "entropy", 16, 8)])
    unit = {("entropy", 8): (1.5, 0.0)}  # a made-up unit-variance mean: the gap is taken against it
    assert over_d_k_gap(16, 8, unit)[0] != over_d_k_gap(16, 8)[0]


def test_exercise_twos_chance_of_a_fall_at_every_step_matches_the_exercise_drawn_plainly():
    rng = np.random.default_rng(7)
    n = 6000
    h = np.stack([_entropy(_raw_scores(rng, d_k, 8, n), eps=1e-12) for d_k in (4, 16, 64, 256)])
    plain = float(np.mean(np.all(np.diff(h, axis=0) < 0, axis=0)))
    chance, se = one_draw_falls()
    assert abs(chance - plain) < 4.5 * math.hypot(se, math.sqrt(chance * (1 - chance) / n)), (chance, plain)
    assert expectation("one_draw_falls", "entropy", 256, 8) == (chance, se)
    with pytest.raises(ValueError, match="Exercise 2's, at d_k=256 and T=8 only"):
        expectation("one_draw_falls", "entropy", 64, 8)
