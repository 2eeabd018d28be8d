"""A correct solution whose Exercises 2 and 3 draw the eight keys before the query: the lesson fixes
neither the order nor the seed, so `sdpa-lab grade` passes it, decided over many seeds, with a note
that the lesson's printed numbers need its order.
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
    np.random.seed(seed)
    for d in [x for x in [4, 16, 64, 256] if x < d_k] + [d_k]:  # the lesson's sweep, continued to d_k
        Q = np.random.randn(n_samples, d)
        K = np.random.randn(n_samples, d)
        scores = np.sum(Q * K, axis=1)
        raw_var = scores.var()
        scaled_var = (scores / np.sqrt(d)).var()
        print(f"{d:>4} | {raw_var:>15.3f} | {scaled_var:>.4f}")
    return raw_var, scaled_var


def entropy(p):
    return float(-np.sum(p * np.log(p + 1e-12)))


def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):
    np.random.seed(seed)
    entropies = []
    for d_k in d_ks:
        Kmat = np.random.randn(T, d_k)  # the keys first
        q = np.random.randn(d_k)
        entropies.append(entropy(softmax(Kmat @ q)))
        print(d_k, entropies[-1])
    return entropies


def exercise_3(seed=42, d_k=256, T=8):
    np.random.seed(seed)
    Kmat = np.random.randn(T, d_k)  # the keys first
    q = np.random.randn(d_k)
    w_unscaled = softmax(Kmat @ q)
    w_scaled = softmax(Kmat @ q / np.sqrt(d_k))
    return np.argsort(w_unscaled), np.argsort(w_scaled)
