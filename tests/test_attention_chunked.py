"""scaled_dot_product_attention_chunked: the same output as the full forward, a chunk of queries at a time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_lab import scaled_dot_product_attention
from sdpa_lab.attention import scaled_dot_product_attention_chunked


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=0, max_size=2),
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(1, 9),
    st.integers(1, 17),
    st.sampled_from([np.float32, np.float64]),
    st.integers(0, 2**32 - 1),
)
def test_chunked_matches_full_forward(batch, T_q, T_k, d, chunk_size, dtype, seed):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((*batch, T_q, d)).astype(dtype)
    K = rng.standard_normal((*batch, T_k, d)).astype(dtype)
    V = rng.standard_normal((*batch, T_k, 3)).astype(dtype)
    full, _ = scaled_dot_product_attention(Q, K, V)
    out = scaled_dot_product_attention_chunked(Q, K, V, chunk_size=chunk_size)
    assert out.shape == full.shape and out.dtype == dtype
    np.testing.assert_allclose(out, full, rtol=0, atol=1e-6)


def test_chunked_matches_at_benchmark_size_and_broadcasts_batch():
    rng = np.random.default_rng(3)
    Q = rng.standard_normal((2, 300, 64)).astype(np.float32)
    K = rng.standard_normal((1, 200, 64)).astype(np.float32)  # broadcast over the batch
    V = rng.standard_normal((200, 16)).astype(np.float32)
    full, _ = scaled_dot_product_attention(Q, K, V, scale=0.5)
    out = scaled_dot_product_attention_chunked(Q, K, V, scale=0.5, chunk_size=64)
    assert out.shape == (2, 300, 16) and out.dtype == np.float32
    # The two run their float32 matmuls on differently shaped blocks, so BLAS may sum in another
    # order: a score can differ by up to d_k * eps * scale * sum_i |q_i k_i| (the standard dot
    # product bound), which moves a softmax-weighted mean of V by at most 2 * that * max|V|.
    eps = np.finfo(np.float32).eps
    score_err = 64 * eps * 0.5 * np.max(np.abs(Q) @ np.abs(K).swapaxes(-1, -2))
    np.testing.assert_allclose(out, full, rtol=0, atol=2 * score_err * np.abs(V).max())


def test_chunked_checks_inputs_like_the_full_forward():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="last dimension d_k"):
        scaled_dot_product_attention_chunked(np.zeros((2, 4)), np.zeros((2, 5)), x)
    with pytest.raises(ValueError, match="scale"):
        scaled_dot_product_attention_chunked(x, x, x, scale=-1.0)
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="chunk_size"):
            scaled_dot_product_attention_chunked(x, x, x, chunk_size=bad)
