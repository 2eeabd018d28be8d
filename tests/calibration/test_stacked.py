"""Calibration runs stacked (sdpa_lab.calibration.stacked): each run's tables and decisions are those it makes alone."""

from __future__ import annotations

import numpy as np
import pytest

from sdpa_lab.calibration import runner, stacked
from sdpa_lab.calibration.runner import Decider, run_config, run_groups, run_rows, seeded_experiments, table_file
from sdpa_lab.calibration.space import cpu_seconds, draw_configs, lowest
from sdpa_lab.calibration.studies import ARMS, check_study
from sdpa_lab.claims import decide
from sdpa_lab.config import check_config, load_schema
from sdpa_lab.experiments.registry import EXPERIMENTS
from sdpa_lab.results import Results

from tests.calibration.sizes import SMALLEST
from tests.claims.tables import lesson_csvs

pytestmark = pytest.mark.xdist_group("calibration")

# d_k not powers of 4 (the learning descent's scale is not a power of 2 there), several steps and rates, T above 2,
# and a variance whose pairs at d_k = 1100 are more than one chunk (not stacked: made alone, beside stacked ones)
UNEVEN = check_config({
    "seed": 5,
    "variance": {"d_k": [3, 1100], "n_pairs": 1000},
    "entropy_sweep": {"d_k": [3, 7], "T": 5, "trials": 140},
    "ranking_invariance": {"d_k": [2, 6], "T": 3, "trials": 130},
    "forward_shape": {"shapes": [[2, 3, 5]]},
    "gradient": {"d_k": [3, 70], "T": 4, "trials": 120},
    "learning": {"d_k": [3, 10], "T": 3, "runs": 17, "steps": 12, "learning_rates": [0.01, 0.3, 3.0, 30.0]},
})
# drawn as config_space draws them: every setting over its range (cheap ones, just above the cheapest, for a test)
_ROOT = load_schema()
DRAWN = draw_configs(20261203, 3, 1.25 * cpu_seconds(lowest(_ROOT, _ROOT)))


def runs_of(sweep, n: int = 4) -> list[dict]:
    return [run_config(sweep, i) for i in range(n)]


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("sweep", [SMALLEST, UNEVEN, *DRAWN], ids=["smallest", "uneven", "drawn0", "drawn1", "drawn2"])
def test_a_stacked_run_makes_the_tables_it_makes_alone_to_the_bit(sweep, arm, tmp_path):
    configs = runs_of(sweep, 4 if sweep in (SMALLEST, UNEVEN) else 2)
    together = runner.stacked_tables(configs, arm, tmp_path)
    alone = [run_rows(config, arm, tmp_path) for config in configs]
    assert len(together) == len(configs)
    for run, (mine, own) in enumerate(zip(together, alone, strict=True)):
        assert list(mine) == list(own), run  # the same tables, in the same order
        for name in own:
            # == on the rows' floats: bit for bit (a nan would compare unequal: none is made here)
            assert mine[name] == own[name], (run, name)
    assert list(tmp_path.iterdir()) == []  # scratch files, if any, are gone


def test_each_seeded_experiment_is_stacked_at_the_small_sizes(monkeypatch, tmp_path):
    # the stacked path is what runs at `smallest`'s sizes (no experiment of STACKED falls back to running alone)
    alone = []
    real = runner.run_experiment
    monkeypatch.setattr(runner, "run_experiment", lambda name, *a, **kw: alone.append(name) or real(name, *a, **kw))
    runner.stacked_tables(runs_of(SMALLEST, 3), ARMS[0], tmp_path)
    assert alone and not set(alone) & set(stacked.STACKED)  # forward_shape, and any experiment not stacked, alone
    assert set(stacked.STACKED) <= set(seeded_experiments())


def test_row_moments_are_the_moments_of_each_row():
    from sdpa_lab.moments import Moments

    x = np.random.default_rng(0).standard_normal((5, 333)) * 1e3 + 7
    assert stacked.row_moments(x) == [Moments.of(row) for row in x]


@pytest.mark.parametrize("m", [1, 2, 100, 333])
def test_row_summaries_are_the_summaries_of_each_row_s_moments(m):
    from sdpa_lab.moments import Moments

    x = np.random.default_rng(m).standard_normal((6, m)) * 1e3 + 7
    mine = stacked.row_summaries(x)
    theirs = [{k: float(v) for k, v in Moments.of(row).summary().items()} for row in x]
    assert [list(s) for s in mine] == [list(s) for s in theirs]  # mean, std, se: in that order
    # bit for bit (nan, std and se of one value, compared as nan)
    assert np.array_equal([list(s.values()) for s in mine], [list(s.values()) for s in theirs], equal_nan=True)


