"""B10 decided on small hand-made learning tables: the paired gap, its trend over the wide heads, and what it
cannot measure."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims import model as M
from sdpa_lab.claims.learning import PREMISES, decide_b10
from sdpa_lab.claims.registry import CLAIMS as REGISTRY
from sdpa_lab.results import Results, ResultsError

from tests.claims.tables import assert_check, by_key, learning_table


def gaps(R):
    """B10's checks of the gap between the heads (its premise checks, left out: test_learning_premises.py)."""
    return [c for c in decide_b10(R) if c.check not in PREMISES]


def lcell(d, scale, lr):
    return ("learning.csv", (("d_k", d), ("scale", scale), ("lr", lr), ("statistic", "success_fraction")), "value")


def test_b10_checks():
    success = {(4, "none"): (0.2, 0.9, 0.5), (4, "inv_sqrt_dk"): (0.3, 0.8, 0.7),
               (64, "none"): (0.1, 0.2, 0.15), (64, "inv_sqrt_dk"): (0.4, 0.85, 0.6),
               (256, "none"): (0.05, 0.1, 0.3), (256, "inv_sqrt_dk"): (0.5, 0.9, 0.6)}
    best = {(4, "none"): 1, (4, "inv_sqrt_dk"): 1, (64, "none"): 1, (64, "inv_sqrt_dk"): 1, (256, "none"): 2,
            (256, "inv_sqrt_dk"): 1}
    checks = by_key(gaps(Results("mem", {"learning.csv": learning_table(success, best, on_target=0.125)})),
                    "B10")
    x = np.log([4, 64, 256])
    sxx = float(np.sum((x - x.mean()) ** 2))
    reach = float(np.sum(np.maximum(x - x.mean(), 0))) / sxx  # all-fail to all-succeed on the points above the mean
    span = "d_k=4..256, runs=64"
    # paired over the same 64 runs at every d_k: 20 only scaled, 3 only unscaled succeed
    paired_se = math.sqrt(((20 + 3) / 64 - ((20 - 3) / 64) ** 2) / 64)
    gap = checks["slope of scaled minus unscaled success fraction vs log d_k over the wide heads (paired, best "
                 "learning rate each)", span]
    # the OLS slope of the gaps; its SE from independent d_k, each with the paired SE
    assert_check(gap, measured=np.polyfit(x, [0.8 - 0.9, 0.85 - 0.2, 0.9 - 0.3], 1)[0], expected=0.0,
                 se=paired_se * math.sqrt(1 / sxx), relation="above", cell=lcell(256, "none", 10.0))
    assert gap.reach == pytest.approx(2 * reach, rel=1e-12)  # a gap runs from -1 to 1
    assert gap.note == "best learning rate at the edge of the grid for none at d_k=256"
    widest = checks["scaled minus unscaled success fraction at the widest head", "d_k=256, runs=64, lr=1 vs 10"]
    assert_check(widest, measured=0.9 - 0.3, expected=0.0, se=paired_se, relation="above",
                 cell=lcell(256, "inv_sqrt_dk", 1.0))
    assert widest.reach == 1.0
    assert widest.note == ("paired: 20 runs only the scaled head learns, 3 only the unscaled; 8 unscaled runs start "
                           "on their target (loss 0: nothing to learn, not a success)")
    assert len(checks) == 2  # nothing is claimed of the scaled head's own trend: the lesson does not say it
    # no discordant run: the SE is floored at one discordant run's, not 0
    (slope, *_, none) = gaps(Results("mem", {"learning.csv": learning_table(success, best, only=(0, 0))}))
    assert none.se == pytest.approx(math.sqrt(1 / 64 / 64), rel=1e-12)
    assert slope.se == pytest.approx(math.sqrt(1 / 64 / 64 / sxx), rel=1e-12)


