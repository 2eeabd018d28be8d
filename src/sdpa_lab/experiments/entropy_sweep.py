"""B5, B8 (entropy): the unscaled softmax collapses as d_k grows; the scaled one stays spread.

Each trial draws one query and T keys; its softmax weights under each scale
give an entropy and a max weight. Many independent trials per d_k give a
mean with a standard error. Trials are streamed in chunks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from sdpa_lab.attention import entropy, lesson_entropy, softmax
from sdpa_lab.experiments.variance import SCALES, scale_factor
from sdpa_lab.moments import Moments
from sdpa_lab.seeding import lesson_legacy_stream, stream
from sdpa_lab.validation import check_int, check_int_list, check_seed

# Elements (trials * T * d_k) per drawn chunk of keys: 2**20 float64 = 8 MiB.
CHUNK_ELEMENTS = 1 << 20

# Besides the three scales, the scores divided by |q|: given q, K q / |q| is exactly
# T independent N(0, 1) draws, the d_k -> infinity limit of the scaled scores. Its
# entropy is the reference the scaled entropy is compared with (B5).
REFERENCE_SCALE = "unit_variance_reference"
ENTROPY_SCALES = (*SCALES, REFERENCE_SCALE)

# The lesson's Exercise 2, literally: one continuing seeded stream, one draw per d_k.
EXERCISE2_D_K = (4, 16, 64, 256)
EXERCISE2_T = 8


def trial_draws(rng: np.random.Generator, trials: int, T: int, d_k: int):
    """Raw scores (m, T) and query norms |q| (m,) of `trials` independent (query, T keys) draws, in chunks."""
    per_chunk = max(1, CHUNK_ELEMENTS // (T * d_k))
    rng_q, rng_k = rng.spawn(2)  # separate streams: the draws do not depend on the chunk size
    for start in range(0, trials, per_chunk):
        m = min(per_chunk, trials - start)
        q = rng_q.standard_normal((m, d_k))  # (m, d_k)
        K = rng_k.standard_normal((m, T, d_k))  # (m, T, d_k)
        yield np.einsum("mtd,md->mt", K, q), np.linalg.norm(q, axis=-1)  # (m, T), (m,)


def trial_logits(rng: np.random.Generator, trials: int, T: int, d_k: int):
    """Raw scores of `trials` independent (query, T keys) draws, yielded in chunks of shape (m, T)."""
    for raw, _ in trial_draws(rng, trials, T, d_k):
        yield raw


def run_entropy_sweep(seed: int, d_k_values: Sequence[int], T: int, trials: int) -> pd.DataFrame:
    """Mean (and standard error) of softmax entropy and max weight per d_k and scale."""
    seed, d_k_values = check_seed(seed), check_int_list(d_k_values, "d_k_values")
    T, trials = check_int(T, "T", minimum=2), check_int(trials, "trials", minimum=2)
    rows = []
    for d_k in d_k_values:
        acc = {(s, stat): Moments() for s in ENTROPY_SCALES for stat in ("entropy", "max_weight")}
        for raw, q_norm in trial_draws(stream(seed, "entropy_sweep", d_k, T), trials, T, d_k):
            for scale in ENTROPY_SCALES:
                factor = 1.0 / q_norm[:, None] if scale == REFERENCE_SCALE else scale_factor(scale, d_k)
                w = softmax(raw * factor)  # (m, T)
                acc[scale, "entropy"] = acc[scale, "entropy"].merge(Moments.of(entropy(w)))
                acc[scale, "max_weight"] = acc[scale, "max_weight"].merge(Moments.of(w.max(axis=-1)))
        for (scale, quantity), m in acc.items():
            for statistic, value in m.summary().items():
                rows.append({"seed": seed, "d_k": d_k, "T": T, "trials": trials, "scale": scale,
                             "quantity": quantity, "statistic": statistic, "value": float(value)})
    return pd.DataFrame(rows)


def run_entropy_single_draw() -> pd.DataFrame:
    """Exercise 2 as the lesson words it: np.random.seed(42), then for each d_k one query vs 8 keys."""
    rs = lesson_legacy_stream()
    rows = []
    for d_k in EXERCISE2_D_K:
        q = rs.randn(d_k)  # (d_k,)
        K = rs.randn(EXERCISE2_T, d_k)  # (T, d_k)
        raw = K @ q  # (T,)
        for scale in ("none", "inv_sqrt_dk"):
            w = softmax(raw * scale_factor(scale, d_k))
            rows.append({"d_k": d_k, "T": EXERCISE2_T, "scale": scale,
                         "entropy": float(lesson_entropy(w))})
    return pd.DataFrame(rows)
