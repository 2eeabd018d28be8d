"""B1-B4, B8 (variance): the variance of q.k grows like d_k; dividing by sqrt(d_k) brings it back to 1.

For each d_k, `n_pairs` fresh (q, k) pairs of independent standard normal
vectors are drawn, so the scores are independent and the textbook standard
error of the sample variance applies. Draws are streamed in chunks: memory
stays bounded whatever n_pairs and d_k are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention
from sdpa_lab.chunks import chunk_rows
from sdpa_lab.experiments.declaration import Experiment, Output
from sdpa_lab.moments import Moments
from sdpa_lab.scales import SCALES, scale_arg
from sdpa_lab.seeding import stream
from sdpa_lab.tables import Rows
from sdpa_lab.validation import check_int, check_int_list, check_seed

# The statistics of each (d_k, scale), one row each.
STATISTICS = ("mean", "variance", "std")


def score_chunks(rng: np.random.Generator, n_pairs: int, d_k: int) -> Iterator[np.ndarray]:
    """Raw scores q.k for n_pairs independent pairs, yielded chunk by chunk."""
    rows = chunk_rows(d_k)  # (rows, d_k) per array
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


def raw_moments(seed: int, d_k: int, n_pairs: int) -> Moments:
    """The moments of the n_pairs raw scores at d_k of seed `seed`'s draws: what variance_rows scales."""
    return score_moments(stream(seed, "variance", d_k), n_pairs, d_k)


def variance_rows(seed: int, d_k_values: Sequence[int], n_pairs: int, attention: Attention = SHIPPED,
                  moments: Mapping[int, Moments] | None = None) -> Rows:
    """Mean, variance and std of the scores per d_k and scale, one row per statistic
    (the scale `attention` multiplies them by: Attention.score_scale, its own for "inv_sqrt_dk").
    `moments`: the raw scores' moments per d_k (raw_moments) if made already (the attention plays no part in them),
    else drawn here."""
    seed, d_k_values = check_seed(seed), check_int_list(d_k_values, "d_k_values")
    n_pairs = check_int(n_pairs, "n_pairs", minimum=2)  # a variance needs two samples
    rows = []
    for d_k in d_k_values:
        raw = raw_moments(seed, d_k, n_pairs) if moments is None else moments[d_k]
        if raw.count != n_pairs:
            raise ValueError(f"the raw moments given at d_k {d_k} are of {raw.count} scores, not n_pairs {n_pairs}")
        for scale in SCALES:
            c = attention.score_scale(d_k, scale_arg(scale, d_k))
            # Scaling by c multiplies the mean by c and the variance by c^2.
            stats = {"mean": raw.mean * c, "variance": raw.variance * c * c}
            stats["std"] = float(np.sqrt(stats["variance"]))
            for statistic, value in stats.items():
                rows.append(
                    {"seed": seed, "d_k": d_k, "n_pairs": n_pairs, "scale": scale,
                     "statistic": statistic, "value": float(value)}
                )
    return rows


def variance_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows variance_tables makes from `settings`: one per d_k, scale and statistic."""
    return {"table": len(settings["d_k"]) * len(SCALES) * len(STATISTICS)}


def variance_tables(settings: Mapping, trial_scores: Mapping[int, str],
                    attention: Attention = SHIPPED) -> dict[str, Rows]:
    """The variance experiment's table (registry.EXPERIMENTS["variance"]), of `attention`'s scale."""
    return {"table": variance_rows(settings["seed"], settings["d_k"], settings["n_pairs"], attention)}


# The experiment this module declares: the registry (experiments/registry.py) gathers it.
def variance_work(settings: Mapping) -> dict[str, float]:
    """The cost model's work (DECLARED's `work`): the pairs' entries drawn, the pairs, a call per d_k."""
    n, d_k = settings["n_pairs"], settings["d_k"]
    return {"pair_dimension": n * sum(d_k), "pair": n * len(d_k), "d_k": len(d_k)}


DECLARED = (
    Experiment(
        "variance", "sdpa_lab.experiments.variance:variance_tables",
        {"table": Output("variance.csv",
                         {"seed": "int", "d_k": "int", "n_pairs": "int", "scale": "str", "statistic": "str",
                          "value": "float"},
                         {"seed": "seed", "d_k": "d_k", "n_pairs": "n_pairs"})},
        claims=("B1", "B2", "B3", "B4", "B8"), section="variance",
        row_counts="sdpa_lab.experiments.variance:variance_row_counts",
        work="sdpa_lab.experiments.variance:variance_work",
        ns_per={"pair_dimension": 17.1, "pair": 6.97, "d_k": 2.32e+05}),
)