def test_b10_gap_trend_uses_only_the_wide_heads():
    # d_k 2 is below WIDE_D_K: its gap (here the unscaled head ahead) is left out of the trend
    success = {(2, "none"): (0.2, 0.95, 0.5), (2, "inv_sqrt_dk"): (0.3, 0.8, 0.7),
               (4, "none"): (0.2, 0.9, 0.5), (4, "inv_sqrt_dk"): (0.3, 0.85, 0.7),
               (64, "none"): (0.1, 0.2, 0.15), (64, "inv_sqrt_dk"): (0.4, 0.85, 0.6)}
    slope, widest = gaps(Results("mem", {"learning.csv": learning_table(success,
                                                                                      dict.fromkeys(success, 1))}))
    assert slope.parameters == "d_k=4..64, runs=64"
    assert slope.measured == pytest.approx(((0.85 - 0.2) - (0.85 - 0.9)) / math.log(16), rel=1e-12)
    assert widest.parameters == "d_k=64, runs=64, lr=1 vs 1"


def test_b10_needs_two_wide_heads():
    success = {(2, "none"): (0.2, 0.9, 0.5), (2, "inv_sqrt_dk"): (0.3, 0.8, 0.7),
               (4, "none"): (0.2, 0.9, 0.5), (4, "inv_sqrt_dk"): (0.3, 0.8, 0.7)}
    checks = gaps(Results("mem", {"learning.csv": learning_table(success, dict.fromkeys(success, 1))}))
    assert [(c.check, c.parameters) for c in checks] == [
        ("slope of scaled minus unscaled success fraction vs log d_k over the wide heads", "d_k=2..4, runs=64"),
        ("scaled minus unscaled success fraction at the widest head", "d_k=4, runs=64, lr=1 vs 1")]
    assert checks[0].verdict == M.NOT_MEASURED
    assert checks[0].note == "needs at least two wide heads (d_k >= 4) in the sweep"
    assert checks[1].measured == pytest.approx(0.8 - 0.9, rel=1e-12)


def test_b10_decides_nothing_about_heads_that_are_not_wide():
    success = {(1, "none"): (0.2, 0.9, 0.5), (1, "inv_sqrt_dk"): (0.2, 0.9, 0.5),
               (2, "none"): (0.2, 0.95, 0.5), (2, "inv_sqrt_dk"): (0.3, 0.8, 0.7)}
    gap, widest = gaps(Results("mem", {"learning.csv": learning_table(success, dict.fromkeys(success, 1))}))
    assert gap.verdict == M.NOT_MEASURED and widest.verdict == M.NOT_MEASURED
    assert widest.note == "the widest head is not wide (d_k < 4)"


def test_b10_holds_at_small_heads_where_both_heads_learn_more_as_d_k_grows():
    # the calibration study's `many_trials` sweep (d_k 2..16, T = 8): there the unscaled head succeeds MORE often
    # as d_k grows (and so does the scaled one), so a falling trend of the unscaled fraction alone fails a correct
    # run; the paired gap over the wide heads is what the claim is about, and it holds
    from sdpa_lab.experiments.learning import learning_rows

    ds, runs = [2, 4, 8, 16], 256
    rows, _ = learning_rows(20241129, ds, 8, runs, 200, [0.01, 0.1, 1.0, 10.0, 100.0], 0.1)
    table = pd.DataFrame(rows)
    best = table[(table.best_lr == 1) & (table.statistic == "success_fraction")]
    unscaled = [float(best[(best.scale == "none") & (best.d_k == d)].value.iloc[0]) for d in ds]
    x = np.log(ds)
    rise = np.polyfit(x, unscaled, 1)[0] / math.sqrt(0.25 / runs / np.sum((x - x.mean()) ** 2))
    assert rise > 3, unscaled  # rising by 3+ worst-case SEs (the study's 512 runs: past any k, the old check failed)
    checks = gaps(Results("mem", {"learning.csv": table}))
    assert [c.verdict for c in checks] == [M.HOLDS] * 2, checks


