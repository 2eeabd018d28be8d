"""B7: softmax Jacobian and score-gradient norms, against independent computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_lab import chunks
from sdpa_lab.attention import SHIPPED, softmax
from sdpa_lab.experiments import gradient
from sdpa_lab.seeding import stream

logits = arrays(np.float64, st.integers(2, 12), elements=st.floats(-50, 50, allow_nan=False))


def loop_jacobian(p):
    """dp_i/ds_j = p_i (delta_ij - p_j), entry by entry."""
    T = len(p)
    return np.array([[p[i] * ((i == j) - p[j]) for j in range(T)] for i in range(T)])


@given(logits)
@settings(max_examples=50, deadline=None)
def test_jacobian_is_symmetric_with_zero_row_sums(s):
    J = SHIPPED.jacobian(softmax(s))
    np.testing.assert_allclose(J, J.T, atol=0)
    np.testing.assert_allclose(J @ np.ones(len(s)), 0.0, atol=1e-15)  # J 1 = 0: shifting all scores changes nothing
    assert np.all(np.linalg.eigvalsh(J) > -1e-15)  # positive semi-definite


def test_jacobian_matches_loop_and_finite_differences():
    rng = np.random.default_rng(0)
    s = rng.standard_normal((3, 6)) * 2  # (m, T)
    J = SHIPPED.jacobian(softmax(s))  # (m, T, T)
    assert J.shape == (3, 6, 6)
    h = 1e-6
    for i in range(3):
        np.testing.assert_allclose(J[i], loop_jacobian(softmax(s[i])), rtol=1e-14, atol=1e-16)
        fd = np.stack([(softmax(s[i] + h * e) - softmax(s[i] - h * e)) / (2 * h) for e in np.eye(6)], axis=1)
        np.testing.assert_allclose(J[i], fd, rtol=1e-6, atol=1e-10)


def test_gradient_norms_against_loops_and_finite_differences():
    rng = np.random.default_rng(1)
    m, T, d_v, c = 4, 5, 3, 0.5
    raw, V, g = rng.standard_normal((m, T)) * 3, rng.standard_normal((m, T, d_v)), rng.standard_normal((m, d_v))
    got = gradient.gradient_norms(raw, V, g, 7, c)  # d_k = 7: the scale is given
    h = 1e-6
    for i in range(m):
        p = softmax(c * raw[i])
        J = loop_jacobian(p)
        assert got["jacobian_norm"][i] == pytest.approx(np.sqrt(sum(J[a, b] ** 2 for a in range(T) for b in range(T))))

        def loss(s, i=i):  # g . out, whose gradient at the output is g
            return g[i] @ (softmax(s) @ V[i])

        s0 = c * raw[i]
        fd = np.array([(loss(s0 + h * e) - loss(s0 - h * e)) / (2 * h) for e in np.eye(T)])  # dL/ds
        assert got["score_grad_norm"][i] == pytest.approx(np.linalg.norm(fd), rel=1e-6)
        fd_raw = np.array([(loss(c * (raw[i] + h * e)) - loss(c * (raw[i] - h * e))) / (2 * h) for e in np.eye(T)])
        assert got["raw_score_grad_norm"][i] == pytest.approx(np.linalg.norm(fd_raw), rel=1e-6)
        assert got["log10_jacobian_norm"][i] == pytest.approx(np.log10(got["jacobian_norm"][i]))


def test_log_of_an_exactly_zero_norm_is_floored():
    raw = np.array([[0.0, -1000.0, -1000.0]])  # exp underflows: p is exactly one-hot, J exactly 0
    got = gradient.gradient_norms(raw, np.ones((1, 3, 2)), np.ones((1, 2)), 4, 1.0)
    assert got["jacobian_norm"][0] == 0.0
    assert got["log10_jacobian_norm"][0] == pytest.approx(np.log10(gradient.LOG_FLOOR))


def test_run_gradient_against_direct_computation():
    seed, d, T, trials = 3, 16, 6, 200
    t = pd.DataFrame(gradient.gradient_rows(seed, [d], T, trials))
    assert list(t.columns) == ["seed", "d_k", "T", "trials", "scale", "quantity", "statistic", "value"]
    assert len(t) == (len(gradient.GRADIENT_SCALES) * len(gradient.QUANTITIES) + len(gradient.PAIRED)) * 3
    rng_q, rng_k = stream(seed, "trial_scores", d, T).spawn(2)  # the shared trial scores, all at once, no chunks
    rng_v, rng_g = stream(seed, "gradient", d, T).spawn(2)
    q, K = rng_q.standard_normal((trials, d)), rng_k.standard_normal((trials, T, d))
    V, g = rng_v.standard_normal((trials, T, d)), rng_g.standard_normal((trials, d))  # d_v = d_k = 16
    v = t.set_index(["scale", "quantity", "statistic"])["value"]
    unit = 1 / np.linalg.norm(q, axis=1)  # the reference: scores K q / |q|, exactly unit variance
    jacobian_norms = {}
    for scale, c in (("none", np.ones(trials)), ("inv_sqrt_dk", np.full(trials, 1 / np.sqrt(d))),
                     ("unit_variance_reference", unit)):
        jn, gn = [], []
        for i in range(trials):
            J = loop_jacobian(softmax(c[i] * (K[i] @ q[i])))
            jn.append(np.linalg.norm(J, "fro"))
            gn.append(np.linalg.norm(J @ (V[i] @ g[i])))
        jn, gn = np.array(jn), np.array(gn)
        assert v[scale, "jacobian_norm", "mean"] == pytest.approx(jn.mean(), rel=1e-10)
        assert v[scale, "jacobian_norm", "std"] == pytest.approx(jn.std(ddof=1), rel=1e-8)
        assert v[scale, "jacobian_norm", "se"] == pytest.approx(jn.std(ddof=1) / np.sqrt(trials), rel=1e-8)
        assert v[scale, "score_grad_norm", "mean"] == pytest.approx(gn.mean(), rel=1e-10)
        assert v[scale, "raw_score_grad_norm", "mean"] == pytest.approx((c * gn).mean(), rel=1e-10)
        assert v[scale, "log10_score_grad_norm", "mean"] == pytest.approx(np.log10(gn).mean(), rel=1e-10)
        assert v[scale, "log10_raw_score_grad_norm", "mean"] == pytest.approx(np.log10(c * gn).mean(), rel=1e-10)
        jacobian_norms[scale] = {"jacobian_norm": jn, "log10_jacobian_norm": np.log10(jn), "score_grad_norm": gn}
    for a, other, quantity in gradient.PAIRED:  # same trials: the paired difference and its own SE
        diff = jacobian_norms[a][quantity] - jacobian_norms[other][quantity]
        label = f"{a}_minus_{other}"
        assert v[label, quantity, "mean"] == pytest.approx(diff.mean(), rel=1e-8, abs=1e-14)
        assert v[label, quantity, "se"] == pytest.approx(diff.std(ddof=1) / np.sqrt(trials), rel=1e-8)


def test_value_width_is_capped():
    assert gradient.value_dim(16) == 16
    assert gradient.value_dim(4096) == gradient.D_V_MAX


def test_chunking_does_not_change_draws(monkeypatch):
    a = pd.DataFrame(gradient.gradient_rows(5, [8, 128], 8, 150))
    monkeypatch.setattr(chunks, "CHUNK_ELEMENTS", 8 * 8 * 7)  # 7 trials per chunk at d_k = 8
    b = pd.DataFrame(gradient.gradient_rows(5, [8, 128], 8, 150))
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)


def test_streams_are_per_d_k_and_seeded():
    a = pd.DataFrame(gradient.gradient_rows(5, [4, 32], 8, 120))
    b = pd.DataFrame(gradient.gradient_rows(5, [32], 8, 120))
    pd.testing.assert_frame_equal(a[a.d_k == 32].reset_index(drop=True), b)
    pd.testing.assert_frame_equal(b, pd.DataFrame(gradient.gradient_rows(5, [32], 8, 120)))  # deterministic
    assert not np.allclose(b.value, pd.DataFrame(gradient.gradient_rows(6, [32], 8, 120)).value)


@pytest.mark.parametrize("bad, match", [(dict(T=1), "T"), (dict(trials=1), "trials"),
                                        (dict(d_k_values=[]), "d_k_values"), (dict(seed=-1), "seed")])
def test_run_gradient_rejects_bad_arguments(bad, match):
    with pytest.raises(ValueError, match=match):
        pd.DataFrame(gradient.gradient_rows(**{**dict(seed=1, d_k_values=[4], T=4, trials=10), **bad}))
