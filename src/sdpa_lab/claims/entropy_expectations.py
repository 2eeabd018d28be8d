"""Theory's values of the entropy checks that compare other scales or count falls: B8's mean entropy under 1/d_k and
its gap to the one under 1/sqrt(d_k), and B5's Exercise 2 as written (the chance that one fresh draw per d_k gives
entropies falling at every step).

Under a scale c(|q|) the scores of a trial are c K q = c |q| u with u ~ N(0, I_T) independent of |q|, |q|^2 ~
chi^2_{d_k}: the means over |q| are the Gauss rule of claims.expectations, over u its seeded antithetic draws.
Exercise 2's falls are a seeded Monte Carlo of its sequences, the lesson's entropy -sum p log(p + 1e-12) with this
package's theory softmax. Written with their own softmax, independent of the attention code the experiments run.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from sdpa_lab.claims.expectations import (
    DRAW_ELEMENTS,
    _draws,
    _mean_se,
    _pair_means,
    _softmax,
    gamma_rule,
    mean_statistic,
    softmax_statistic,
)
from sdpa_lab.experiments.sizes import EXERCISE2_D_K, EXERCISE2_T
from sdpa_lab.rows import row_sum

# Blocks of draws for the entropy under 1/d_k: its rises between neighbouring d_k are small at wide heads, and their
# measurement's SE with them. As many as hold OVER_D_K_BLOCKS times claims.expectations.DRAW_ELEMENTS scores, at
# least one (a block holds at least 512 draws: more than that many scores past 128 keys, where the entropy of one
# draw, averaged over its many keys, varies little).
OVER_D_K_BLOCKS = 4

# Fresh sequences (one draw per d_k of the exercise each) for the chance that Exercise 2's entropies fall at every
# step, drawn in chunks of FALLS_CHUNK.
FALLS_SEQUENCES = 1 << 17
FALLS_CHUNK = 1 << 14

# The lesson's entropy guard (attention.lesson_entropy): the exercise as written uses it.
LESSON_EPS = 1e-12


@lru_cache(maxsize=256)
def over_d_k_entropy(d_k: int, T: int) -> tuple[float, float]:
    """E H(softmax(K q / d_k)) at head size d_k over T keys, and its Monte Carlo SE."""
    x, w = gamma_rule(d_k / 2.0)
    scales = np.sqrt(2.0 * x) / d_k  # (nodes,) values of |q| / d_k
    means = []
    for block in range(max(1, OVER_D_K_BLOCKS * DRAW_ELEMENTS // max(512 * T, DRAW_ELEMENTS))):
        u = _draws("entropy", d_k, T, 5, block=block)  # (2 pairs, T)
        means.append(_pair_means(w @ np.stack([softmax_statistic("entropy", c * u) for c in scales])))
    return _mean_se(np.concatenate(means))


def over_d_k_gap(d_k: int, T: int, unit_means: Mapping | None = None) -> tuple[float, float]:
    """E H(softmax(K q / d_k)) - E H(softmax(K q / sqrt(d_k))) at head size d_k over T keys, and its Monte Carlo SE:
    the scaled mean claims.expectations' (built on the unit-variance mean, whose many draws make its error small), in
    quadrature with the other's. Exactly 0 at d_k = 1, where the two scales are one. `unit_means`: as
    claims.expectations.mean_statistic's."""
    if d_k == 1:
        return 0.0, 0.0
    over, over_se = over_d_k_entropy(d_k, T)
    scaled, scaled_se = mean_statistic("entropy", d_k, T, scaled=True, unit_means=unit_means)
    return over - scaled, float(np.hypot(over_se, scaled_se))


def lesson_entropy(s: np.ndarray) -> np.ndarray:
    """The lesson's entropy -sum p log(p + 1e-12) of p = softmax(s), per row of s (m, T): (m,)."""
    p, _ = _softmax(s)
    return -row_sum(p * np.log(p + LESSON_EPS))[..., 0]


@lru_cache(maxsize=1)
def one_draw_falls() -> tuple[float, float]:
    """The chance that Exercise 2 run as written, one fresh query against EXERCISE2_T keys per d_k of EXERCISE2_D_K,
    shows the unscaled entropy falling at every step, and its Monte Carlo SE (binomial)."""
    rng = np.random.default_rng([EXERCISE2_D_K[-1], EXERCISE2_T, 1, 6])
    falls = 0
    for start in range(0, FALLS_SEQUENCES, FALLS_CHUNK):
        m = min(FALLS_CHUNK, FALLS_SEQUENCES - start)
        h = [lesson_entropy(np.sqrt(rng.chisquare(d_k, (m, 1))) * rng.standard_normal((m, EXERCISE2_T)))
             for d_k in EXERCISE2_D_K]  # per d_k: (m,) one draw of K q = |q| u each
        falls += int(np.sum(np.all(np.diff(np.stack(h), axis=0) < 0, axis=0)))
    p = falls / FALLS_SEQUENCES
    return p, float(np.sqrt(p * (1.0 - p) / FALLS_SEQUENCES))
