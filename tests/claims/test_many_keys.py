"""B7 at T = 1024 keys over the default d_k (a user's `gradient: {T: 1024}`), without the pipeline: a gradient table
whose means sit at theory's expectations, with the SEs of theory's law of one trial at `trials` trials. Theory's sign
is clear at every step (claims.top_score), so no check is left undecided for theory's sake; the one check 4,000
trials cannot settle says why, and enough trials settle it."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sdpa_lab import claims as C
from sdpa_lab.claims.expectation_kinds import expectation
from sdpa_lab.claims.expectations import law
from sdpa_lab.claims.gradient_expectation import gradient_ratio
from sdpa_lab.claims.softmax_saturation import LOG_NORM_FALL, NORM_FALL, WIDEST_NORM
from sdpa_lab.results import Results

from tests.claims.tables import LJ, G, J

D_K, T = (4, 16, 64, 256, 1024, 4096), 1024  # the schema's default gradient d_k, at the largest T it allows


def _table(trials: int) -> pd.DataFrame:
    """The rows B7 reads, each mean at theory's expectation and each SE theory's sd of one trial over sqrt(trials);
    the gradient at the scores at theory's ratio to the scaled head's."""
    rows = []

    def add(d, scale, quantity, mean, sd):
        for statistic, value in (("mean", mean), ("std", sd), ("se", sd / math.sqrt(trials))):
            rows.append({"seed": 1, "d_k": d, "T": T, "trials": trials, "scale": scale, "quantity": quantity,
                         "statistic": statistic, "value": value})

    for d in D_K:
        for q in (J, LJ):
            (unscaled, _), (scaled, _) = expectation("unscaled", q, d, T), expectation("scaled", q, d, T)
            sd = law("unscaled", q, d, T)[0][0]  # the per-trial difference's spread: the unscaled head's
            add(d, "none", q, unscaled, sd)
            add(d, "inv_sqrt_dk", q, scaled, law("scaled", q, d, T)[0][0])
            add(d, "inv_sqrt_dk_minus_none", q, scaled - unscaled, sd)
        gap = expectation("scaled_minus_unit_variance", J, d, T)[0]
        add(d, "unit_variance_reference", J, expectation("scaled", J, d, T)[0] - gap, 0.005)
        add(d, "inv_sqrt_dk_minus_unit_variance_reference", J, gap, law("scaled_minus_unit_variance", J, d, T)[0][0])
        grad = 1.5 * gradient_ratio(d, T)[0]  # theory's ratio to the scaled head's
        add(d, "none", G, grad, 0.5 * grad)
        add(d, "inv_sqrt_dk", G, 1.5, 0.1)
        add(d, "inv_sqrt_dk_minus_none", G, 1.5 - grad, math.hypot(0.1, 0.5 * grad))
    return pd.DataFrame(rows)


def _b7(trials: int) -> list:
    R = Results("mem", {"gradient.csv": _table(trials)})
    return list(C.decide(R, claims=[C.registry()["B7"]], k=4.8).checks)


@pytest.fixture(scope="module")
def default_trials():
    return _b7(4000)


def test_theorys_sign_is_clear_at_every_point(default_trials):
    assert not [c for c in default_trials if c.theory_unclear]
    # the falls from d_k = 4: theory says the unscaled norm still rises there (not yet saturated)
    unmet = {(c.check, c.parameters) for c in default_trials if c.verdict == C.CONDITION_NOT_MET}
    assert unmet == {(NORM_FALL, "d_k=4->16, T=1024"), (LOG_NORM_FALL, "d_k=4->16, T=1024")}
    decided_falls = [c for c in default_trials if c.check in (NORM_FALL, LOG_NORM_FALL) and c.relation == "above"]
    assert len(decided_falls) == 2 * 4 and {c.verdict for c in decided_falls} == {C.HOLDS}


def test_the_one_check_four_thousand_trials_cannot_settle_says_why(default_trials):
    # at the widest head the scaled mean norm stands above the unscaled one by theory's 0.003: 1.7 of the SEs of
    # 4,000 trials, so a correct run is inconclusive there, and the check says so and how many trials would show it
    (widest,) = [c for c in default_trials if c.check == WIDEST_NORM]
    expected = expectation("scaled", J, 4096, T)[0] - expectation("unscaled", J, 4096, T)[0]
    assert 0 < expected < 6 * widest.se and widest.relation == "above"
    assert widest.verdict == C.INCONCLUSIVE and not widest.theory_unclear
    assert widest.note.startswith("theory's difference here is only") and "4,000 trials" in widest.note
    assert C.claim_verdict(default_trials) == C.INCONCLUSIVE
    assert [c for c in default_trials if c.verdict not in (C.HOLDS, C.CONDITION_NOT_MET)] == [widest]
    summary = C.summary(C.Decision(tuple(default_trials), {"B7": C.ALPHA_CLAIM}, statements={"B7": "s"}))
    assert "why: theory's difference here is only" in " ".join(summary.split())


def test_enough_trials_decide_it(default_trials):
    # the trials the note asks for: B7 holds, every check of the lesson's sentence decided
    (widest,) = [c for c in default_trials if c.check == WIDEST_NORM]
    needed = int(widest.note.split("about ")[1].split(" ")[0].replace(",", ""))
    checks = _b7(needed)
    assert C.claim_verdict(checks) == C.HOLDS
    assert {c.verdict for c in checks} == {C.HOLDS, C.CONDITION_NOT_MET}
