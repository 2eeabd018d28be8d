"""B1-B4, B8 (variance): the variance of q.k grows like d_k; dividing by sqrt(d_k) brings it back to 1.

For each d_k, `n_pairs` fresh (q, k) pairs of independent standard normal
vectors are drawn, so the scores are independent and the textbook standard
error of the sample variance applies. Draws are streamed in chunks: memory
stays bounded whatever n_pairs and d_k are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from sdpa_lab.moments import Moments
from sdpa_lab.seeding import stream
from sdpa_lab.tables import Rows, frame
from sdpa_lab.validation import check_int, check_int_list, check_seed

if TYPE_CHECKING:  # experiment jobs build rows and never import pandas
    import pandas as pd

# Elements (rows * d_k) per drawn chunk: 2**20 float64 = 8 MiB per array.
CHUNK_ELEMENTS = 1 << 20

# The scales the variance is measured under (B8): none, 1/sqrt(d_k), 1/d_k.
SCALES = ("none", "inv_sqrt_dk", "inv_dk")


def scale_difference(a: str, b: str) -> str:
    """The `scale` label of rows holding, trial by trial, a quantity under scale `a` minus under `b`.

    Two scales applied to the same trials give correlated values, so a claim that
    compares them needs the spread of their per-trial difference, not of each alone.
    """
    return f"{a}_minus_{b}"


def scale_factor(scale: str, d_k: int) -> float:
    """The number the raw scores are multiplied by under `scale`."""
    factors = {"none": 1.0, "inv_sqrt_dk": 1.0 / np.sqrt(d_k), "inv_dk": 1.0 / d_k}
    if scale not in factors:
        raise ValueError(f"unknown scale {scale!r}; expected one of {SCALES}")
    return float(factors[scale])


def chunk_rows(d_k: int) -> int:
    """Rows per chunk so that one (rows, d_k) array holds about CHUNK_ELEMENTS."""
    return max(1, CHUNK_ELEMENTS // d_k)


def score_chunks(rng: np.random.Generator, n_pairs: int, d_k: int) -> Iterator[np.ndarray]:
    """Raw scores q.k for n_pairs independent pairs, yielded chunk by chunk."""
    rows = chunk_rows(d_k)
    rng_q, rng_k = rng.spawn(2)  # separate streams: the draws do not depend on the chunk size
    for start in range(0, n_pairs, rows):
        m = min(rows, n_pairs - start)
        q = rng_q.standard_normal((m, d_k))  # (m, d_k)
        k = rng_k.standard_normal((m, d_k))  # (m, d_k)
        yield np.einsum("ij,ij->i", q, k)  # (m,) row-wise dot products, no (m, d_k) temporary


def score_moments(rng: np.random.Generator, n_pairs: int, d_k: int) -> Moments:
    """Streaming mean and variance of n_pairs raw scores."""
    total = Moments()
    for s in score_chunks(rng, n_pairs, d_k):
        total = total.merge(Moments.of(s))
    return total


def variance_rows(seed: int, d_k_values: Sequence[int], n_pairs: int) -> Rows:
    """Mean, variance and std of the scores per d_k and scale, one row per statistic."""
    seed, d_k_values = check_seed(seed), check_int_list(d_k_values, "d_k_values")
    n_pairs = check_int(n_pairs, "n_pairs", minimum=2)  # a variance needs two samples
    rows = []
    for d_k in d_k_values:
        raw = score_moments(stream(seed, "variance", d_k), n_pairs, d_k)
        for scale in SCALES:
            c = scale_factor(scale, d_k)
            # Scaling by c multiplies the mean by c and the variance by c^2.
            stats = {"mean": raw.mean * c, "variance": raw.variance * c * c}
            stats["std"] = float(np.sqrt(stats["variance"]))
            for statistic, value in stats.items():
                rows.append(
                    {"seed": seed, "d_k": d_k, "n_pairs": n_pairs, "scale": scale,
                     "statistic": statistic, "value": float(value)}
                )
    return rows


def run_variance(seed: int, d_k_values: Sequence[int], n_pairs: int) -> pd.DataFrame:
    """variance_rows, as a DataFrame."""
    return frame(variance_rows(seed, d_k_values, n_pairs))


def variance_tables(settings: Mapping, trial_scores: Mapping[int, str]) -> dict[str, Rows]:
    """The variance experiment's table (registry.EXPERIMENTS["variance"])."""
    return {"table": variance_rows(settings["seed"], settings["d_k"], settings["n_pairs"])}
