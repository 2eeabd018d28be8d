"""The solutions skeleton a learner fills in: the functions `sdpa-lab grade` checks, and what each must return."""

from __future__ import annotations

import os
from pathlib import Path

SKELETON = '''\
"""My solutions to Lesson 2, Scaled Dot-Product Attention.

Fill in each function, then run `sdpa-lab grade {name}`. The grader imports this
file in a separate process and calls the functions below; keep their names and
what they return. Printing is fine (the grader ignores it).
"""

import numpy as np


def softmax(x, axis=-1):
    """Turn scores into probabilities along `axis`: exp(x) / sum(exp(x)).

    Use the numerically stable softmax: subtract the max along `axis`
    (keepdims=True), exponentiate, normalize. Returns an array of x's shape and
    dtype (float32 in, float32 out), non-negative, summing to 1 along `axis`,
    with no overflow for large scores.
    """
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V):
    """The canonical forward softmax(Q K^T / sqrt(d_k)) V. Returns (output, weights).

    Q: (B, T_q, d_k), K: (B, T_k, d_k), V: (B, T_k, d_v); in the lesson T_q = T_k = T
    and d_v = d_k. Four steps: score, scale, normalize, average:
      scores  = Q K^T / sqrt(d_k)          (B, T_q, T_k)
      weights = softmax over the last axis  (B, T_q, T_k), every row sums to 1
      output  = weights V                   (B, T_q, d_v)
    Return the tuple (output, weights), in that order, in the dtype of the
    inputs (float32 in, float32 out).
    """
    raise NotImplementedError


def exercise_1(seed=42, n_samples=100_000, d_k=1024):
    """Exercise 1: Measure the Variance at d_k = 1024.

    Reuse the Experiment 1 pattern with np.random.seed(seed): seed once, then for
    each d_k of the lesson's sweep [4, 16, 64, 256] smaller than d_k, and then d_k,
    draw Q = np.random.randn(n_samples, d_k) and K = np.random.randn(n_samples, d_k),
    and compute one dot-product score per pair, scores = np.sum(Q * K, axis=1).
    (Drawing d_k alone after seeding is accepted too, and so is another generator,
    such as np.random.default_rng(seed), decided on the statistics alone: only
    np.random.seed's stream gives the lesson's printed digits.) Return the tuple
    (raw_variance, scaled_variance) for d_k: scores.var() and
    (scores / np.sqrt(d_k)).var(). The raw variance should be near d_k and the
    scaled variance near 1. The defaults are the lesson's; the grader also calls
    it with other seeds and sizes, so use the arguments, not fixed numbers.
    """
    raise NotImplementedError


def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):
    """Exercise 2: Sweep the Softmax Entropy Across d_k.

    Call np.random.seed(seed) once; then for each d_k in d_ks, in that order,
    build one query against T keys, q = np.random.randn(d_k) and
    Kmat = np.random.randn(T, d_k), take the softmax of the unscaled raw scores
    Kmat @ q, and compute its entropy -sum(p * log(p + 1e-12)) (natural log).
    Return the entropies as a list, in the order of d_ks. One draw need not
    fall at every step; the trend shows over many draws. The defaults are the
    lesson's; the grader also calls it with other seeds and sizes.
    """
    raise NotImplementedError


def exercise_3(seed=42, d_k=256, T=8):
    """Exercise 3: Confirm Scaling Does Not Change the Ranking.

    One query against T keys, the lesson's draw: call np.random.seed(seed), then
    q = np.random.randn(d_k) and Kmat = np.random.randn(T, d_k). Compute
    w_unscaled = softmax(Kmat @ q) and w_scaled = softmax(Kmat @ q / np.sqrt(d_k)).
    Return the tuple (np.argsort(w_unscaled), np.argsort(w_scaled)): two arrays
    of the T positions, which should be equal. The defaults are the lesson's;
    the grader also calls it with other seeds and sizes.
    """
    raise NotImplementedError
'''


def write_skeleton(path: str | os.PathLike) -> Path:
    """Write the skeleton to `path`; never overwrites an existing file (FileExistsError)."""
    path = Path(path)
    with open(path, "x", encoding="utf-8") as f:  # "x": fails if the file exists
        f.write(SKELETON.format(name=path.name))
    return path
