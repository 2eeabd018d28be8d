"""The calibration study: seeds, study files, the broken attention, a small study end to end, its tables."""

from __future__ import annotations

import copy
import math
import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml

from sdpa_lab import attention
from sdpa_lab.calibration import runner
from sdpa_lab.calibration.report import build_report
from sdpa_lab.calibration.runner import (
    BREAKS,
    Decider,
    attention_of,
    batch_job,
    fixed_experiments,
    run_batch,
    run_config,
    run_rows,
    seeded_experiments,
    table_file,
)
from sdpa_lab.calibration.studies import (
    ARMS,
    BROKEN_ARMS,
    COLUMNS,
    CORRECT_ARM,
    TABLES,
    check_study,
    load_studies,
)
from sdpa_lab.calibration.summary import main_report_summary, wilson
from sdpa_lab.calibration.tables_jobs import aggregate
from sdpa_lab.claims import decide
from sdpa_lab.claims.expectation_table import expectations_job, read_expectations, sweep_expectations
from sdpa_lab.claims.expectations import expectation, mean_statistic, scaled_minus_unit_variance
from sdpa_lab.claims.registry import expectations_asked
from sdpa_lab.config import ConfigError, check_config
from sdpa_lab.experiments import gradient, learning, trial_scores
from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of
from sdpa_lab.experiments.variance import variance_rows
from sdpa_lab.io import write_csv
from sdpa_lab.pipeline import run_experiment
from sdpa_lab.results import Results, ResultsError, column_of
from sdpa_lab.seeding import calibration_seed
from sdpa_lab.tables import csv_text

from tests.calibration.sizes import SMALLEST
from tests.claims.tables import lesson_csvs
from tests.conftest import lesson_tables

# On one test worker (pytest-xdist, --dist loadgroup): the small study, made once.
pytestmark = pytest.mark.xdist_group("calibration")



def study(seeds=100, broken_seeds=10, batch=50, sweep=SMALLEST) -> dict:
    return {"seeds": seeds, "broken_seeds": broken_seeds, "batch": batch, "seconds_per_run": 0.03,
            "sweep": copy.deepcopy(sweep)}


@pytest.fixture(scope="module")
def hand_made_lesson_dir(tmp_path_factory):
    """The hand-made lesson tables (tests.claims.tables.lesson_csvs) written as the workflow gives a batch the
    replications': for the tests of a batch's own work, which takes those tables as given."""
    out = tmp_path_factory.mktemp("hand_made_lesson")
    for name, table in lesson_csvs().items():
        write_csv(table, out / name)
    return out


@pytest.fixture
def lessons_hand_made(monkeypatch):
    """The runner's run_experiment, with the lesson replications' rows (settings {}, the same in every run) those of
    hand_made_lesson_dir instead of the lesson's draws: a batch without a `fixed_dir` makes them."""
    real = runner.run_experiment

    def run_experiment(name, settings, **kwargs):
        if name in fixed_experiments():
            assert settings == {} and not kwargs, (name, settings)
            return {key: lesson_csvs()[table_file(name, key)].to_dict("records") for key in EXPERIMENTS[name].outputs}
        return real(name, settings, **kwargs)

    monkeypatch.setattr(runner, "run_experiment", run_experiment)


@pytest.fixture(scope="module")
def small(tmp_path_factory, lesson_dir):
    """A small study run end to end in process: 100 correct runs, 10 per broken arm, aggregated."""
    s = check_study(study(), "small")
    out = tmp_path_factory.mktemp("calibration")
    paths = []
    for arm in ARMS:
        for b in s.batches(arm):
            path = out / "batches" / f"{arm}_{b}.csv"
            write_csv(run_batch(s, arm, b, fixed_dir=lesson_dir), path)
            paths.append(path)
    return SimpleNamespace(study=s, out=out, tables=aggregate(paths, out))


# ---- seeds, studies, the broken attention ---------------------------------------------------------