def test_a_batch_groups_consecutive_runs_of_one_sweep(monkeypatch):
    space = check_study({"seeds": 3, "broken_seeds": 0, "batch": 8, "space": {"seed": 1, "configs": 4,
                                                                                "max_cpu_s": 0.5}}, "s")
    sweeps = [SMALLEST] * 4
    groups = list(run_groups(space, ARMS[0], 0, sweeps))
    assert [[run for run, _, _ in g] for g in groups] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert all(len({sweep for _, sweep, _ in g}) == 1 for g in groups)
    monkeypatch.setattr(stacked, "MAX_GROUP", 2)
    monkeypatch.setattr("sdpa_lab.calibration.runner.group_size", lambda sweep: stacked.group_size(sweep, 2))
    assert [len(g) for g in run_groups(space, ARMS[0], 0, sweeps)] == [2, 1, 2, 1, 2]


def test_group_size_keeps_a_stack_near_a_chunk():
    assert stacked.group_size(SMALLEST) == stacked.MAX_GROUP
    wide = check_config({**SMALLEST, "learning": {**SMALLEST["learning"], "d_k": [4096], "runs": 100}})
    assert stacked.group_size(wide) == stacked.CHUNK_ELEMENTS // (100 * 2 * 4096)  # learning's draws the largest
    # trial scores too large to stack an experiment on are still held for the whole group: they count
    # the learning descent's Gram matrices (runs, T, T), whatever d_k: a group of them is as large as its runs'
    gram = check_config({**SMALLEST, "learning": {**SMALLEST["learning"], "d_k": [1], "T": 1786, "runs": 24}})
    assert stacked.group_size(gram) == 1
    gram = check_config({**SMALLEST, "learning": {**SMALLEST["learning"], "d_k": [1], "T": 200, "runs": 10}})
    assert stacked.group_size(gram) == stacked.CHUNK_ELEMENTS // (10 * 200 * 200)
    held = check_config({**SMALLEST, "gradient": {"d_k": [1, 2, 3, 4], "T": 2, "trials": 10_000}})
    assert stacked.group_size(held) == stacked.CHUNK_ELEMENTS // (10_000 * 3 * 4)  # 8, where its draws give 13


@pytest.mark.parametrize("sweep", [SMALLEST, UNEVEN], ids=["smallest", "uneven"])
def test_a_later_run_is_decided_as_deciding_it_whole(sweep, tmp_path):
    # a Decider decides only the claims that read a seeded table, each with its own k: each run's seeded checks and
    # each claim's k are what deciding the whole run gives
    fixed = lesson_csvs()
    seeded = {table_file(name, key) for name in seeded_experiments() for key in EXPERIMENTS[name].outputs}
    decider = Decider(seeded)
    for config in runs_of(sweep, 6):
        tables = run_rows(config, ARMS[0], tmp_path)
        part = decider(Results("mem", {**fixed, **tables}))
        whole = decide(Results("mem", {**fixed, **tables}))
        assert part.ks == whole.ks
        # repr: a missing check's nan numbers compare unequal, their text does not
        assert [repr(c) for c in part.checks if c.source in seeded] == \
               [repr(c) for c in whole.checks if c.source in seeded]


def test_both_scales_in_one_descent_follow_as_each_alone(monkeypatch):
    # follow_scales descends under both scales at once where the scores are at most a chunk, else one by one
    settings = {**SMALLEST["learning"], "d_k": [3], "T": 3, "runs": 17, "steps": 12,
                "learning_rates": [0.01, 0.3, 3.0, 30.0]}
    seeds = [5, 9]
    draws = stacked.learning_draws(seeds, "learning", settings, 3)
    for arm in ("inv_sqrt_dk", "inv_dk", "no_pp_term"):
        attention = runner.attention_of(arm)
        together = stacked.follow_scales(draws, 3, settings, attention, len(seeds))
        with monkeypatch.context() as m:
            m.setattr(stacked, "CHUNK_ELEMENTS", 0)
            alone = stacked.follow_scales(draws, 3, settings, attention, len(seeds))
        for scale, track in alone.items():
            assert track["steps"] == together[scale]["steps"] == 12
            for key in ("initial", "final", "reach", "curve"):
                assert together[scale][key].tobytes() == track[key].tobytes()
