"""B7 at T = 1024 keys, as a new user sets it: the scaled softmax over so many keys is near uniform and passes less
gradient than the unscaled one at d_k = 64, so the lesson's sentence is false there, and theory says so. The verdict
says exactly that ("does not hold here, as theory predicts"), never "holds"; `sdpa-lab check` exits 0 on it; and a
pipeline without the scale, which departs from theory's values there, still fails."""

from __future__ import annotations

import pandas as pd
import pytest

from sdpa_lab import claims as C
from sdpa_lab.calibration.runner import attention_of
from sdpa_lab.pipeline import run_experiment
from sdpa_lab.results import Results

from tests.check_table import table_rows

# Two gradient experiments at (T, T) Jacobians of a million entries each: out of the fast lane.
pytestmark = pytest.mark.pipeline

SETTINGS = {"seed": 3, "d_k": [4, 64], "T": 1024, "trials": 100}
WIDEST = "mean scaled minus unscaled Jacobian norm at the widest head"


def b7(arm: str) -> list:
    rows = run_experiment("gradient", SETTINGS, attention=attention_of(arm))["table"]
    return list(C.decide(Results("mem", {"gradient.csv": pd.DataFrame(rows)}), claims=[C.registry()["B7"]],
                         k=4.8).checks)


def test_b7_at_1024_keys_says_where_the_lesson_sentence_does_not_hold():
    checks = b7("inv_sqrt_dk")
    by = {(c.check, c.parameters): c for c in checks}
    widest = by[WIDEST, "d_k=64, T=1024"]
    assert widest.theory_says_false and widest.expected < 0  # theory: the scaled head passes less gradient here
    assert widest.verdict == C.NOT_HERE and widest.relation == "within"
    assert not [c for c in checks if c.verdict in (C.FAILS, C.INCONCLUSIVE)]
    assert C.claim_verdict(checks) == C.NOT_HERE
    assert {c.verdict for c in checks if not c.undecided} == {C.HOLDS}  # the scaled norm's
    # the falls from d_k = 4, where the unscaled softmax is not yet saturated (its norm still rises): not decided
    assert {c.parameters for c in checks if c.verdict == C.CONDITION_NOT_MET} == {"d_k=4->64, T=1024"}
    summary = C.summary(C.Decision(tuple(checks), {"B7": C.ALPHA_CLAIM}, statements={"B7": "s"}))
    (row,) = [r for r in table_rows(summary) if r[0] == "B7"]
    assert row[2] == C.NOT_HERE  # the claim's verdict, as the checker prints it
    assert f"\n'{C.NOT_HERE}'" in summary.split("\n\n")[1]


def test_b7_at_1024_keys_still_fails_a_pipeline_without_the_scale():
    failing = [c for c in b7("none") if c.verdict == C.FAILS]
    assert any(c.check == WIDEST for c in failing)  # the heads coincide: 0, far from theory's negative difference