@pytest.mark.pipeline  # 1,000 learning runs per seed at a config once failed: a config study, as test_valid_configs
@pytest.mark.parametrize("seed", [7, 8])
def test_b10_does_not_fail_where_both_heads_learn_less_as_d_k_grows(seed):
    # d_k 1, 2, 4 against 64 keys, a new user's sweep: both heads' success falls as d_k (and the values' width)
    # grows, so "the scaled head's success never falls", a premise the lesson does not state, failed correct runs
    # there; the lesson's sentence is about the unscaled head against the scaled one, and that does not fail
    from sdpa_lab.claims.standard_errors import ALPHA_FAMILY, bonferroni_k
    from sdpa_lab.experiments.learning import learning_rows

    ds, runs = [1, 2, 4], 1000
    rows, _ = learning_rows(seed, ds, 64, runs, 50, [3.0, 10.0, 30.0], 0.1)
    table = pd.DataFrame(rows)
    best = table[(table.best_lr == 1) & (table.statistic == "success_fraction")]
    scaled = [float(best[(best.scale == "inv_sqrt_dk") & (best.d_k == d)].value.iloc[0]) for d in ds]
    x = np.log(ds)
    fall = -np.polyfit(x, scaled, 1)[0] / math.sqrt(0.25 / runs / np.sum((x - x.mean()) ** 2))
    assert fall > bonferroni_k(1, ALPHA_FAMILY), scaled  # the scaled head's success falls, past any run's k
    # decided with the smallest k any run has (one statistical check): a larger k cannot make it fail
    decision = D.decide(Results("mem", {"learning.csv": table}), [c for c in REGISTRY if c.id == "B10"])
    assert decision.n_statistical == 1 and M.FAILS not in {c.verdict for c in decision.checks}, decision.checks


def test_b10_says_what_it_cannot_measure_and_why():
    def said(checks):
        return [(c.claim, c.check, c.parameters, c.source, c.verdict, c.note) for c in checks]

    one = {(64, "none"): (0.2, 0.9, 0.5), (64, "inv_sqrt_dk"): (0.3, 0.8, 0.7)}
    gap, widest = gaps(Results("mem", {"learning.csv": learning_table(one, dict.fromkeys(one, 1))}))
    assert said([gap]) == [
        ("B10", "slope of scaled minus unscaled success fraction vs log d_k over the wide heads", "d_k=64..64, runs=64",
         "learning.csv", M.NOT_MEASURED, "needs at least two wide heads (d_k >= 4) in the sweep")]
    assert widest.measured == pytest.approx(0.8 - 0.9, rel=1e-12)
    small = {(d, sc): (0.2, 0.9, 0.5) for d in (1, 2, 4) for sc in ("none", "inv_sqrt_dk")}
    gap, widest = gaps(Results("mem", {"learning.csv": learning_table(small, dict.fromkeys(small, 1))}))
    assert said([gap]) == [
        ("B10", "slope of scaled minus unscaled success fraction vs log d_k over the wide heads", "d_k=1..4, runs=64",
         "learning.csv", M.NOT_MEASURED, "needs at least two wide heads (d_k >= 4) in the sweep")]
    small = {(d, sc): (0.2, 0.9, 0.5) for d in (1, 2) for sc in ("none", "inv_sqrt_dk")}
    *_, widest = gaps(Results("mem", {"learning.csv": learning_table(small, dict.fromkeys(small, 1))}))
    assert said([widest]) == [("B10", "scaled minus unscaled success fraction at the widest head", "d_k=2, runs=64",
                               "learning.csv", M.NOT_MEASURED, "the widest head is not wide (d_k < 4)")]


