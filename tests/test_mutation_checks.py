"""Hand-written mutation checks, cheap enough for every CI run (mutmut itself is not: CONTRIBUTING.md,
"Mutation testing"). Each breaks one of the most important properties of the math or the checks,
by monkeypatching, and asserts that the test suite or the checker catches it; and that, unbroken,
the same test or check passes. Modelled on claims/test_registry.py's "each check fails at twice its tolerance".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdpa_lab import attention
from sdpa_lab.experiments import variance

from tests import test_attention, test_large_scores
from tests.experiments import test_experiments


def _catches(test, *args) -> bool:
    """Whether running `test(*args)` fails."""
    try:
        test(*args)
    except AssertionError:
        return True
    return False


def softmax_inplace_without_max_subtraction(x, axis=-1):
    """attention._softmax_inplace less its `x -= x.max(...)` line, a mutant that once survived."""
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the broken softmax overflows
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_softmax_without_max_subtraction_is_caught(monkeypatch, dtype):
    check = test_large_scores.test_forward_at_large_scores_matches_log_sum_exp
    assert not _catches(check, dtype, 300, 1200)
    monkeypatch.setattr(attention, "_softmax_inplace", softmax_inplace_without_max_subtraction)
    assert _catches(check, dtype, 300, 1200)
    assert _catches(test_large_scores.test_chunked_forward_at_large_scores_matches_log_sum_exp, dtype, 300, 1200)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_learning_softmax_without_max_subtraction_is_caught(monkeypatch, dtype):
    check = test_large_scores.test_learning_score_loss_and_grad_at_large_scores
    assert not _catches(check, dtype, 300, 1200)
    monkeypatch.setattr(attention, "_softmax_inplace", softmax_inplace_without_max_subtraction)  # the weights' own
    assert _catches(check, dtype, 300, 1200)


def test_default_scale_one_over_d_k_is_caught(monkeypatch):
    """The forward's default scale 1/d_k instead of 1/sqrt(d_k): the loop reference catches it."""
    assert not _catches(test_attention.test_attention_matches_loop_reference)
    monkeypatch.setattr(attention, "default_scale", lambda d_k: 1.0 / d_k)
    assert _catches(test_attention.test_attention_matches_loop_reference)


def test_experiment_scale_one_over_d_k_fails_b2(monkeypatch):
    """The attention's 1/sqrt(d_k) computed as 1/d_k: the checker decides B2 fails."""
    from sdpa_lab import claims as C
    from sdpa_lab.results import Results

    def b2_verdicts():
        tables = {"variance.csv": pd.DataFrame(variance.variance_rows(seed=7, d_k_values=[4, 64], n_pairs=20000))}
        # B2 is derived from B1 (not counted in the Bonferroni split): decided with B1, which sets k
        claims = [C.registry()["B1"], C.registry()["B2"]]
        return {c.verdict for c in C.decide(Results("mem", tables), claims=claims).checks if c.claim == "B2"}

    assert b2_verdicts() == {C.HOLDS}
    monkeypatch.setattr(attention, "default_scale", lambda d_k: 1.0 / d_k)
    assert b2_verdicts() == {C.FAILS}


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_standard_error_of_the_mean_off_by_a_factor_is_caught(monkeypatch, factor):
    """Moments.summary's SE (the SE of B5, B7, B8's means) off by a factor: the direct computation catches it."""
    from sdpa_lab.moments import Moments

    summary = Moments.summary
    check = test_experiments.test_entropy_sweep_against_direct_computation
    assert not _catches(check)
    monkeypatch.setattr(Moments, "summary", lambda self: {**summary(self), "se": factor * summary(self)["se"]})
    assert _catches(check)


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_variance_standard_error_off_by_a_factor_is_caught(monkeypatch, factor):
    """The SE of the sample variance (B1-B4's tolerances) off by a factor: the simulation catches it."""
    from sdpa_lab import claims as C

    from tests.claims import test_registry

    se = C.variance_se
    check = test_registry.test_variance_standard_error_matches_simulation
    assert not _catches(check)
    monkeypatch.setattr(C, "variance_se", lambda d, n: factor * se(d, n))
    assert _catches(check)


def test_forward_scaled_by_sqrt_d_v_fails_b9_in_the_checker(monkeypatch, tmp_path, capsys):
    """The shipped forward scaling by 1/sqrt(d_v) (score_scale(V.shape[-1])): indistinguishable wherever d_v = d_k,
    so only B9's forward where every dimension differs can tell; `sdpa-lab check` exits 1 with B9 failing on its
    output, against the reference written apart from the attention."""
    from sdpa_lab.cli import main

    from tests.check_table import table_rows
    from tests.conftest import TINY_CONFIG, write_run

    def b9_failures() -> tuple[int, list[str]]:
        results = write_run(tmp_path / str(len(list(tmp_path.iterdir()))), TINY_CONFIG)
        status = main(["check", str(results), "--no-config", "--all"])
        return status, [row[3] for row in table_rows(capsys.readouterr().out) if row[2] == "fails" and not row[0]]

    assert b9_failures() == (0, [])
    checked = attention._checked_inputs

    def scaled_by_d_v(Q, K, V, scale):
        Q, K, V, dtype, _ = checked(Q, K, V, scale)
        return Q, K, V, dtype, dtype.type(attention.score_scale(V.shape[-1], scale))

    monkeypatch.setattr(attention, "_checked_inputs", scaled_by_d_v)
    status, failing = b9_failures()
    assert status == 1 and failing
    assert all("largest |output - softmax(Q K^T / sqrt(d_k)) V|" in line and "d_v)=" in line for line in failing)
