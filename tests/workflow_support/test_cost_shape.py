"""The cost model's terms have the shape of the work the experiments do: each term of cost.work counts what the
experiment's own code processes (counted here by wrapping its functions while it runs), at configs where the
sizes differ in every way, so a term that grows with the wrong power of T, steps or d_k fails. Nothing is timed."""

from __future__ import annotations

import copy

import pytest

from sdpa_lab.config import check_config
from sdpa_lab.experiments import gradient, learning
from sdpa_lab.experiments.sizes import gram_fits
from sdpa_lab.workflow_support import cost

# (d_k, T, runs, steps, learning rates): small heads and wide, T below and past CACHED_GRAM_BYTES and sizes.gram_fits
LEARNING = [
    ([1, 4], 2, 10, 3, [0.1]),
    ([3], 40, 12, 2, [0.01, 0.1, 1.0]),
    ([2048], 8, 10, 1, [0.1, 1.0]),
    ([1], 400, 10, 1, [1.0]),
    ([3], 2900, 10, 2, [0.1, 1.0]),  # past the per-array bound: steps through the keys
]


def counted_learning(monkeypatch, d_k, T, runs, steps, rates) -> dict[str, float]:
    """What learning_rows does, counted as the model's learning terms name it."""
    counts = dict.fromkeys(learning.COST_NS_PER, 0)
    real_descent, real_chunks = learning.descent, learning.run_chunks

    def descent(q0, K, V, target, scale, lrs, n_steps, attention=learning.SHIPPED):
        R, T_, d = K.shape
        L, d_v = len(lrs), V.shape[-1]
        through_gram = gram_fits(T_)  # else each step goes through the keys: no K K^T
        counts["gram"] += through_gram * R * T_ * T_ * d  # K K^T
        counts["gram_entry"] += through_gram * R * T_ * T_
        for t, loss in enumerate(real_descent(q0, K, V, target, scale, lrs, n_steps, attention)):
            counts["descent_value"] += R * L * T_ * d_v  # the loss: (R, L, T) weights against (R, T, d_v) values
            counts["descent_key"] += R * L * T_
            counts["descent_rate"] += R * L
            counts["run_step"] += R
            counts["step"] += 1
            if t < n_steps and not through_gram:  # (R, L, T) @ (R, T, d_k), then @ (R, d_k, T)
                counts["descent_keys"] += R * L * 2 * T_ * d
            elif t < n_steps:  # a step through the Gram matrix: (R, L, T) @ (R, T, T)
                uncached = T_ * T_ * 8 > learning.CACHED_GRAM_BYTES
                counts["descent_gram_uncached" if uncached else "descent_gram"] += R * L * T_ * T_
            yield loss

    def run_chunks(rng, n, T_, d, d_v, n_lrs=1):
        for q0, K, V, target in real_chunks(rng, n, T_, d, d_v, n_lrs):
            counts["normal"] += q0.size + K.size + V.size
            yield q0, K, V, target

    real_premises = learning.premises_at_start

    def premises_at_start(q0, K, V, target, d, attention=learning.SHIPPED):
        R, T_, _ = K.shape
        counts["gram"] += 8 * R * T_ * d  # the own scores of both heads, sum |q_i k_i|, K q thrice, dL/dz K twice
        counts["descent_value"] += 8 * R * T_ * V.shape[-1]  # four own losses, the descent's loss and gradient twice
        return real_premises(q0, K, V, target, d, attention)

    monkeypatch.setattr(learning, "descent", descent)
    monkeypatch.setattr(learning, "run_chunks", run_chunks)
    monkeypatch.setattr(learning, "premises_at_start", premises_at_start)
    learning.learning_rows(1, d_k, T, runs, steps, rates, 0.1)
    counts["d_k"], counts["call"] = len(d_k), 1
    return counts


@pytest.mark.parametrize("d_k, T, runs, steps, rates", LEARNING)
def test_the_learning_terms_count_what_learning_rows_does(monkeypatch, d_k, T, runs, steps, rates):
    model = learning.learning_work({"d_k": d_k, "T": T, "runs": runs, "steps": steps, "learning_rates": rates})
    assert model == pytest.approx(counted_learning(monkeypatch, d_k, T, runs, steps, rates), rel=1e-12)


def test_a_learning_step_grows_as_t_squared():
    # at long sequences a step's work is the (T, T) Gram product: doubling T quadruples that term, and the estimate
    # grows by more than the 2x of everything linear in T
    base = check_config({"learning": {"d_k": [16], "T": 1024, "runs": 10, "steps": 100}})
    doubled = copy.deepcopy(base)
    doubled["learning"]["T"] = 2048
    step = [cost.work(c, [])["learning"]["descent_gram_uncached"] for c in (base, doubled)]
    assert step[1] == 4 * step[0] > 0
    assert cost.estimate(doubled).cpu_s["learning"] > 3 * cost.estimate(base).cpu_s["learning"]


@pytest.mark.parametrize("d_k, T, trials", [([1, 2], 8, 100), ([64], 33, 250), ([5], 300, 100)])
def test_the_gradient_terms_count_what_gradient_rows_does(monkeypatch, d_k, T, trials):
    counts = {"jacobian_entry": 0, "value_normal": 0, "trial": 0}
    real_norms, real_draws = gradient.gradient_norms, gradient.trial_draws

    def norms(raw, V, g_out, d, scale, attention=gradient.SHIPPED):
        m, T_ = raw.shape
        counts["jacobian_entry"] += m * T_ * T_  # a (T, T) Jacobian per trial, per scale
        return real_norms(raw, V, g_out, d, scale, attention)

    def draws(*args, **kwargs):
        for raw, V, g_out, q_norm in real_draws(*args, **kwargs):
            counts["value_normal"] += V.size + g_out.size
            counts["trial"] += len(raw)
            yield raw, V, g_out, q_norm

    monkeypatch.setattr(gradient, "gradient_norms", norms)
    monkeypatch.setattr(gradient, "trial_draws", draws)
    gradient.gradient_rows(1, d_k, T, trials)
    model = cost.work(check_config({"gradient": {"d_k": d_k, "T": T, "trials": trials}}), [])["gradient"]
    scales = len(gradient.GRADIENT_SCALES)  # every trial's Jacobian is formed once per scale
    assert counts["jacobian_entry"] == scales * model["jacobian_entry"]
    assert counts["value_normal"] == model["value_normal"] and counts["trial"] == model["trial"]
