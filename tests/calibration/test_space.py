"""The calibration over the config space: configs drawn from the schema, a space study, and what it writes."""

from __future__ import annotations

import copy
import json
import math
import random
import re

import pandas as pd
import pytest

from sdpa_lab.calibration import space
from sdpa_lab.calibration.report import build_report, worst_margins
from sdpa_lab.calibration.runner import run_batch
from sdpa_lab.calibration.studies import (
    BATCH,
    CORRECT_ARM,
    SECONDS_PER_DRAWN_CONFIG,
    SECONDS_PER_JOB,
    SWEEPS,
    check_study,
    estimated_cpu_s,
    load_studies,
    share_path,
    targets_cpu_s,
)
from sdpa_lab.calibration.summary import runs_table, summaries, upper_bound
from sdpa_lab.config import ConfigError, check_config, choices, load_schema, resolve
from sdpa_lab.io import write_csv

from tests.calibration.sizes import SPACE_STUDY_BUDGET
from tests.claims.tables import lesson_csvs
from tests.conftest import lesson_tables

# The budget the drawn configs' test draws under (CPU s per run); the space studies' is SPACE_STUDY_BUDGET.
DRAW_BUDGET = 0.6

# On one test worker (pytest-xdist, --dist loadgroup): the drawn configs' runs, made once.
pytestmark = pytest.mark.xdist_group("calibration_space")


def leaves(value, node, root, path=""):
    """(path, value) of every number a config holds, list items under path[] and list lengths under path#len."""
    node = resolve(node, root)
    if node.get("type") == "object":
        for key, v in value.items():
            yield from leaves(v, node["properties"][key], root, f"{path}.{key}")
    elif node.get("type") == "array":
        yield f"{path}#len", len(value)
        for v in value:
            yield from leaves(v, node["items"], root, f"{path}[]")
    else:
        yield path, value


def edges(node, root, path=""):
    """path -> (lowest, highest) value the schema allows, for every number and list length of a config; the choices,
    for a setting of named choices."""
    node = resolve(node, root)
    out = {}
    if node.get("type") == "object":
        for key, prop in node["properties"].items():
            if "default" in prop and prop["default"] is None:  # off unless given (a grading option): stays off
                out[f"{path}.{key}"] = [None]
            elif "default" in prop:  # a setting; the others are optional switches no experiment reads
                out.update(edges(prop, root, f"{path}.{key}"))
    elif node.get("type") == "array":
        options = choices(resolve(node["items"], root))
        distinct = len(options) if options is not None and node.get("uniqueItems") else node["maxItems"]
        out[f"{path}#len"] = (node.get("minItems", 0), min(node["maxItems"], distinct))
        out.update(edges(node["items"], root, f"{path}[]"))
    elif choices(node) is not None:  # named choices: a list of them, each to be drawn
        out[path] = choices(node)
    elif "exclusiveMinimum" in node or "exclusiveMaximum" in node:
        lo = node.get("minimum", math.nextafter(node.get("exclusiveMinimum", -math.inf), math.inf))
        hi = node.get("maximum", math.nextafter(node.get("exclusiveMaximum", math.inf), -math.inf))
        out[path] = (lo, hi)
    else:
        out[path] = (node["minimum"], node["maximum"])
    return out


def test_every_setting_is_drawn_over_its_whole_range_edges_included():
    root = load_schema()
    rng = random.Random(3)
    seen: dict[str, list] = {}
    for _ in range(300):
        for path, value in leaves(space.draw_value(rng, root, root), root, root):
            seen.setdefault(path, []).append(value)
    bounds = edges(root, root)
    assert set(seen) == set(bounds)  # every setting drawn, and nothing else
    for path, bound in bounds.items():
        if isinstance(bound, list):  # named choices: every one drawn
            assert set(seen[path]) == set(bound), path
            continue
        lo, hi = bound
        assert min(seen[path]) == lo and max(seen[path]) == hi, path  # both edges reached, none passed
        inside = [v for v in seen[path] if lo < v < hi]
        assert len(set(inside)) > 10 or hi - lo < 20, path  # and the range between them


