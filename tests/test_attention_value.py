"""attention.Attention, the attention an experiment takes as an argument: the shipped one (SHIPPED) is this module's
functions exactly; one with another scale or backward is those functions with it, where no scale is given."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_lab import attention
from sdpa_lab.attention import SHIPPED, Attention


def draws(seed: int, d_k: int, d_v: int = 3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, 4, d_k)), rng.standard_normal((2, 5, d_k)), rng.standard_normal((2, 5, d_v))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d_k=st.integers(1, 64), scale=st.sampled_from([None, 0.25, 3.0]))
def test_the_shipped_attention_is_the_module_functions_bit_for_bit(seed, d_k, scale):
    Q, K, V = draws(seed, d_k)
    for got, want in zip(SHIPPED.forward(Q, K, V, scale), attention.scaled_dot_product_attention(Q, K, V, scale),
                         strict=True):
        np.testing.assert_array_equal(got, want)
    raw = (Q @ np.swapaxes(K, -1, -2)).astype(np.float32)
    np.testing.assert_array_equal(SHIPPED.weights(raw, d_k, scale), attention.attention_weights(raw, d_k, scale))
    assert SHIPPED.score_scale(d_k, scale) == attention.score_scale(d_k, scale)
    p, g = attention.softmax(raw), np.ones_like(raw)
    np.testing.assert_array_equal(SHIPPED.backward(p, g), attention.softmax_backward(p, g))
    np.testing.assert_array_equal(SHIPPED.jacobian(p), attention.softmax_jacobian(p))


@pytest.mark.parametrize("own", [lambda d_k: 1.0, lambda d_k: 1.0 / d_k, lambda d_k: 7.5])
def test_another_scale_is_used_where_none_is_given_and_only_there(own):
    Q, K, V = draws(3, 16)
    other = Attention(scale=own)
    assert other.score_scale(16) == own(16) and other.score_scale(16, 0.5) == 0.5
    s = own(16) * (Q @ np.swapaxes(K, -1, -2))  # the weights written out, with that scale
    want = np.exp(s - s.max(axis=-1, keepdims=True))
    want /= want.sum(axis=-1, keepdims=True)
    out, weights = other.forward(Q, K, V)
    np.testing.assert_allclose(weights, want, rtol=1e-12)
    np.testing.assert_allclose(out, want @ V, rtol=1e-12)
    np.testing.assert_allclose(other.weights(Q @ np.swapaxes(K, -1, -2), 16), want, rtol=1e-12)
    np.testing.assert_array_equal(other.forward(Q, K, V, 0.5)[1], SHIPPED.forward(Q, K, V, 0.5)[1])  # given: kept
    assert other.backward is SHIPPED.backward


def test_another_backward_makes_the_jacobian_and_nothing_else():
    def diagonal(p, g):
        return p * g

    other = dataclasses.replace(SHIPPED, backward=diagonal)
    p = attention.softmax(np.random.default_rng(5).standard_normal((3, 6)))
    np.testing.assert_array_equal(other.jacobian(p), np.stack([np.diag(row) for row in p]))
    Q, K, V = draws(5, 8)
    np.testing.assert_array_equal(other.forward(Q, K, V)[0], SHIPPED.forward(Q, K, V)[0])


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_a_scale_that_is_not_positive_and_finite_is_refused(bad):
    Q, K, V = draws(1, 4)
    with pytest.raises(ValueError, match="scale must be a positive finite number"):
        Attention(scale=lambda d_k: bad).forward(Q, K, V)
    with pytest.raises(ValueError, match="scale must be a positive finite number"):
        Attention(scale=lambda d_k: bad).weights(np.zeros((2, 3)), 4)


def test_the_shipped_attention_applies_the_module_default_scale_when_called(monkeypatch):
    # the shipped attention's own scale is the module's default_scale, looked up when called: a change made to the
    # module from a test (tests/test_mutation_checks.py) reaches every experiment through it
    monkeypatch.setattr(attention, "default_scale", lambda d_k: 0.125)
    assert SHIPPED.score_scale(16) == 0.125
