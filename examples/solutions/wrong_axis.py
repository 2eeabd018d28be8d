"""A solution with one classic mistake, for `sdpa-lab grade` to name: the softmax runs over axis 1, the
queries, so the columns of the weights sum to 1.
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
    weights = softmax(scores, axis=1)  # (B, T_q, T_k)
    out = weights @ V  # (B, T_q, d_v)
    return out, weights


def exercise_1(n_samples=100_000):
    np.random.seed(42)
    for d_k in [4, 16, 64, 256, 1024]:
        Q = np.random.randn(n_samples, d_k)
        K = np.random.randn(n_samples, d_k)
        scores = np.sum(Q * K, axis=1)
        raw_var = scores.var()
        scaled_var = (scores / np.sqrt(d_k)).var()
        print(f"{d_k:>4} | {raw_var:>15.3f} | {scaled_var:>.4f}")
    return raw_var, scaled_var


def entropy(p):
    return float(-np.sum(p * np.log(p + 1e-12)))


def exercise_2():
    np.random.seed(42)
    entropies = []
    for d_k in [4, 16, 64, 256]:
        q = np.random.randn(d_k)
        Kmat = np.random.randn(8, d_k)
        entropies.append(entropy(softmax(Kmat @ q)))
        print(d_k, entropies[-1])
    return entropies


def exercise_3():
    np.random.seed(42)
    q = np.random.randn(256)
    Kmat = np.random.randn(8, 256)
    w_unscaled = softmax(Kmat @ q)
    w_scaled = softmax(Kmat @ q / np.sqrt(256))
    return np.argsort(w_unscaled), np.argsort(w_scaled)