def test_drawn_configs_are_valid_under_the_budget_and_the_same_for_the_same_seed():
    configs = space.draw_configs(5, 20, DRAW_BUDGET)
    assert len(configs) == 20
    for c in configs:
        assert check_config(c) == c  # valid as drawn: nothing to fill in
        assert space.cpu_seconds(c) <= DRAW_BUDGET
    again = space._draw.__wrapped__(5, 20, DRAW_BUDGET)[0]  # drawn afresh, not from the cache
    assert json.dumps(list(again)) == json.dumps(configs)
    assert space.draw_configs(6, 20, DRAW_BUDGET) != configs
    assert len({json.dumps(c) for c in configs}) == 20
    # no two configs share a seed, the root of their runs' seeds: their runs are independent draws
    many = space.draw_configs(5, 60, DRAW_BUDGET)
    assert len({c["seed"] for c in many}) == 60
    assert {0, 2**64 - 1} <= {c["seed"] for c in many}  # the edges still drawn, once each
    with pytest.raises(ConfigError, match="cheapest config"):
        space.draw_configs(5, 1, 0.01)


def test_a_section_the_cost_model_leaves_out_keeps_its_sizes_and_draws_its_named_choices():
    # an experiment added without its line in the cost model is not drawn at sizes no budget bounds, but its
    # named choices are drawn; the sections the model estimates are drawn exactly as without it
    root = copy.deepcopy(load_schema())
    root["properties"]["toy"] = {"type": "object", "default": {}, "properties": {
        "trials": {"type": "integer", "minimum": 1, "maximum": 10**9, "default": 100},
        "taus": {"type": "array", "minItems": 1, "maxItems": 4, "default": [1.0, 2.0],
                 "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 10}},
        "law": {"type": "string", "enum": ["normal", "uniform", "rademacher"], "default": "normal"},
        "paired": {"type": "boolean", "default": False},
        "laws": {"type": "array", "uniqueItems": True, "minItems": 1, "maxItems": 3, "default": ["normal", "uniform"],
                 "items": {"type": "string", "enum": ["normal", "uniform", "rademacher"]}}}}
    laws, paired, lists = set(), set(), set()
    for seed in range(20):
        with_toy, refused = space.draw_config(random.Random(seed), root, 0.6)
        toy = with_toy.pop("toy")
        assert (toy["trials"], toy["taus"]) == (100, [1.0, 2.0])
        laws.add(toy["law"])
        paired.add(toy["paired"])
        lists.add(tuple(toy["laws"]))  # distinct laws, never more than the default's two
        assert 1 <= len(toy["laws"]) <= 2 and len(set(toy["laws"])) == len(toy["laws"])
        assert (with_toy, refused) == space.draw_config(random.Random(seed), load_schema(), 0.6)
    assert laws == {"normal", "uniform", "rademacher"} and paired == {False, True}
    assert len(lists) > 3 and {law for chosen in lists for law in chosen} == laws


@pytest.mark.house
def test_every_budget_configs_are_drawn_under_is_above_the_cheapest_config():
    # a new experiment's lowest sizes add to every config's cost: past a budget, every draw under it is refused
    root = load_schema()
    floor = space.cpu_seconds(space.lowest(root, root))
    budgets = {"tests' drawn configs": DRAW_BUDGET,
               **{f"study {name}": s.space.max_cpu_s for name, s in load_studies().items() if s.space}}
    headroom = {name: round(budget - floor, 3) for name, budget in budgets.items()}
    assert min(headroom.values()) > 0, f"the cheapest config takes {floor:.3f} CPU s per run; headroom: {headroom}"


# The pre-registered space study must run in an hour on 16 cores and in a night (12 hours) on 2: its batches' CPU within
# 60% of the 16 cores' hour, the rest for what is not a batch: the draw and the unit-variance means before the batches,
# one job each (62 and 858 CPU s at its 3,000 configs, measured), each wave of jobs' Snakemake start-ups and status
# checks (19 waves, about 4 minutes), the tables after.
CLUSTER_SHARE = 0.6


@pytest.mark.house
def test_the_preregistered_space_study_is_sized_to_show_the_promise_and_fits_its_hours():
    study = load_studies()["space_preregistered"]
    runs = study.runs(CORRECT_ARM)
    assert upper_bound(0, runs) <= 1e-4 < upper_bound(1, runs)  # no fail shows the 1e-4 promise, one does not
    assert f"{runs:,} runs" in study.preregistered and f"{study.space.configs:,} configs" in study.preregistered
    assert study.batch % study.seeds == 0  # a config's runs in one batch: its expectations made once
    cpu = estimated_cpu_s({study.name: study})
    assert cpu / 16 <= CLUSTER_SHARE * 3600 and cpu / 2 <= 12 * 3600, f"{cpu / 3600:.1f} CPU hours"


def space_study(configs=20, seeds=1, max_cpu_s=SPACE_STUDY_BUDGET, seed=20261201, **change) -> dict:
    return {"space": {"seed": seed, "configs": configs, "max_cpu_s": max_cpu_s}, "seeds": seeds,
            "broken_seeds": 0, "batch": configs * seeds, **change}


def test_a_run_of_some_batches_is_estimated_at_those_batches_and_their_draw():
    s = check_study(space_study(configs=4, seeds=3, batch=5, seconds_per_run=0.5), "sp")  # batches of 5, 5 and 2 runs
    studies = {"sp": s, "other": check_study(space_study(configs=2, seed=7, seconds_per_run=2.0), "other")}
    named = [BATCH.format(study="sp", arm=CORRECT_ARM, batch=0), share_path(BATCH.format(study="sp", arm=CORRECT_ARM,
                                                                                          batch=2))]
    draw = SECONDS_PER_DRAWN_CONFIG * 4
    assert targets_cpu_s(named, studies) == pytest.approx(2 * SECONDS_PER_JOB + 7 * 0.5 + draw, rel=1e-12)
    made = {named[0], SWEEPS.format(study="sp")}
    assert targets_cpu_s(named, studies, lambda path: path in made) == pytest.approx(SECONDS_PER_JOB + 2 * 0.5)
    for whole in (["calibration"], [*named, "reports/calibration.html"]):  # the study, or more than batches: all
        assert targets_cpu_s(whole, studies) == estimated_cpu_s(studies) > targets_cpu_s(named, studies)


def test_a_space_study_makes_its_seeds_of_each_drawn_config():
    s = check_study(space_study(configs=4, seeds=3), "cs")
    assert s.sweep is None and s.runs(CORRECT_ARM) == 12 and s.runs("none") == 0 and list(s.batches("none")) == []
    assert [s.run_key(CORRECT_ARM, i) for i in (0, 2, 3, 11)] == [(0, 0), (0, 2), (1, 0), (3, 2)]
    assert check_study(s.settings(), "cs") == s
    assert s.sweeps() == space.draw_configs(20261201, 4, SPACE_STUDY_BUDGET)


@pytest.mark.parametrize("change, words", [
    ({"space": {"seed": 1, "configs": 0, "max_cpu_s": 1}}, "space.configs"),
    ({"space": {"seed": 1, "configs": 3, "max_cpu_s": -1}}, "space.max_cpu_s"),
    ({"space": {"seed": 1, "configs": 3, "max_cpu_s": 1, "typo": 1}}, "space.typo"),
    ({"space": [1]}, "setting space"),
    ({"sweep": {}}, "sweep, space"),
])
def test_a_bad_space_study_is_refused_naming_the_setting(change, words):
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        check_study(space_study(**change), "bad")


def space_run(tmp_path_factory, configs: int, seed: int = 20261201, lessons=lesson_tables) -> tuple[list[dict],
                                                                                                  pd.DataFrame]:
    """`configs` drawn configs, one run each, decided as the workflow does, with the lesson tables `lessons()`: the
    configs and the checks table."""
    s = check_study(space_study(configs=configs, seed=seed), "cs")
    sweeps = s.sweeps()
    out = tmp_path_factory.mktemp("lesson")
    for name, table in lessons().items():  # the same for every config
        write_csv(table, out / name)
    rows = run_batch(s, CORRECT_ARM, 0, fixed_dir=out, sweeps=sweeps)
    return sweeps, pd.DataFrame(rows)


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """Two drawn configs' checks (a space seed whose first two are quick), on the hand-made lesson tables: what the
    summaries and the report make of a space study's table."""
    return space_run(tmp_path_factory, 2, seed=2, lessons=lesson_csvs)


@pytest.mark.pipeline  # a statistical study: twenty configs
def test_twenty_drawn_configs_pass_with_a_correct_pipeline(tmp_path_factory):
    sweeps, checks = space_run(tmp_path_factory, 20)
    assert sorted(set(checks.sweep)) == list(range(20)) and set(checks.seed_index) == {0}
    tables = summaries(checks, 1e-4, {"cs": sweeps})
    runs, configs = tables["runs"], tables["configs"]
    assert len(runs) == 20 and (runs.n_fails == 0).all(), runs[runs.n_fails > 0]  # no false fail anywhere
    assert tables["false_fail_checks"].empty
    assert (runs.max_margin_toward_fail < 1).all() and (runs.closest_claim != "").all()
    assert [json.loads(c) for c in configs.settings] == sweeps  # every config tried, recorded whole
    assert (configs.estimated_cpu_s <= SPACE_STUDY_BUDGET).all()


def test_a_false_fail_is_recorded_with_its_config(two):
    sweeps, checks = two
    broken = checks.copy()
    row = broken.index[(broken.sweep == 1) & broken.z.notna()][0]
    broken.loc[row, ["verdict", "margin"]] = ["fails", 1.5]
    tables = summaries(broken, 1e-4, {"cs": sweeps})
    ff = tables["false_fail_checks"]
    assert len(ff) == 1 and ff.sweep.iloc[0] == 1 and json.loads(ff.settings.iloc[0]) == sweeps[1]
    assert tables["false_fails"].set_index("config").loc["cs", "runs_with_fail"] == 1


def test_the_worst_run_figure_plots_only_checks_that_can_fail_each_by_its_own_margin(two, tmp_path):
    sweeps, checks = two
    # the lesson's literal single-draw Exercise 2: its z is a shortfall per draw, which never fails and moves no
    # run's worst z; its margin is the one off theory's chance of a fall at every step, which can fail and counts
    literal = checks.literal.astype(bool)
    assert literal.any() and checks.margin[literal].notna().all()
    loud = checks.assign(z=checks.z.where(~literal, 16.0))
    assert runs_table(loud).max_margin_toward_fail.equals(runs_table(checks).max_margin_toward_fail)
    assert runs_table(loud).max_z_toward_fail.equals(runs_table(checks).max_z_toward_fail)
    off_chance = runs_table(checks.assign(margin=checks.margin.where(~literal, 9.0), verdict=checks.verdict.where(
        ~literal, "fails")))
    assert (off_chance.max_margin_toward_fail == 9.0).all() and (off_chance.n_statistical_fails >= 1).all()
    # and its points above 1 are exactly the runs with a false fail of a check that can fail
    row = checks.index[(checks.sweep == 1) & checks.z.notna() & ~literal][0]
    failing = checks.copy()
    failing.loc[row, ["verdict", "margin"]] = ["fails", 1.2]
    tables = summaries(failing, 1e-4, {"cs": sweeps})
    above = int((worst_margins(tables)["cs"] > 1).sum())
    ff = tables["false_fails"].set_index(["config", "arm"]).loc[("cs", CORRECT_ARM)]
    assert above == ff.runs_with_statistical_fail == ff.runs_with_fail == 1
    for name, table in tables.items():
        table.to_csv(tmp_path / f"{name}.csv", index=False)
    pd.DataFrame(failing).to_csv(tmp_path / "checks.csv", index=False)
    build_report(tmp_path, tmp_path / "calibration.html", "abc123")
    html = (tmp_path / "calibration.html").read_text()
    assert "Over the config space" in html and "False fails over the config space" in html
    assert html.count('src="data:image/png;base64,') == 5 and "commit abc123" in html


def test_the_rate_bound_is_the_one_sided_clopper_pearson_bound():
    assert upper_bound(0, 30_000) <= 1e-4 < upper_bound(0, 29_900)  # 0 fails in 30,000: the promise shown
    assert upper_bound(1, 47_500) <= 1e-4 < upper_bound(1, 47_400)  # one fail takes 47,500 runs
    assert upper_bound(0, 1000) == pytest.approx(3 / 1000, rel=0.01)
    for failures, n in ((2, 1000), (5, 300)):
        p = upper_bound(failures, n)
        at_most = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(failures + 1))
        assert at_most == pytest.approx(0.05, abs=1e-9)
    assert upper_bound(4, 4) == 1.0


