"""Each claim fails when its cause is removed: the package's attention itself is broken (its default scale made
1 or 1/d_k instead of 1/sqrt(d_k), in attention.default_scale, the one place the forward and every experiment take
it from), and the claims that depend on the scale fail while the others still hold."""

from __future__ import annotations

import copy

import pytest

from sdpa_lab import attention
from sdpa_lab import claims as C
from sdpa_lab.cli import main

from tests.conftest import TINY_CONFIG, write_run

# On one test worker (pytest-xdist, --dist loadgroup): each broken run, made once.
pytestmark = pytest.mark.xdist_group("broken_scale")

CONFIG = copy.deepcopy(TINY_CONFIG)
CONFIG["variance"] = {"d_k": [4, 64, 1024], "n_pairs": 4000}
CONFIG["entropy_sweep"] = {"d_k": [4, 16, 64], "T": 8, "trials": 1000}
CONFIG["gradient"] = {"d_k": [4, 64], "T": 8, "trials": 1000}
CONFIG["learning"] = {"d_k": [4, 64, 256], "T": 8, "runs": 64, "steps": 100,
                      "learning_rates": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0], "loss_threshold": 0.1}

BROKEN = {"none": lambda d_k: 1.0, "inv_dk": lambda d_k: 1.0 / d_k}

# What the attention scale reaches: the scaled variance (B2, B4), the scaled softmax's entropy (B5) and
# Jacobian (B7), the forward the lesson's 6x6 weights come from (A3). The lesson's own replication
# scripts (A1, A2) divide by sqrt(d_k) themselves, as the lesson does; B1, B3 are raw scores; B6 ranks
# logits; B9 holds the forward's output to softmax(Q K^T / sqrt(d_k)) V (its shapes and row sums hold at any scale).
# B10 compares the head without a scale with the attention's: with no default scale the two are one head, run by
# run, and the gap the lesson's sentence is about is exactly 0 (inconclusive, or not measured), and 1/d_k flattens
# the softmax, which a tuned learning rate makes up for in this task; B10's premise checks fail either way (the
# scaled head's weights are not softmax(K q / sqrt(d_k)), nor its gradient the lesson's loss's).
# B8 compares 1/d_k with the attention's scale, its gap held to theory's: with the scale broken to 1/d_k the two are
# the same (a gap of exactly 0), with no scale the gap is far above theory's: B8 fails either way.
SCALE_DEPENDENT = {"A3", "B2", "B4", "B5", "B7", "B9"}
ALSO_FAILS = {"none": {"B8", "B10"}, "inv_dk": {"B8", "B10"}}
NOT_SHOWN = {"none": set(), "inv_dk": set()}  # neither holds nor fails
SCALE_FREE = {"A1", "A2", "B1", "B3", "B6"}


@pytest.fixture(scope="module", params=sorted(BROKEN))
def broken_run(request, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(attention, "default_scale", BROKEN[request.param])  # the forward's own scale
        # Exercise 1's replication (A1) as shipped, made once per session: a broken default scale does not reach
        # it (it does not take the attention: tests/experiments/test_attention_reach.py), and making it
        # again is most of a run; the lesson's forward (A3), which the break does reach, is made again
        results = write_run(tmp_path_factory.mktemp(f"broken_{request.param}"), CONFIG, as_shipped={"lesson_variance"})
    return request.param, results


@pytest.mark.pipeline  # two whole runs in process: not the fast lane
def test_a_broken_scale_fails_the_claims_that_depend_on_it(broken_run, capsys):
    broken, results = broken_run
    decision = C.decide(results)
    verdicts = {cid: C.claim_verdict([c for c in decision.checks if c.claim == cid]) for cid in C.registry()}
    assert {cid for cid, v in verdicts.items() if v == C.FAILS} >= SCALE_DEPENDENT | ALSO_FAILS[broken], verdicts
    assert all(verdicts[cid] == C.HOLDS for cid in SCALE_FREE), verdicts
    assert all(verdicts[cid] in (C.INCONCLUSIVE, C.NOT_MEASURED) for cid in NOT_SHOWN[broken]), verdicts
    assert main(["check", str(results), "--no-config"]) == 1
    out = capsys.readouterr().out
    assert all(cid in out.split("FAILING: ")[1] for cid in SCALE_DEPENDENT)


@pytest.mark.pipeline  # a statistical study in process: five seeds at each T, broken and correct
@pytest.mark.parametrize("T", [2, 8, 64])
def test_a_jacobian_without_its_pp_term_fails_b7_in_every_seed(T):
    """The calibration's broken Jacobian (attention.softmax_backward without its -p p^T term) at the schema's fewest
    trials: B7 fails in each of several seeds, even with the k of a run of a thousand statistical checks."""
    from sdpa_lab.calibration.runner import attention_of
    from sdpa_lab.experiments.gradient import gradient_rows
    from sdpa_lab.results import Results

    k = C.bonferroni_k(1000, C.ALPHA_FAMILY)
    for seed in range(5):
        rows = gradient_rows(seed, [4, 64, 1024], T, 100, attention=attention_of("no_pp_term"))
        decision = C.decide(Results("mem", {"gradient.csv": rows}), [C.registry()["B7"]], k=k)
        assert C.claim_verdict(decision.checks) == C.FAILS, (T, seed)
        correct = C.decide(Results("mem", {"gradient.csv": gradient_rows(seed, [4, 64, 1024], T, 100)}),
                           [C.registry()["B7"]], k=k)
        assert C.claim_verdict(correct.checks) != C.FAILS, (T, seed)  # the same draws, unbroken
