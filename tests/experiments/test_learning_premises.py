"""B10's premises as the learning experiment measures them (experiments.learning_premises), against the
formulas written out here with the softmax Jacobian as a matrix, one run at a time."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from sdpa_lab.calibration.runner import attention_of
from sdpa_lab.experiments import learning_premises as P
from sdpa_lab.experiments.learning import learning_row_counts, learning_rows, premises_at_start


def draws(seed=0, runs=6, T=5, d_k=7, d_v=3):
    rng = np.random.default_rng(seed)
    q0, K = rng.standard_normal((runs, d_k)), rng.standard_normal((runs, T, d_k))
    V = rng.standard_normal((runs, T, d_v))
    return q0, K, V, V[np.arange(runs), rng.integers(T, size=runs)]


def derivative_along_q(q, K, V, t, c, pp_term=True):
    """q . dL/dq of L(q) = 0.5 ||softmax(c K q) V - t||^2, the Jacobian J = diag(p) - p p^T as a matrix."""
    p = softmax(c * K @ q)
    J = np.diag(p) - (np.outer(p, p) if pp_term else 0)
    return q @ (c * K.T @ J @ V @ (p @ V - t))


@pytest.mark.parametrize("arm", ["inv_sqrt_dk", "none", "inv_dk", "no_pp_term"])
def test_premise_values_against_the_formulas_written_out(arm):
    q0, K, V, t = draws()
    d_k = q0.shape[1]
    got = premises_at_start(q0, K, V, t, d_k, attention_of(arm))
    c_att = {"inv_sqrt_dk": d_k**-0.5, "none": 1.0, "inv_dk": 1.0 / d_k, "no_pp_term": d_k**-0.5}[arm]
    for r in range(len(q0)):
        # the weights: the attention's own scale against the lesson's
        lesson = softmax(K[r] @ q0[r] / np.sqrt(d_k))
        want = np.max(np.abs(softmax(c_att * K[r] @ q0[r]) - lesson))
        assert got["inv_sqrt_dk", "start_weight_error"][r] == pytest.approx(want, abs=1e-15)
        for head, c in (("inv_sqrt_dk", d_k**-0.5), ("none", 1.0)):
            true = derivative_along_q(q0[r], K[r], V[r], t[r], c)
            # the descent's: under its own scale (the scaled head's broken by a scale arm) and backward
            c_used = c_att if head == "inv_sqrt_dk" else 1.0
            used = derivative_along_q(q0[r], K[r], V[r], t[r], c_used, pp_term=arm != "no_pp_term")
            assert got[head, "start_derivative_size"][r] == pytest.approx(abs(true), rel=1e-6, abs=1e-9)
            assert got[head, "start_gradient_error"][r] == pytest.approx(abs(used - true), rel=1e-6, abs=1e-8)
            z = c * K[r] @ q0[r]
            assert got[head, "start_score_spread"][r] == pytest.approx(z.max() - z.min(), rel=1e-14)
            assert got[head, "start_score_abs_sum"][r] == pytest.approx(np.max(np.abs(K[r]) @ np.abs(q0[r])), rel=1e-14)
            assert got[head, "start_value_norm"][r] == pytest.approx(np.linalg.norm(V[r], axis=1).max(), rel=1e-14)
    if arm == "no_pp_term":  # the missing term's share of the derivative, (p.z)(p.g), per run
        p = softmax(K @ q0[:, :, None] / np.sqrt(d_k), axis=1)[:, :, 0]  # (R, T)
        z = (K @ q0[:, :, None])[:, :, 0] / np.sqrt(d_k)
        out = np.einsum("rt,rtv->rv", p, V)
        g = np.einsum("rtv,rv->rt", V, out - t)
        lost = np.sum(p * z, axis=1) * np.sum(p * g, axis=1)
        assert got["inv_sqrt_dk", "start_gradient_error"] == pytest.approx(np.abs(lost), rel=1e-6)


def test_learning_csv_holds_the_largest_over_the_runs_at_each_heads_best_rate():
    seed, ds, T, runs, steps, lrs = 3, [2, 5], 4, 12, 3, [0.1, 1.0, 10.0]
    rows, _ = learning_rows(seed, ds, T, runs, steps, lrs, 0.1)
    settings = {"d_k": ds, "learning_rates": lrs, "steps": steps}
    assert len(rows) == learning_row_counts(settings)["table"]
    from sdpa_lab.experiments.learning import run_chunks, value_dim
    from sdpa_lab.seeding import stream
    for d_k in ds:
        (q0, K, V, t), = run_chunks(stream(seed, "learning", d_k, T), runs, T, d_k, value_dim(d_k), len(lrs))
        want = premises_at_start(q0, K, V, t, d_k)
        best = {r["scale"]: r["lr"] for r in rows if r["d_k"] == d_k and r["best_lr"] == 1
                and r["statistic"] == "success_fraction"}
        got = {(r["scale"], r["statistic"]): r for r in rows if r["d_k"] == d_k and r["statistic"] in
               P.WEIGHT_STATISTICS + P.GRADIENT_STATISTICS}
        assert set(got) == set(want)
        for (head, statistic), row in got.items():
            assert row["value"] == np.max(want[head, statistic]) and row["lr"] == best[head] and row["best_lr"] == 1
    assert got["none", "finite_difference_step"]["value"] == 2.0**-19