def test_calibration_seeds_are_derived_from_the_seed_and_the_index():
    seeds = [calibration_seed(20241129, i) for i in range(1000)]
    assert len(set(seeds)) == 1000 and all(0 <= s < 2**64 for s in seeds)
    assert seeds[:3] == [calibration_seed(20241129, i) for i in range(3)]  # the same whatever else is run
    expected = int(np.random.SeedSequence(20241129, spawn_key=(
        __import__("zlib").crc32(b"calibration"), 7)).generate_state(1, dtype=np.uint64)[0])
    assert seeds[7] == expected
    assert calibration_seed(20241130, 7) != seeds[7]
    with pytest.raises(ValueError, match="index"):
        calibration_seed(1, -1)


def test_the_shipped_studies_are_valid_and_make_at_least_1000_runs():
    studies = load_studies()
    assert {"default", "smallest", "many_trials", "widest"} <= set(studies)
    assert sum(s.runs(CORRECT_ARM) for s in studies.values()) >= 1000
    with open("config/config.yaml") as fh:
        default = yaml.safe_load(fh)
    assert dict(studies["default"].sweep) == check_config(default)  # the default sizes, the default seed
    assert max(studies["widest"].sweep["variance"]["d_k"]) == 65536  # the schema's widest head
    assert all(s.seconds_per_run for s in studies.values())  # measured: the jobs' runtime resource
    for s in studies.values():  # a batch job rebuilds its study from the rule's params, its seconds (resources) aside
        assert check_study(s.settings(), s.name) == replace(s, seconds_per_run=None,
                                                            stratum_seconds=(None,) * len(s.stratum_seconds))


def test_a_batch_is_expected_to_take_its_runs_times_the_seconds_of_one():
    s = replace(check_study(study(batch=30), "small"), seconds_per_run=0.5)  # 100 correct runs in batches of 30
    assert [s.batch_seconds(CORRECT_ARM, b) for b in s.batches(CORRECT_ARM)] == [15.0, 15.0, 15.0, 5.0]
    assert replace(s, seconds_per_run=None).batch_seconds(CORRECT_ARM, 0) == 0.0  # no figure: no order
    with pytest.raises(ValueError, match="batches"):
        s.batch_seconds(CORRECT_ARM, 4)


