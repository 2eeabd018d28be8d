"""What a break of the attention reaches. An experiment that measures the attention takes it as an argument
(keyword `attention`); the registry reads which ones do from their signatures (Experiment.takes_attention). The
calibration study's broken arms (calibration.runner.attention_of) hand each of them a broken one: a break reaches
experiments that take the attention and no other, and nothing of the package is patched."""

from __future__ import annotations

import pytest

from sdpa_lab import attention
from sdpa_lab.calibration.runner import attention_of
from sdpa_lab.calibration.studies import BROKEN_ARMS
from sdpa_lab.experiments import replication
from sdpa_lab.experiments.registry import EXPERIMENTS, Experiment, settings_of
from sdpa_lab.pipeline import run_experiment

from tests.conftest import TINY_CONFIG

# The experiments that take the attention they measure, as the registry says.
TAKES = {name for name, experiment in EXPERIMENTS.items() if experiment.takes_attention}

# Experiments that take the attention but that a break leaves unchanged, and why: a break that does not touch
# what they measure. An experiment added later needs no entry unless a break cannot reach it.
UNCHANGED_BY = {
    # a positive scale keeps the ranking of the weights; only no scale at all makes float32 ties (or undoes them)
    "inv_dk": {"ranking_invariance"},
    # the softmax's backward: only the experiments that take a gradient measure it
    "no_pp_term": TAKES - {"gradient", "learning"},
}


def test_the_registry_reads_from_the_signature_whether_an_experiment_takes_the_attention():
    def takes(function: str) -> bool:
        return Experiment("x", function, {}, claims=(), row_counts="").takes_attention

    assert takes("sdpa_lab.experiments.variance:variance_tables")  # its third parameter, `attention`
    assert not takes("sdpa_lab.experiments.replication:lesson_variance_tables")  # the lesson's own division
    assert {"variance", "forward_shape", "gradient", "learning", "lesson_forward"} <= TAKES
    assert not TAKES & {"lesson_variance", "lesson_softmax_collapse"}


def break_settings(config: dict) -> dict:
    """Every experiment's settings for `config`, the ranking's at heads wide enough that float32 weights underflow to
    ties unscaled, and the scaled ones do not."""
    settings = {name: settings_of(config, name) for name in EXPERIMENTS}
    settings["ranking_invariance"] = {**settings["ranking_invariance"], "d_k": [4096], "T": 8}
    return settings


@pytest.fixture(scope="module")
def unbroken_rows() -> dict:
    """Every experiment's rows at break_settings(the tiny config), the attention as shipped: made once for the arms."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replication, "A1_N_SAMPLES", 1000)  # A3's forward is what is asked here (seconds)
        return {name: run_experiment(name, s) for name, s in break_settings(TINY_CONFIG).items()}


@pytest.mark.parametrize("arm", BROKEN_ARMS)
def test_a_break_of_the_attention_reaches_every_experiment_that_takes_it_and_no_other(unbroken_rows, arm,
                                                                                    monkeypatch):
    monkeypatch.setattr(replication, "A1_N_SAMPLES", 1000)  # A3's forward is what is asked here (seconds)
    module = dict(vars(attention))
    settings, correct = break_settings(TINY_CONFIG), unbroken_rows
    broken = {name: run_experiment(name, s, attention=attention_of(arm)) for name, s in settings.items()}
    assert {name for name in EXPERIMENTS if broken[name] != correct[name]} == TAKES - UNCHANGED_BY.get(arm, set())
    assert dict(vars(attention)) == module  # nothing patched
    assert {name: run_experiment(name, s) for name, s in settings.items()} == correct  # the shipped one, still