def test_b10_edge_of_the_grid_undecided_for_the_scaled_head_noted_for_the_unscaled():
    success = {(4, "none"): (0.2, 0.9, 0.5), (4, "inv_sqrt_dk"): (0.9, 0.8, 0.7),
               (64, "none"): (0.1, 0.2, 0.15), (64, "inv_sqrt_dk"): (0.4, 0.85, 0.6)}
    why = ("the scaled head's best learning rate is at the edge of the grid ({}; grid 0.1..10): a better one may lie "
           "outside it, and the lesson's experiment tunes the rate for each head; widen learning_rates")
    # the scaled head at the grid's smallest rate at d_k = 4: the trend over the wide heads is not decided, the
    # widest head (its rate inside the grid) is
    best = {(4, "none"): 1, (4, "inv_sqrt_dk"): 0, (64, "none"): 1, (64, "inv_sqrt_dk"): 1}
    fall, widest = gaps(Results("mem", {"learning.csv": learning_table(success, best)}))
    assert (fall.verdict, fall.note) == (M.NOT_MEASURED, why.format("0.1 at d_k=4"))
    assert widest.verdict != M.NOT_MEASURED and widest.measured == pytest.approx(0.85 - 0.2, rel=1e-12)
    # ... at the largest rate at the widest head: neither is decided
    best[4, "inv_sqrt_dk"], best[64, "inv_sqrt_dk"] = 1, 2
    fall, widest = gaps(Results("mem", {"learning.csv": learning_table(success, best)}))
    assert (fall.verdict, fall.note) == (M.NOT_MEASURED, why.format("10 at d_k=64"))
    assert (widest.verdict, widest.note) == (M.NOT_MEASURED, why.format("10 at d_k=64"))
    # the unscaled head at an edge is only noted: a better rate could only raise its success, against the claim
    best[64, "inv_sqrt_dk"], best[64, "none"] = 1, 2
    fall, widest = gaps(Results("mem", {"learning.csv": learning_table(success, best)}))
    assert fall.note == "best learning rate at the edge of the grid for none at d_k=64"
    assert fall.verdict != M.NOT_MEASURED and widest.verdict != M.NOT_MEASURED
    best[64, "none"] = 1
    (fall, *_) = gaps(Results("mem", {"learning.csv": learning_table(success, best)}))
    assert fall.note == ""


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_b10_does_not_fail_where_one_small_rate_lets_only_the_unscaled_head_jump_to_its_target(seed):
    # A config the config-space study drew, where a correct run failed in 3 of 3 seeds: one learning rate, one
    # step, a threshold near 0. A saturated unscaled head jumps onto its target in one step in about 1 run in 10
    # (a large step on its raw scores, loss then exactly 0); the scaled head with the same small rate cannot.
    # The lesson's experiment tunes each head's rate; with one rate nothing is tuned, so nothing is decided.
    from sdpa_lab.experiments.learning import learning_rows

    rows, _ = learning_rows(seed, [976], 4, 257, 1, [0.1886], 5e-324)
    table = pd.DataFrame(rows)
    best = table[(table.best_lr == 1) & (table.statistic == "success_fraction")].set_index("scale").value
    assert best["none"] > best["inv_sqrt_dk"] + 0.05  # the unscaled head leads here: the test can fail
    decision = D.decide(Results("mem", {"learning.csv": table}), [c for c in REGISTRY if c.id == "B10"])
    assert M.FAILS not in {c.verdict for c in decision.checks}, decision.checks
    assert "edge of the grid" in decision.checks[-1].note


def test_b10_needs_exactly_one_best_learning_rate():
    success = {(4, "none"): (0.2, 0.9, 0.5), (4, "inv_sqrt_dk"): (0.3, 0.8, 0.7)}
    t = learning_table(success, {(4, "none"): 1, (4, "inv_sqrt_dk"): 1})
    t.loc[(t.scale == "none") & (t.lr == 0.1), "best_lr"] = 1
    with pytest.raises(ResultsError, match=r"learning\.csv: expected one best learning rate for d_k=4, scale=none"):
        gaps(Results("mem", {"learning.csv": t}))


def test_b10s_page_lists_every_verdict_its_checks_can_reach():
    """B10's checks have no theory value (docs/claims/learning.md says why): each is decided on its relation alone,
    so what it can reach is what that relation gives beyond, within and below its tolerance, or not measured."""
    from dataclasses import replace
    from pathlib import Path

    from tests.claims.test_broken_scale import NOT_SHOWN

    success = {(d, sc): (0.2, 0.9, 0.5) for d in (4, 64) for sc in ("none", "inv_sqrt_dk")}
    checks = decide_b10(Results("mem", {"learning.csv": learning_table(success, dict.fromkeys(success, 1))}))
    assert checks and all(math.isnan(c.theory) and not c.undecided and not c.literal for c in checks)
    reached = {replace(c, measured=c.expected + 2.0 * sign, tolerance=1.0).verdict
               for c in checks for sign in (1, 0, -1)} | {M.NOT_MEASURED}
    page = Path(__file__).parents[2] / "docs" / "claims" / "learning.md"
    listed = page.read_text(encoding="utf-8").split("can reach exactly these verdicts:")[1].split(".")[0]
    assert {v.strip(" `\n") for v in listed.split(",")} == reached == {M.HOLDS, M.INCONCLUSIVE, M.FAILS,
                                                                       M.NOT_MEASURED}
    assert all("B10" not in claims for claims in NOT_SHOWN.values())  # its premise checks fail a broken scale
