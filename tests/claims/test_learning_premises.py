"""B10's premise checks: every broken attention of the calibration fails them (small, edge and wide configs, and one
where the gap's checks alone read inconclusive or hold), a correct one never does, and at d_k = 1 nothing is broken."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdpa_lab.calibration.runner import attention_of
from sdpa_lab.calibration.studies import BROKEN_ARMS, CORRECT_ARM
from sdpa_lab.claims import claim_verdict
from sdpa_lab.claims import learning_premises as P
from sdpa_lab.claims import model as M
from sdpa_lab.claims.learning import PREMISES, decide_b10
from sdpa_lab.experiments.learning import learning_rows
from sdpa_lab.results import Results

from tests.claims.tables import learning_table

WEIGHTS, SCALED, UNSCALED = PREMISES


def decided(arm, ds, T, runs=10, seed=0, steps=1, lrs=(1.0,)):
    rows, _ = learning_rows(seed, ds, T, runs, steps, list(lrs), 0.1, attention_of(arm))
    return {c.check if c.check in PREMISES else c.check + c.parameters: c
            for c in decide_b10(Results("mem", {"learning.csv": pd.DataFrame(rows)}))}


# (d_k, T): the smallest head that can be broken at the fewest keys, the schema's widest head (65536, where
# T x d_k allows T = 128; 2 keys keep it cheap) beside it, and the most keys (4096)
EDGES = [([2], 2), ([2, 65536], 2), ([2, 4], 4096)]
# what each broken arm fails: a wrong scale the weights and the scaled head's gradient (of the lesson's loss), a
# Jacobian without -p p^T the scaled head's gradient (the unscaled head's too, where resolved)
FAILS = {"none": (WEIGHTS, SCALED), "inv_dk": (WEIGHTS, SCALED), "no_pp_term": (SCALED,)}


@pytest.mark.parametrize("ds, T", EDGES)
def test_every_broken_arm_fails_b10_at_small_and_edge_configs(ds, T):
    for arm in BROKEN_ARMS:
        checks = decided(arm, ds, T)
        assert claim_verdict(list(checks.values())) == M.FAILS, arm
        assert all(checks[name].verdict == M.FAILS for name in FAILS[arm]), (arm, checks)
    for seed in range(3):  # the same draws unbroken (seed 0), and others
        correct = decided(CORRECT_ARM, ds, T, seed=seed)
        assert all(correct[name].verdict in (M.HOLDS, M.NOT_MEASURED) for name in PREMISES), correct
        assert correct[SCALED].verdict == M.HOLDS and correct[WEIGHTS].verdict == M.HOLDS


def test_broken_arms_fail_where_the_gaps_alone_read_inconclusive_or_hold():
    # without a scale the two heads are one head (the gap exactly 0: inconclusive), a Jacobian without -p p^T
    # still lets both heads learn about as well (inconclusive), and 1/d_k flattens the softmax, which a tuned
    # learning rate makes up for (holds): the premise checks fail each
    ds, T, lrs = [2, 4, 16], 4, (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
    gaps_read = {"none": {M.INCONCLUSIVE}, "no_pp_term": {M.INCONCLUSIVE}, "inv_dk": {M.HOLDS}}
    for arm in BROKEN_ARMS:
        checks = decided(arm, ds, T, runs=16, steps=30, lrs=lrs)
        assert {c.verdict for name, c in checks.items() if name not in PREMISES} == gaps_read[arm], (arm, checks)
        assert claim_verdict(list(checks.values())) == M.FAILS, arm
    correct = decided(CORRECT_ARM, ds, T, runs=16, steps=30, lrs=lrs)
    assert M.FAILS not in {c.verdict for c in correct.values()}, correct


def test_the_failing_notes_say_what_differs_by_how_much():
    checks = decided("none", [4], 8)
    weights = checks[WEIGHTS]
    assert weights.note == (f"at d_k=4: the scaled head's weights differ from softmax(K q / sqrt(d_k)) by "
                            f"{P.number(weights.measured)} where rounding allows {P.number(weights.tolerance)}")
    assert weights.measured > 0.01 and weights.tolerance < 1e-12
    gradient = decided("no_pp_term", [4], 8)[SCALED]
    assert gradient.note.startswith("at d_k=4: the descent's derivative of the loss along q differs from a central "
                                    "finite difference by ")
    assert "where truncation and rounding allow" in gradient.note


@pytest.mark.parametrize("arm", BROKEN_ARMS)
def test_at_d_k_1_no_arm_is_broken_and_b10_reads_as_for_the_correct_attention(arm):
    # every scale is 1 at d_k = 1: the scale arms are the shipped attention there, bit for bit; the Jacobian arm is
    # not, and its gradient check fails
    args = (5, [1], 8, 16, 20, [0.1, 1.0, 10.0], 0.1)
    broken, correct = learning_rows(*args, attention_of(arm))[0], learning_rows(*args)[0]
    if arm != "no_pp_term":
        assert broken == correct
    checks = decide_b10(Results("mem", {"learning.csv": pd.DataFrame(broken)}))
    verdicts = {c.check: c.verdict for c in checks if c.check in PREMISES}
    assert verdicts[WEIGHTS] == M.HOLDS
    assert "at d_k = 1 every scale is 1" in checks[0].note
    assert (verdicts[SCALED] == M.FAILS) == (arm == "no_pp_term")


def test_a_saturated_unscaled_head_is_not_measured_and_says_why():
    # at d_k = 65536 the unscaled scores spread over hundreds: its derivative is far below the truncation bound
    checks = decided(CORRECT_ARM, [65536], 2)
    assert checks[UNSCALED].verdict == M.NOT_MEASURED
    assert checks[UNSCALED].note.startswith("no run's derivative resolvable: the largest finite difference, ")
    assert checks[SCALED].verdict == M.HOLDS  # the scaled head's scores stay of order 1


def test_a_difference_past_the_bound_fails_even_where_nothing_is_resolved():
    table = learning_table({(4, sc): (0.2, 0.9, 0.5) for sc in ("none", "inv_sqrt_dk")},
                           {(4, "none"): 1, (4, "inv_sqrt_dk"): 1}, start_derivative_size=0.0,
                           start_gradient_error=1.0)
    checks = {c.check: c for c in decide_b10(Results("mem", {"learning.csv": table}))}
    assert checks[UNSCALED].verdict == M.FAILS and checks[SCALED].verdict == M.FAILS
    quiet = learning_table({(4, sc): (0.2, 0.9, 0.5) for sc in ("none", "inv_sqrt_dk")},
                           {(4, "none"): 1, (4, "inv_sqrt_dk"): 1}, start_derivative_size=0.0)
    checks = {c.check: c for c in decide_b10(Results("mem", {"learning.csv": quiet}))}
    assert checks[UNSCALED].verdict == M.NOT_MEASURED and checks[SCALED].verdict == M.NOT_MEASURED


def test_the_premises_are_rounding_checks_outside_the_bonferroni_split():
    success = {(d, sc): (0.2, 0.9, 0.5) for d in (4, 64) for sc in ("none", "inv_sqrt_dk")}
    checks = decide_b10(Results("mem", {"learning.csv": learning_table(success, dict.fromkeys(success, 1))}))
    premises = [c for c in checks if c.check in PREMISES]
    assert [c.check for c in premises] == list(PREMISES)
    assert all(c.basis == "rounding" and c.relation == "not above" and c.verdict == M.HOLDS for c in premises)
    assert sum(c.basis == "statistical" for c in checks) == 2  # B10's k as before


def test_the_loss_third_derivative_along_the_scores_is_within_its_bound():
    # the truncation term's sup |l'''| <= 7 rho^2 Delta^3, against a fifth-order finite difference of the loss along
    # the scores at wide and narrow spreads (independent of the derivation: only the loss itself)
    from sdpa_lab.experiments.learning_premises import own_loss

    rng, ratios = np.random.default_rng(3), []
    for spread in (0.5, 3.0, 20.0):
        z = rng.standard_normal((200, 5)) * spread
        V = rng.standard_normal((200, 5, 3))
        target = V[np.arange(200), rng.integers(5, size=200)]
        h = 1e-2 / spread
        f = [own_loss((1 + k * h) * z, V, target) for k in (-2, -1, 1, 2)]
        third = (f[3] - 2 * f[2] + 2 * f[1] - f[0]) / (2 * h**3)  # d^3/dlambda^3 of l(lambda z)
        rho2 = (2 * np.sqrt((V * V).sum(axis=-1)).max(axis=-1)) ** 2
        delta = z.max(axis=-1) - z.min(axis=-1)
        assert np.all(np.abs(third) <= 7 * rho2 * delta**3), spread
        ratios.append(np.max(np.abs(third) / (7 * rho2 * delta**3)))
    assert max(ratios) > 1e-3, ratios  # not vacuous (crude at wide spreads, where the softmax saturates)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(d_k=st.sampled_from([1, 2, 3, 7, 64, 1000, 8192]), T=st.sampled_from([2, 3, 17, 256, 4096]),
       runs=st.integers(10, 40), seed=st.integers(0, 2**32), lr=st.floats(1e-3, 1e3))
def test_over_the_schema_the_correct_arm_never_fails_a_premise_and_each_broken_arm_does(d_k, T, runs, seed, lr):
    if T * d_k * runs > 3_000_000:  # cheap: the schema allows more, the bounds do not depend on it
        runs = max(10, 3_000_000 // (T * d_k))
        if T * d_k * runs > 3_000_000:
            return
    correct = decided(CORRECT_ARM, [d_k], T, runs=runs, seed=seed, lrs=(lr,))
    assert all(correct[name].verdict != M.FAILS for name in PREMISES), correct
    for arm in BROKEN_ARMS:
        checks = decided(arm, [d_k], T, runs=runs, seed=seed, lrs=(lr,))
        if d_k > 1 or arm == "no_pp_term":
            assert all(checks[name].verdict == M.FAILS for name in FAILS[arm]), (arm, checks)
        else:
            assert {name: c.verdict for name, c in checks.items()} == {n: c.verdict for n, c in correct.items()}


def test_the_bounds_grow_with_every_size():
    # a bound from the largest sizes over the runs holds for every run only if it grows with each
    base = dict(T=8, d_k=64, d_v=64, c=0.125, abs_sum=60.0, spread=5.0, value_norm=11.0, step=2.0**-19)
    for key in ("T", "d_k", "d_v", "abs_sum", "spread", "value_norm"):
        more = base | {key: base[key] * 2}
        assert P.gradient_bound(**more) > P.gradient_bound(**base), key
    assert P.weight_bound(16, 64, 60.0) > P.weight_bound(8, 64, 60.0) and P.weight_bound(8, 64, 120.0) > \
        P.weight_bound(8, 64, 60.0)
    assert math.isclose(P.gamma(10), 10 * 2.0**-53 / (1 - 10 * 2.0**-53), rel_tol=1e-15)
