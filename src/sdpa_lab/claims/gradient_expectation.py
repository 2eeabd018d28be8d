"""Theory's ratio of the gradient an unscaled and a scaled softmax pass to their scores (B7's gradient at the scores).

The gradient experiment's trial draws scores K q, values V (T, d_v) and an upstream gradient g ~ N(0, I_dv), and
measures ||J V g|| under each scale, J = diag(p) - p p^T. Given g, V g ~ N(0, |g|^2 I_T), so ||J V g|| = |g| ||J z||
with z ~ N(0, I_T) independent of the scores and of |g|, the same z and |g| under both scales of a trial: the ratio
of the two mean norms is E ||J_unscaled z|| / E ||J_scaled z||, whatever d_v (E |g| cancels). Each is averaged over
|q| by the Gauss rule of claims.expectations (K q = |q| u, u ~ N(0, I_T)), and each seeded draw of (u, z) exactly
over its top score (claims.top_score: where the unscaled softmax saturates, a plain average is the noise of a few
near-ties). Both means come from the same draws, so the ratio's Monte Carlo SE is the delta method's on the draws'
paired values. Written with its own algebra, independent of the attention code the experiments run.

No check holds B7's gradient falls to it today: a pre-registered study over the config space found the run's side
wanting (at wide heads a few trials' mean of the saturated gradient sits below this expectation, and the delta-method
SE from their sds is far too small: 4 false fails in 1,700 runs), so those falls are decided "above 0" alone until
the run's mean has an SE from theory's law of one trial (docs/claims/softmax-saturation.md).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from sdpa_lab.claims.expectations import STATISTICS, gamma_rule
from sdpa_lab.claims.top_score import conditional_gradient_norm

# Draws of (u, z): about this many score entries (draws * T), from MIN_DRAWS to MAX_DRAWS draws (few keys: each
# draw's ratio terms vary little, and the conditional norms cost per draw, not per key; many keys: at 1024 of them
# fewer than MIN_DRAWS leave theory's sign of the ratio's fall from d_k = 16 to 64 within 4 of its Monte Carlo SEs).
DRAW_ENTRIES = 1 << 16
MIN_DRAWS, MAX_DRAWS = 1024, 8192

# Draws per block the conditional norms are computed on at once: bounds the (draws, Laguerre nodes) arrays.
BLOCK_DRAWS = 4096

# Laguerre nodes over the top score (claims.top_score): 16 give the ratio to within 3e-8 of 32 and 64 at T 2 to 64
# and d_k 4 to 4096 on the same draws, far below its Monte Carlo SE (about 1e-3 of it), at half the cost.
RATIO_TOP_NODES = 16


def _draws(d_k: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded scores u and upstream gradients z, each (draws, T) ~ N(0, I): a stream of their own (key [d_k, T, the
    statistic's place after claims.expectations.STATISTICS, 5])."""
    rng = np.random.default_rng([d_k, T, len(STATISTICS), 5])
    draws = min(MAX_DRAWS, max(MIN_DRAWS, DRAW_ENTRIES // T))
    return rng.standard_normal((draws, T)), rng.standard_normal((draws, T))


@lru_cache(maxsize=64)
def gradient_ratio(d_k: int, T: int) -> tuple[float, float]:
    """E ||J z|| of the unscaled softmax over that of the scaled one (scores K q and K q / sqrt(d_k)) at head size
    d_k over T keys, and its Monte Carlo SE (the delta method on the per-draw pairs)."""
    if d_k < 1 or T < 2:
        raise ValueError(f"the gradient ratio needs d_k >= 1 and T >= 2 (got d_k={d_k}, T={T})")
    x, w = gamma_rule(d_k / 2.0)
    q_norm = np.sqrt(2.0 * x)  # (nodes,) values of |q|
    u, z = _draws(d_k, T)
    pairs = []  # per draw: the unscaled and the scaled norm, each averaged over |q|
    for start in range(0, len(u), BLOCK_DRAWS):
        block = slice(start, start + BLOCK_DRAWS)
        norms = conditional_gradient_norm(u[block], z[block], np.concatenate([q_norm, q_norm / np.sqrt(d_k)]),
                                          RATIO_TOP_NODES)
        pairs.append([w @ norms[: len(w)], w @ norms[len(w):]])
    unscaled, scaled = (np.concatenate(side) for side in zip(*pairs, strict=True))
    ratio = float(unscaled.mean() / scaled.mean())
    se = float(np.std(unscaled - ratio * scaled, ddof=1) / (scaled.mean() * np.sqrt(len(u))))
    return ratio, se
