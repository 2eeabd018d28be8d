"""A band of the config space drawn on purpose (a stratum of a space study): its configs lie in the band, valid and
under their own budget, the main configs stay as drawn without it, and the configs table names each config's band."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from sdpa_lab.calibration import space
from sdpa_lab.calibration.studies import check_study
from sdpa_lab.calibration.summary import configs_table
from sdpa_lab.config import ConfigError, check_config

CROSSING = space.BANDS["crossing"]
STRATA = [("crossing", 12, 10.0)]


def test_a_stratum_s_configs_lie_in_its_band_valid_and_under_their_own_budget():
    configs = space.draw_configs(5, 4, 0.6, STRATA)
    main, crossing = configs[:4], configs[4:]
    assert main == space.draw_configs(5, 4, 0.6)  # a stratum changes no main config
    assert len(crossing) == 12 and len({c["seed"] for c in configs}) == 16  # every run root its own
    widest = []
    for c in crossing:
        assert check_config(c) == c and space.cpu_seconds(c) <= 10.0
        g = c[CROSSING.section]
        assert g["T"] == CROSSING.T and CROSSING.low <= max(g["d_k"]) <= CROSSING.high
        assert all(d < CROSSING.low for d in g["d_k"][:-1])  # the narrower heads drawn as before, below the band
        widest.append(max(g["d_k"]))
    # spread over the band, not stuck at an edge: 12 uniform draws fall in at least two of its thirds (all in one:
    # 3 * (1/3)^12, about 6e-6)
    thirds = {(w - CROSSING.low) * 3 // (CROSSING.high - CROSSING.low + 1) for w in widest}
    assert len(thirds) >= 2
    assert [space.band_of(c) for c in configs] == [""] * 4 + ["crossing"] * 12


def test_band_of_decides_by_the_config_whatever_drew_it():
    c = check_config({"gradient": {"d_k": [4, CROSSING.low], "T": CROSSING.T, "trials": 100}})
    assert space.band_of(c) == "crossing"
    assert space.band_of({**c, "gradient": {**c["gradient"], "d_k": [4, CROSSING.high + 1]}}) == ""
    assert space.band_of({**c, "gradient": {**c["gradient"], "T": CROSSING.T - 1}}) == ""


def test_into_band_keeps_the_list_within_its_length_limit():
    section = {"d_k": list(range(1, 65)), "T": 8, "trials": 100}
    moved = space.into_band(random.Random(0), CROSSING, section, 64)
    assert len(moved["d_k"]) == 64 and moved["d_k"][:-1] == list(range(1, 64)) and moved["T"] == CROSSING.T


def test_a_space_study_with_a_stratum_reads_back_and_shows_it_apart():
    raw = {"space": {"seed": 5, "configs": 4, "max_cpu_s": 0.6,
                     "strata": {"crossing": {"configs": 3, "max_cpu_s": 10.0}}},
           "seeds": 2, "broken_seeds": 0, "batch": 7}
    s = check_study(raw, "cs")
    assert s.n_sweeps == 7 and s.runs("inv_sqrt_dk") == 14
    assert check_study(s.settings(), "cs") == s
    # a stratum's own seconds per run (a resource, like the study's): its runs' batches take them
    timed = {**raw, "seconds_per_run": 0.5}
    timed["space"] = {**raw["space"], "strata": {"crossing": {"configs": 3, "max_cpu_s": 10.0, "seconds_per_run": 90}}}
    t = check_study(timed, "cs")
    assert [t.run_seconds("inv_sqrt_dk", r) for r in (0, 7, 8, 13)] == [0.5, 0.5, 90.0, 90.0]  # sweeps 0, 3, 4, 6
    # batch 0: runs 0-6 (sweeps 0-3); batch 1: run 7 (sweep 3) and the stratum's six runs
    assert [t.batch_seconds("inv_sqrt_dk", b) for b in t.batches("inv_sqrt_dk")] == [7 * 0.5, 0.5 + 6 * 90.0]
    assert t.runtime_minutes() == math.ceil(2 * 540.5 / 60)  # the longest batch's, twice
    assert check_study(t.settings(), "cs") == replace(t, seconds_per_run=None, stratum_seconds=(None,))
    table = configs_table({"cs": s.sweeps()})
    assert list(table.stratum) == [""] * 4 + ["crossing"] * 3


@pytest.mark.parametrize("strata, words", [
    ({"nowhere": {"configs": 3, "max_cpu_s": 10.0}}, "space.strata.nowhere: unknown band"),
    ({"crossing": {"configs": 0, "max_cpu_s": 10.0}}, "space.strata.crossing.configs"),
    ({"crossing": {"configs": 3}}, "space.strata.crossing: got"),
    ([1], "space.strata: got"),
])
def test_a_bad_stratum_is_refused_naming_the_setting(strata, words):
    raw = {"space": {"seed": 5, "configs": 4, "max_cpu_s": 0.6, "strata": strata}, "seeds": 2, "broken_seeds": 0,
           "batch": 7}
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        check_study(raw, "bad")


def test_a_band_may_be_studied_alone_but_a_space_draws_something():
    raw = {"space": {"seed": 5, "configs": 0, "max_cpu_s": 0.6,
                     "strata": {"crossing": {"configs": 2, "max_cpu_s": 12.0}}},
           "seeds": 2, "broken_seeds": 1, "batch": 3}
    s = check_study(raw, "band")
    assert s.n_sweeps == 2 and s.runs("inv_sqrt_dk") == 4 and s.runs("no_pp_term") == 2
    assert [space.band_of(c) for c in s.sweeps()] == ["crossing"] * 2
    assert check_study(s.settings(), "band") == s
    with pytest.raises(ConfigError, match=r"space\.configs: got 0 and no stratum"):
        check_study({**raw, "space": {"seed": 5, "configs": 0, "max_cpu_s": 0.6}}, "empty")