@pytest.mark.parametrize("change, words", [
    ({"seeds": 0}, "seeds"), ({"batch": 2.5}, "batch"), ({"broken_seeds": True}, "broken_seeds"),
    ({"seconds_per_run": -1}, "seconds_per_run"), ({"typo": 1}, "typo"),
    ({"sweep": {**SMALLEST, "variance": {"d_k": [4], "n_pairs": 10}}}, "variance.n_pairs"),
])
def test_a_bad_study_is_refused_naming_the_setting(change, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        check_study({**study(), **change}, "bad")


def test_each_broken_arm_is_the_shipped_attention_broken_in_one_place_and_nothing_is_patched():
    assert set(BREAKS) == set(BROKEN_ARMS) and CORRECT_ARM in ARMS and CORRECT_ARM not in BREAKS
    module = dict(vars(attention))
    assert attention_of(CORRECT_ARM) is attention.SHIPPED
    for arm in BROKEN_ARMS:
        field, broken = BREAKS[arm]
        assert attention_of(arm) == replace(attention.SHIPPED, **{field: broken}) != attention.SHIPPED
    assert dict(vars(attention)) == module  # the module's functions are the shipped ones still
    with pytest.raises(ValueError, match="unknown arm 'typo'"):
        attention_of("typo")


@pytest.mark.parametrize("arm, factor", [("none", lambda d_k: 1.0), ("inv_dk", lambda d_k: 1.0 / d_k)])
def test_a_broken_default_scale_reaches_the_forward_and_the_scaled_scores_and_nothing_else(arm, factor):
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((2, 5, 16)), rng.standard_normal((2, 5, 16)), rng.standard_normal((2, 5, 3))
    out, weights = attention_of(arm).forward(Q, K, V)
    rows = variance_rows(3, [4, 64], 1000, attention_of(arm))
    s = factor(16) * Q @ np.swapaxes(K, -1, -2)  # the weights written out, with the arm's scale
    want = np.exp(s - s.max(axis=-1, keepdims=True))
    want /= want.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(weights, want, rtol=1e-13)
    np.testing.assert_allclose(out, want @ V, rtol=1e-12)

    def by_scale(rows):
        return {(r["d_k"], r["scale"], r["statistic"]): r["value"] for r in rows}

    right, got = by_scale(variance_rows(3, [4, 64], 1000)), by_scale(rows)
    for (d, scale, stat), value in got.items():  # the attention's own rows are the arm's scale; the others unchanged
        assert value == pytest.approx(right[d, arm if scale == "inv_sqrt_dk" else scale, stat], rel=1e-15)


def test_the_broken_jacobian_arm_drops_the_pp_term_wherever_a_gradient_is_taken():
    rng = np.random.default_rng(4)
    raw, V, g = rng.standard_normal((6, 5)) * 2, rng.standard_normal((6, 5, 3)), rng.standard_normal((6, 3))
    p = np.exp(raw - raw.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)  # softmax(raw), scale 1
    broken = attention_of("no_pp_term")
    J = broken.jacobian(p)
    norms = gradient.gradient_norms(raw, V, g, 4, 1.0, broken)
    _, g_z = learning.score_loss_and_grad(raw[:, None, :], V, g[:, None, :], 4, 1.0, broken)  # (R, L = 1, T)
    np.testing.assert_allclose(J, np.stack([np.diag(pi) for pi in p]), atol=0)
    np.testing.assert_allclose(norms["jacobian_norm"], np.sqrt(np.sum(p * p, axis=-1)), rtol=1e-14)
    np.testing.assert_allclose(norms["score_grad_norm"], np.linalg.norm(p * np.einsum("mtv,mv->mt", V, g), axis=-1),
                               rtol=1e-14)
    r = np.einsum("mt,mtv->mv", p, V) - g  # dL/d(out) of 0.5 ||p V - g||^2
    np.testing.assert_allclose(g_z[:, 0], p * np.einsum("mtv,mv->mt", V, r), rtol=1e-12)


def test_deciding_in_memory_equals_deciding_the_written_csvs(tmp_path):
    config = run_config(SMALLEST, 3)
    tables = run_rows(config, CORRECT_ARM, tmp_path)
    fixed = lesson_csvs()  # hand-made: the same tables either way is what is asked
    for name, table in {**fixed, **tables}.items():  # the seeded tables as rows, as a batch decides them
        write_csv(table, tmp_path / "r" / name)
    seeded = set(tables)
    in_memory = Decider(seeded)(Results("mem", {**fixed, **tables}))  # the claims that read a seeded table
    on_disk = decide(Results(tmp_path / "r"))  # every claim
    decided = {c.claim for c in in_memory.checks}
    assert in_memory.ks == {claim: k for claim, k in on_disk.ks.items() if claim in decided}
    assert [(c.check, c.parameters, repr(c.measured), repr(c.k), c.verdict) for c in in_memory.checks] == \
           [(c.check, c.parameters, repr(c.measured), repr(c.k), c.verdict) for c in on_disk.checks
            if c.claim in decided]
    assert table_file("entropy_sweep", "single_draw") == "entropy_single_draw.csv"


def test_a_runs_trial_scores_too_big_to_hold_go_through_a_file(tmp_path, monkeypatch):
    # a study's sizes are any the schema accepts: trial scores over one chunk are shared through a scratch
    # file, as the workflow shares them, and read back in chunks; the tables are the same either way
    config = run_config(SMALLEST, 1)
    held = run_rows(config, CORRECT_ARM, tmp_path)
    written = []
    write = runner.write_trial_scores
    monkeypatch.setattr(runner, "write_trial_scores", lambda *a: written.append(a[-1]) or write(*a))
    monkeypatch.setattr(trial_scores, "CHUNK_ELEMENTS", 2 * (SMALLEST["entropy_sweep"]["T"] + 1))  # 2 trials fit
    through_files = run_rows(config, CORRECT_ARM, tmp_path)
    assert len(written) == len(SMALLEST["entropy_sweep"]["d_k"])  # once per d_k, shared by three experiments
    assert list(tmp_path.iterdir()) == []  # the scratch files are gone
    assert {name: csv_text(rows) for name, rows in through_files.items()} == \
           {name: csv_text(rows) for name, rows in held.items()}


@pytest.mark.parametrize("experiment", seeded_experiments())
def test_a_runs_tables_as_columns_are_the_columns_of_their_dataframes(experiment):
    # a batch decides each run's tables as rows, whose columns Results makes arrays (results.column_of): each
    # column's dtype and values must be those of the DataFrame of the same rows, which a pipeline run reads
    for rows in run_experiment(experiment, settings_of(SMALLEST, experiment)).values():
        frame = pd.DataFrame(rows)
        columns = {name: column_of(rows, name) for name in frame.columns}
        for name, values in columns.items():
            assert values.dtype == np.asarray(frame[name]).dtype, name  # what Results reads
            assert np.array_equal(values, np.asarray(frame[name]), equal_nan=values.dtype.kind == "f"), name


# ---- the finite-d_k expectations, once per study ------------------------------------------------

class Asked(dict):
    """Expectations that remember which keys were asked for."""

    def __init__(self, *args):
        super().__init__(*args)
        self.asked = set()

    def __contains__(self, key):
        self.asked.add(key)
        return super().__contains__(key)


def cheap(sweep: dict) -> dict:
    """`sweep` with every sample count at the schema's minimum: its d_k and T, what the expectations depend on."""
    out = check_config(sweep)  # a copy, with every experiment's settings
    out["variance"]["n_pairs"] = 1000
    for section in ("entropy_sweep", "ranking_invariance", "gradient"):
        out[section]["trials"] = 100
    out["learning"].update(runs=10, steps=1)
    return out


SWEEPS = {
    "smallest": SMALLEST,
    "one gradient d_k, other T": {**SMALLEST, "entropy_sweep": {"d_k": [8, 2], "T": 3, "trials": 100},
                                  "gradient": {"d_k": [16], "T": 5, "trials": 100}},
}
# The same contract over every shipped study's sweep and the pipeline's default: a run of every experiment at each
# config, every claim decided, and each study's expectations computed (the widest's up to d_k = 65536): a study over
# configs, so the pipeline lane's.
SHIPPED = {
    **{f"study {name}": cheap(s.sweep) for name, s in load_studies().items() if s.sweep is not None},
    "pipeline default": cheap(yaml.safe_load(open("config/config.yaml"))),
}


@pytest.mark.parametrize(("sweep", "arm"), [
    *(pytest.param(s, CORRECT_ARM, id=name, marks=pytest.mark.house) for name, s in SWEEPS.items()),
    pytest.param(SMALLEST, "none", id="smallest, no scale", marks=pytest.mark.house),
    *(pytest.param(s, CORRECT_ARM, id=name, marks=pytest.mark.pipeline) for name, s in SHIPPED.items()),
])
def test_a_decision_asks_for_exactly_the_expectations_a_study_computes(sweep, arm, tmp_path):
    # what a study computes once (sweep_expectations) is derived from its sweep by expectations_asked, not
    # from the claims: a whole decision must find every expectation it asks for there, and ask for each
    keys = expectations_asked(sweep)
    given = Asked(sweep_expectations(sweep))
    R = Results("mem", {**lesson_csvs(), **run_rows(run_config(sweep, 0), arm, tmp_path)}, given)
    decide(R)
    assert len(set(keys)) == len(keys) and given.asked == set(keys)


def test_results_compute_the_expectations_or_take_those_given():
    key = ("scaled_minus_unit_variance", "entropy", 2, 2)
    assert Results("mem").expectation(*key) == scaled_minus_unit_variance("entropy", 2, 2)
    assert Results("mem").expectation("scaled", "jacobian_norm", 2, 2) == mean_statistic("jacobian_norm", 2, 2, True)
    assert Results("mem").expectation("unscaled", "jacobian_norm", 2, 2) == \
           mean_statistic("jacobian_norm", 2, 2, False)
    assert Results("mem", expectations={key: (0.5, 0.25)}).expectation(*key) == (0.5, 0.25)
    with pytest.raises(ResultsError, match="no expectation .*'entropy', 4, 2"):
        Results("mem", expectations={key: (0.5, 0.25)}).expectation("scaled_minus_unit_variance", "entropy", 4, 2)
    with pytest.raises(ValueError, match="unknown expectation 'scaled_minus_limit'"):
        expectation("scaled_minus_limit", "entropy", 2, 2)


def test_a_batch_decides_with_the_expectations_it_is_given(tmp_path, hand_made_lesson_dir, lessons_hand_made):
    s = check_study(study(2, 2, 2), "small")
    path = tmp_path / "expectations.csv"
    expectations_job(SMALLEST, path)
    computed = run_batch(s, CORRECT_ARM, 0)  # expectations computed, lesson tables made (no fixed_dir)
    given = run_batch(s, CORRECT_ARM, 0, expectations=read_expectations(path), fixed_dir=hand_made_lesson_dir)
    assert pd.DataFrame(given).equals(pd.DataFrame(computed))  # nan (a z without an SE) equal to nan
    shifted = {key: (mean + 1.0, se) for key, (mean, se) in read_expectations(path).items()}
    changed = run_batch(s, CORRECT_ARM, 0, expectations=shifted, fixed_dir=hand_made_lesson_dir)
    assert {r["expected"] for r in changed} != {r["expected"] for r in computed}


def test_a_batch_job_writes_the_batch_a_run_at_a_time_as_one_table(tmp_path, hand_made_lesson_dir):
    s = check_study(study(4, 2, 2), "small")
    expectations_job(SMALLEST, tmp_path / "expectations.csv")
    batch_job("small", s.settings(), CORRECT_ARM, 1, tmp_path / "batch.csv", tmp_path / "expectations.csv",
              hand_made_lesson_dir, str(tmp_path / "batch.log"))
    table = run_batch(s, CORRECT_ARM, 1, fixed_dir=hand_made_lesson_dir,
                      expectations=read_expectations(tmp_path / "expectations.csv"))
    assert (tmp_path / "batch.csv").read_text() == csv_text(table)
    assert sorted({r["seed_index"] for r in table}) == [2, 3]
    assert re.search(r"2 runs, \d+ checks; CPU s: .*; peak RSS \d+ MiB", (tmp_path / "batch.log").read_text())


# ---- a small study end to end ---------------------------------------------------------------------

@pytest.mark.pipeline  # reads the small study (a statistical study in process)
def test_the_checks_table_has_one_row_per_run_and_check(small):
    out = small.out
    checks = pd.read_csv(out / "checks.csv")
    assert tuple(checks.columns) == COLUMNS
    assert not checks.duplicated(["config", "arm", "seed_index", "claim", "check", "parameters"]).any()
    runs = checks.groupby("arm").seed_index.nunique().to_dict()
    assert runs == {CORRECT_ARM: 100, **{a: 10 for a in BROKEN_ARMS}}
    # every run has the same checks, and its seed is the derived one
    per_run = checks.groupby(["arm", "seed_index"]).size()
    assert per_run.nunique() == 1
    first = checks.drop_duplicates(["seed_index"]).set_index("seed_index").seed
    assert all(first[i] == calibration_seed(SMALLEST["seed"], i) for i in first.index)
    assert set(checks.verdict) <= {"holds", "fails", "inconclusive", "not measured", "holds on average, not per draw"}
    st = checks[checks.basis.isin(["statistical", "derived"]) & (checks.se > 0)]
    assert np.allclose(st.z, st.deviation / st.se)
    assert np.allclose(st.tolerance, st.k_check * st.se) and (st.k_check >= st.k - 1e-12).all()  # Cornish-Fisher
    assert checks[~checks.basis.isin(["statistical", "derived"])].z.isna().all()
    assert not checks.claim.str.startswith("A").any()  # the lesson replications do not depend on the seed
    # each check's k is its claim's (a derived one's: its source's), the same in every run of the sweep
    assert (st.k > 4).all() and st.groupby(["claim", "check", "parameters"]).k.nunique().max() == 1
    assert checks[~checks.basis.isin(["statistical", "derived"])].k.isna().all()


@pytest.mark.pipeline  # reads the small study (a statistical study in process)
def test_the_summary_tables(small):
    out = small.out
    for name in TABLES:
        assert (out / f"{name}.csv").is_file()
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 100 + 10 * len(BROKEN_ARMS)
    ff = pd.read_csv(out / "false_fails.csv").set_index(["config", "arm"])
    correct = ff.loc[("small", CORRECT_ARM)]
    assert correct.runs == 100 and correct.expected == pytest.approx(100 * 1e-4)
    assert correct.runs_with_fail == int((runs[runs.arm == CORRECT_ARM].n_fails > 0).sum())
    # a run fails a check held to an SE exactly when its largest margin toward failing exceeds 1
    fails = runs.n_statistical_fails > 0
    assert (fails == (runs.max_margin_toward_fail > 1)).all()
    z = pd.read_csv(out / "z_summary.csv")
    assert set(z.relation) <= {"within", "above", "below", "not above", "not below"}
    d = pd.read_csv(out / "directional.csv")
    assert np.allclose(d.holds + d.inconclusive + d.fails + d.other, 1.0)
    power = pd.read_csv(out / "power.csv").set_index(["arm", "claim"])
    # the scaled variance (B2) is 1 only under the right scale: every broken run catches it
    assert power.loc[(CORRECT_ARM, "B2"), "fails"] == 0
    assert power.loc[("none", "B2"), "fails"] == 1 and power.loc[("inv_dk", "B2"), "fails"] == 1
    assert power.loc[("none", "B1"), "fails"] == 0  # the raw scores do not depend on the scale
    # a Jacobian without its -p p^T term: B7 fails in every run of its arm; the claims without a gradient hold
    assert power.loc[("no_pp_term", "B7"), "fails"] == 1
    assert all(power.loc[("no_pp_term", claim), "fails"] == 0 for claim in ("B1", "B2", "B5", "B8"))


@pytest.mark.pipeline  # reads the small study (a statistical study in process)
def test_z_of_a_check_with_an_exact_se_is_standard_normal(small):
    """B1's mean of raw scores has SE sqrt(d / n) exactly: its z has mean 0 and sd 1. The bounds fail
    if the SE were 1.5x too large (sd 0.67) or too small (sd 1.5): 300 z's give sd within about 0.04."""
    checks = pd.read_csv(small.out / "checks.csv")
    z = checks[(checks.arm == CORRECT_ARM) & (checks.check == "mean of raw scores")].z
    assert len(z) == 300
    assert abs(z.mean()) < 0.25
    assert 0.85 < z.std() < 1.18
    for wrong in (1.5, 1 / 1.5):
        assert not 0.85 < (z / wrong).std() < 1.18


@pytest.mark.pipeline  # reads the small study (a statistical study in process)
def test_the_calibration_report_is_self_contained(small, tmp_path):
    out = small.out
    html_path = tmp_path / "calibration.html"
    head = build_report(out, html_path)
    html = html_path.read_text()
    assert html.count('src="data:image/png;base64,') == 4
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert f"Over {head['runs']} seeded runs" in html and head["runs"] == 100
    assert "broken: no scale" in html


@pytest.mark.pipeline  # reads the small study (a statistical study in process)
def test_the_main_report_quotes_the_study_only_when_it_exists(small, tmp_path):
    out = small.out
    assert main_report_summary(tmp_path) is None
    head = main_report_summary(out)
    assert head["runs"] == 100 and math.isfinite(head["z_sd"])
    assert 0 <= wilson(0, 100)[0] == 0 and wilson(100, 100)[1] == 1


@pytest.mark.pipeline  # reads the small study (a statistical study in process)
def test_the_main_report_links_and_quotes_the_study(small, tmp_path):
    from sdpa_lab.report.html import render_report
    from sdpa_lab.report.provenance import provenance

    tables = run_rows(run_config(SMALLEST, 0), CORRECT_ARM, tmp_path)
    decision = decide(Results("mem", {**lesson_tables(), **tables}))
    prov = provenance(SMALLEST, [], tmp_path)
    head = main_report_summary(small.out)
    html = render_report(decision, {}, prov, calibration=head)
    assert 'href="calibration.html"' in html
    assert f"over {head['runs']} seeded runs of the correct pipeline, {head['runs_with_fail']} false fail" in html
    assert "calibration.html" not in render_report(decision, {}, prov)
