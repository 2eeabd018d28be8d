"""A fake, for `sdpa-lab grade` to catch: Exercise 1 returns the theory's variances plus noise of
the right size without drawing any scores. At the lesson's sizes it looks right; at small sizes its
variances are not a sample variance's (some are negative), so the draws check fails.
"""

import math

import numpy as np


def softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)  # subtract row max for stability
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V):
    # Q: (B, T_q, d_k), K: (B, T_k, d_k), V: (B, T_k, d_v)
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(0, 2, 1) / math.sqrt(d_k)  # (B, T_q, T_k); a Python float keeps float32
    weights = softmax(scores, axis=-1)  # (B, T_q, T_k)
    out = weights @ V  # (B, T_q, d_v)
    return out, weights


def exercise_1(seed=42, n_samples=100_000, d_k=1024):
    # Not a solution: the theory's variances plus noise of the right size, no scores drawn.
    rng = np.random.default_rng(seed)
    raw = d_k + rng.normal(0.0, d_k * np.sqrt((2 + 6 / d_k) / n_samples))
    return raw, raw / d_k


def entropy(p):
    return float(-np.sum(p * np.log(p + 1e-12)))


def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):
    np.random.seed(seed)
    entropies = []
    for d_k in d_ks:
        q = np.random.randn(d_k)
        Kmat = np.random.randn(T, d_k)
        entropies.append(entropy(softmax(Kmat @ q)))
        print(d_k, entropies[-1])
    return entropies


def exercise_3(seed=42, d_k=256, T=8):
    np.random.seed(seed)
    q = np.random.randn(d_k)
    Kmat = np.random.randn(T, d_k)
    w_unscaled = softmax(Kmat @ q)
    w_scaled = softmax(Kmat @ q / np.sqrt(d_k))
    return np.argsort(w_unscaled), np.argsort(w_scaled)
