"""Each claim fails when its cause is removed: the experiments run with a broken attention scale (none, or
1/d_k instead of 1/sqrt(d_k)), and the claims that depend on the scale fail while the others still hold."""

from __future__ import annotations

import copy
import sys

import numpy as np
import pytest

from sdpa_lab import claims as C
from sdpa_lab.cli import main

from tests.conftest import TINY_CONFIG, write_run

CONFIG = copy.deepcopy(TINY_CONFIG)
CONFIG["variance"] = {"d_k": [4, 64, 1024], "n_pairs": 4000}
CONFIG["entropy_sweep"] = {"d_k": [4, 16, 64], "T": 8, "trials": 1000}
CONFIG["gradient"] = {"d_k": [4, 64], "T": 8, "trials": 1000}
CONFIG["learning"] = {"d_k": [4, 64, 256], "T": 8, "runs": 64, "steps": 100, "learning_rates": [0.1, 1.0, 10.0],
                      "loss_threshold": 0.1}

BROKEN = {"none": lambda d_k: 1.0, "inv_dk": lambda d_k: 1.0 / d_k}

# What the attention scale reaches: the scaled variance (B2, B4), the scaled softmax's entropy (B5) and
# Jacobian (B7), the forward the lesson's 6x6 weights come from (A3). The lesson's own replication
# scripts (A1, A2) divide by sqrt(d_k) themselves, as the lesson does; B1, B3 are raw scores; B6 ranks
# logits; B9 checks shapes and row sums, which hold at any scale.
# B10 is about no scale at all: without one the "scaled" head saturates like the unscaled one and stops
# learning; 1/d_k flattens the softmax instead, which a tuned learning rate makes up for in this task.
# B8 compares 1/d_k with the attention's scale: with the scale broken to 1/d_k the two are the same
# (inconclusive); with no scale 1/d_k still flattens attention (holds).
SCALE_DEPENDENT = {"A3", "B2", "B4", "B5", "B7"}
ALSO_FAILS = {"none": {"B10"}, "inv_dk": set()}
SCALE_FREE = {"A1", "A2", "B1", "B3", "B6", "B9"}


def _break_the_scale(monkeypatch, factor) -> None:
    """Every experiment module's `scale_factor` and `scaled_dot_product_attention`, with `factor(d_k)` in place of
    1 / sqrt(d_k) (found by identity, wherever the experiments import them from)."""
    from sdpa_lab import attention

    original_factor = next(m.scale_factor for name, m in sys.modules.items()
                           if name.startswith("sdpa_lab.") and hasattr(m, "scale_factor"))
    original_attention = attention.scaled_dot_product_attention

    def scale_factor(scale, d_k, *attention_scale):  # the experiments pass their attention_scale too
        return factor(d_k) if scale == "inv_sqrt_dk" else original_factor(scale, d_k, *attention_scale)

    def scaled_dot_product_attention(Q, K, V, scale=None):
        return original_attention(Q, K, V, factor(np.shape(Q)[-1]) if scale is None else scale)

    for name, module in list(sys.modules.items()):
        if not name.startswith("sdpa_lab."):
            continue
        if getattr(module, "scale_factor", None) is original_factor:
            monkeypatch.setattr(module, "scale_factor", scale_factor)
        if getattr(module, "scaled_dot_product_attention", None) is original_attention:
            monkeypatch.setattr(module, "scaled_dot_product_attention", scaled_dot_product_attention)


@pytest.fixture(scope="module", params=sorted(BROKEN))
def broken_run(request, tmp_path_factory):
    import importlib

    from sdpa_lab.experiments.registry import EXPERIMENTS

    for experiment in EXPERIMENTS.values():  # import every experiment module first, so that all are patched
        importlib.import_module(experiment.module)  # (one imported while patched would keep the broken scale)
    with pytest.MonkeyPatch.context() as mp:
        _break_the_scale(mp, BROKEN[request.param])
        results = write_run(tmp_path_factory.mktemp(f"broken_{request.param}"), CONFIG)
    return request.param, results


def test_a_broken_scale_fails_the_claims_that_depend_on_it(broken_run, capsys):
    broken, results = broken_run
    decision = C.decide(results)
    verdicts = {cid: C.claim_verdict([c for c in decision.checks if c.claim == cid]) for cid in C.registry()}
    assert {cid for cid, v in verdicts.items() if v == C.FAILS} >= SCALE_DEPENDENT | ALSO_FAILS[broken], verdicts
    assert all(verdicts[cid] == C.HOLDS for cid in SCALE_FREE), verdicts
    assert main(["check", str(results), "--no-config"]) == 1
    out = capsys.readouterr().out
    assert all(cid in out.split("FAILING: ")[1] for cid in SCALE_DEPENDENT)