def test_what_the_report_says_of_the_promise_is_computed_not_typed(two, tmp_path):
    """The runs a study needs to show the promise and the normal tails the tail table predicts from, at the study's
    rate: read off the page and checked against their definitions, at two rates."""
    from statistics import NormalDist

    from sdpa_lab.numbers import number

    sweeps, checks = two
    for alpha in (1e-4, 1e-3):
        out = tmp_path / str(alpha)
        out.mkdir()
        for name, table in summaries(checks, alpha, {"cs": sweeps}).items():
            table.to_csv(out / f"{name}.csv", index=False)
        checks.to_csv(out / "checks.csv", index=False)
        build_report(out, out / "calibration.html")
        html = (out / "calibration.html").read_text()
        needed = re.search(r"which takes ([\d,]+) runs with no fail and ([\d,]+) with one", html)
        for failures, runs in enumerate(int(n.replace(",", "")) for n in needed.groups()):
            assert upper_bound(failures, runs) <= alpha < upper_bound(failures, runs - 1), (alpha, failures, runs)
        tails = " and ".join(f"n × {number(2 * (1 - NormalDist().cdf(t)), digits=2)}" for t in (3, 4, 4.5))
        assert f"A normal z predicts {tails} (in brackets" in html
        assert f"at most {number(alpha)}, which takes" in html and "1.6e-4" not in html
