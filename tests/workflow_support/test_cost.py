"""`sdpa-lab check-config FILE` vets a config received from someone else, safely and without Snakemake;
the cost model it prints (sdpa_lab.workflow_support.cost) grows with the sweep as the work does."""

from __future__ import annotations

import copy
import dataclasses
import os
import subprocess
import sys

import pytest
import yaml

from sdpa_lab.cli import main
from sdpa_lab.config import check_config, load_schema
from sdpa_lab.workflow_support import cost

from tests.conftest import REPO
from tests.test_config import billion_laughs


@pytest.fixture
def default_config(default_config):
    """config/config.yaml as the workflow holds it: every section, with the schema's defaults filled in (an
    experiment added later need not be spelled out in config/config.yaml for the estimate to cost it)."""
    return check_config(default_config)

YTE = '__use_yte__: true\nseed: ?__import__("pathlib").Path("PWNED").touch() or 20241129\n'


def test_the_shipped_configs_pass_with_their_cost(capsys):
    for name in ("config.yaml", "large.yaml"):
        assert main(["check-config", str(REPO / "config" / name)]) == 0
        out = capsys.readouterr().out
        assert f"{name}: ok" in out and "estimated cost of the main run" in out and "on disk" in out


@pytest.mark.parametrize(
    "text, line",
    [
        (YTE, "__use_yte__ is not allowed: Snakemake would evaluate this file as a YTE template"),
        (billion_laughs(), "aliases are not allowed"),
        ("seed: !!python/object/apply:os.system ['touch PWNED']\n", "not valid YAML at line 1, column 7"),
        ("seed: 7\nvariance: {n_pairs: 5}\n", "config setting variance.n_pairs: got 5"),
    ],
    ids=["yte", "alias bomb", "python tag", "partial, bad"],
)
def test_a_bad_config_is_refused_and_runs_nothing(tmp_path, monkeypatch, capsys, text, line):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suspect.yaml").write_text(text)
    assert main(["check-config", "suspect.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdpa-lab check-config: refused: ") and line in err, err
    assert not (tmp_path / "PWNED").exists()


def test_a_non_finite_setting_is_refused(tmp_path, default_config, capsys):
    path = tmp_path / "nan.yaml"
    path.write_text(yaml.safe_dump(default_config).replace("loss_threshold: 0.1", "loss_threshold: .nan"))
    assert main(["check-config", str(path)]) == 2
    assert "config setting learning.loss_threshold: got nan; must be a finite number" in capsys.readouterr().err


def test_check_config_does_not_import_snakemake(tmp_path):
    path = tmp_path / "suspect.yaml"
    path.write_text(YTE)
    code = ("import sys; from sdpa_lab.cli import main; rc = main(['check-config', sys.argv[1]]); "
            "assert 'snakemake' not in sys.modules and 'yte' not in sys.modules; sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 2, proc.stderr
    assert not (tmp_path / "PWNED").exists()


# ---- the cost model ------------------------------------------------------------------------------


def test_cost_grows_with_the_work(default_config):
    base = cost.estimate(default_config)
    bigger = copy.deepcopy(default_config)
    bigger["variance"]["n_pairs"] *= 10
    grown = cost.estimate(bigger)
    per_call = 1e-9 * cost.NS_PER["variance"]["d_k"] * len(default_config["variance"]["d_k"])  # does not grow
    assert grown.cpu_s["variance"] - per_call == pytest.approx(10 * (base.cpu_s["variance"] - per_call))
    assert grown.cpu_s["trial_scores"] == base.cpu_s["trial_scores"] and grown.disk_bytes == base.disk_bytes
    # learning: its descent and its steps' calls grow with the steps, its draws of keys and queries do not
    learning = []
    for times in (1, 2, 3):
        config = copy.deepcopy(default_config)
        config["learning"]["steps"] *= times
        learning.append(cost.estimate(config).cpu_s["learning"])
    assert learning[1] > learning[0] and learning[2] - learning[1] == pytest.approx(learning[1] - learning[0])


def test_variance_time_follows_the_benchmarked_rate(default_config):
    default_config["variance"] = {"d_k": [1024], "n_pairs": 10**9}  # about 6 hours of CPU
    seconds = cost.estimate(default_config).cpu_s["variance"]
    per = cost.NS_PER["variance"]
    assert seconds == pytest.approx(1e-9 * (10**9 * 1024 * per["pair_dimension"] + 10**9 * per["pair"] + per["d_k"]))
    assert 4 * 3600 < seconds < 7 * 3600


# The sections whose experiments read the shared trial scores (their declarations say so).
SHARING = [e.section for e in cost.EXPERIMENTS.values() if e.shares_trial_scores]


def test_trial_scores_disk_is_their_npy_files(default_config):
    for name in SHARING:
        default_config[name] |= {"trials": 10**8, "T": 8, "d_k": [64]}
    estimate = cost.estimate(default_config)
    one_file = 10**8 * (8 + 1) * 8  # float64 scores of 8 keys and |q| per trial: 7.2 GB, shared by them all
    assert estimate.disk_bytes == one_file + cost.NPY_HEADER_BYTES + cost.LEFTOVER_BYTES
    default_config["gradient"]["T"] = 16  # no longer shared: a second file
    assert cost.estimate(default_config).disk_bytes == estimate.disk_bytes + 10**8 * 17 * 8 + cost.NPY_HEADER_BYTES


def test_the_npy_header_estimate_is_numpys(tmp_path):
    from sdpa_lab.experiments.trial_scores import write_trial_scores

    path = tmp_path / "scores.npy"
    write_trial_scores(seed=1, d_k=4, T=8, trials=100, path=path)
    assert path.stat().st_size == 100 * 9 * 8 + cost.NPY_HEADER_BYTES


def test_a_run_above_an_hour_needs_confirmation(default_config):
    default_config["variance"]["n_pairs"] = 10**9
    estimate = cost.estimate(default_config)
    problem = cost.run_problem(estimate, default_config, free_bytes=1 << 40)
    assert problem.endswith("to start it anyway, add --config confirm_long_run=true") and " h of CPU" in problem
    for yes in (True, "true"):  # --config confirm_long_run=True, or =true (which Snakemake passes as text)
        assert cost.run_problem(estimate, {**default_config, "confirm_long_run": yes}, free_bytes=1 << 40) is None
    assert cost.run_problem(estimate, {**default_config, "confirm_long_run": "false"}, free_bytes=1 << 40)
    assert "snakemake asks for --config confirm_long_run=true" in cost.summary(estimate)[0]


@pytest.mark.house
def test_an_experiment_the_model_leaves_out_is_named(default_config, monkeypatch):
    estimate = cost.estimate(default_config)
    # the registry's experiments the model estimates (an experiment added without its line is left out: optional)
    modelled = {name: e for name, e in cost.EXPERIMENTS.items() if name in estimate.cpu_s or e.section is None}
    monkeypatch.setattr(cost, "EXPERIMENTS", modelled)
    assert cost.not_estimated(estimate) == [] and "not in the estimate" not in "\n".join(cost.summary(estimate))
    toy = dataclasses.replace(cost.EXPERIMENTS["learning"], name="temperature", section="temperature")
    monkeypatch.setattr(cost, "EXPERIMENTS", {**modelled, "temperature": toy})
    assert cost.not_estimated(estimate) == ["temperature"]
    assert cost.summary(estimate)[-1].endswith("cost.estimate): temperature")


def test_a_run_larger_than_the_free_space_is_refused(default_config):
    default_config["entropy_sweep"]["trials"] = 10**8
    estimate = cost.estimate(default_config)
    problem = cost.run_problem(estimate, {**default_config, "confirm_long_run": True}, free_bytes=1 << 30)
    assert problem.startswith(f"this run would write about {cost.size(estimate.disk_bytes)} and only 1.0 GiB is free")
    assert cost.run_problem(estimate, {**default_config, "confirm_long_run": True}, free_bytes=1 << 40) is None


def test_the_default_run_needs_nothing(default_config):
    assert cost.run_problem(cost.estimate(default_config), default_config, free_bytes=1 << 30) is None


def test_trial_scores_already_drawn_are_not_counted(default_config):
    clean = cost.estimate(default_config)
    files = list(cost.trial_score_files(default_config))
    assert len(files) == len({(default_config[name]["T"], d) for name in SHARING for d in default_config[name]["d_k"]})
    again = cost.estimate(default_config, drawn=files[:2])
    assert again.reused == 2 and again.disk_bytes == clean.disk_bytes - 2 * (4000 * 9 * 8 + cost.NPY_HEADER_BYTES)
    assert again.cpu_s["trial_scores"] < clean.cpu_s["trial_scores"]
    assert "reusing the 2 trial-score files already drawn" in cost.summary(again)[0]


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_what_is_not_a_regular_file_is_refused_at_once(tmp_path, kind, capsys):
    # A FIFO would block the open until a writer came; /dev/zero would be read for ever.
    path = tmp_path / "suspect.yaml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    proc = subprocess.run([sys.executable, "-m", "sdpa_lab.cli", "check-config", str(path)], capture_output=True,
                          text=True, timeout=20, check=False)  # a timeout, not a hang, if it blocks
    assert proc.returncode == 2 and proc.stdout == ""
    what = {"fifo": "a FIFO (named pipe)", "folder": "a folder", "device": "a character device"}[kind]
    assert proc.stderr == (f"sdpa-lab check-config: refused: config file {path}: is {what}, not a regular file; "
                           "a config is a plain file\n"), proc.stderr


def test_a_look_alike_name_shows_its_non_ascii_letters(tmp_path, default_config, capsys):
    path = tmp_path / "look.yaml"
    path.write_text(yaml.safe_dump(default_config) + "s\u0435ed: 8\n", encoding="utf-8")  # a Cyrillic "е"
    assert main(["check-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[1:] == [
        "  config setting s\u0435ed: unknown setting (a typo?); its name is not plain ASCII: U+0435 CYRILLIC SMALL "
        "LETTER IE at character 2; allowed here: " + ", ".join(sorted(load_schema()["properties"]))], err


def test_a_run_with_solutions_announces_their_grading_too(default_config):
    plain = cost.estimate(default_config)
    graded = cost.estimate({**default_config, "solutions": "mine.py"})
    assert graded.total_cpu_s == pytest.approx(plain.total_cpu_s + cost.GRADE_CPU_S)
    lines = cost.summary(graded)
    assert "the grading of your solutions" in lines[0] and any(line.split()[0] == "solutions" for line in lines)
    assert not any("solutions" in line for line in cost.summary(plain))


def test_exercise2_is_counted_with_the_experiments_own_sizes(default_config):
    """entropy_sweep's Exercise 2 draws (EXERCISE2_T + 1) * d_k normals per sequence and d_k of EXERCISE2_D_K, for
    each of the sweep's trials: the cost model counts them as the experiment declares its work, with its sizes (one
    declaration, sdpa_lab.experiments.sizes), so a config of a million trials at one small head costs its Exercise 2,
    not nothing."""
    from sdpa_lab.experiments import entropy_sweep

    assert cost.EXPERIMENTS["entropy_sweep"].work == "sdpa_lab.experiments.entropy_sweep:entropy_sweep_work"
    one = copy.deepcopy(default_config) | {"entropy_sweep": {"d_k": [1], "T": 2, "trials": 1_000_000}}
    per_sequence = sum(d * (entropy_sweep.EXERCISE2_T + 1) for d in entropy_sweep.EXERCISE2_D_K)
    assert cost.work(check_config(one), [])["entropy_sweep"]["exercise2_normal"] == 1_000_000 * per_sequence
    assert cost.estimate(check_config(one)).cpu_s["entropy_sweep"] >= (
        cost.NS_PER["entropy_sweep"]["exercise2_normal"] * 1e-9 * 1_000_000 * per_sequence)


def test_the_cost_model_stays_light_at_parse_time():
    # the Snakefile imports it on every snakemake call: NumPy comes with the experiments' registry it reads (as
    # Snakemake's own), pandas and matplotlib never
    code = ("import sys; import sdpa_lab.workflow_support.cost, sdpa_lab.calibration.space; "
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'matplotlib')); "
            "assert not heavy, heavy[:3]")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- each experiment's line of the model, declared beside it; the fit walks the registry ------------------------

@pytest.mark.house
def test_each_experiment_declares_a_constant_for_every_term_of_its_work(default_config):
    declaring = [e for e in cost.EXPERIMENTS.values() if e.work]
    assert declaring  # the shipped ones all do
    for e in declaring:
        assert set(e.work_of(default_config[e.section])) == set(e.ns_per), e.name  # no term free by omission
        assert cost.NS_PER[e.name] is e.ns_per  # the model reads the declaration itself
    assert set(cost.work(default_config, [])) == {"trial_scores", *(e.name for e in declaring)}


def test_an_experiment_declared_with_its_work_is_estimated_by_its_own_constants(default_config, monkeypatch):
    # a toy part: one term, counted from its settings, 1e9 ns (1 s) per unit
    toy = dataclasses.replace(cost.EXPERIMENTS["variance"], name="toy", work="tests.workflow_support."
                              "test_cost:_toy_work", ns_per={"pair": 1e9})
    monkeypatch.setattr(cost, "EXPERIMENTS", {**cost.EXPERIMENTS, "toy": toy})
    monkeypatch.setitem(cost.NS_PER, "toy", toy.ns_per)
    estimate = cost.estimate(default_config)
    assert estimate.cpu_s["toy"] == pytest.approx(3 * default_config["variance"]["n_pairs"])


def _toy_work(settings):
    return {"pair": 3 * settings["n_pairs"]}


def _benchmark():
    """benchmarks/cost.py, imported as a module (it is a script, not part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cost_benchmark", REPO / "benchmarks" / "cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fit_points_measure_every_experiment_that_declares_its_work_and_generated_ones_are_valid():
    bench = _benchmark()
    points = bench.fit_points()
    measured = {part for parts, _ in points.values() for part in parts}
    assert {e.name for e in cost.EXPERIMENTS.values() if e.work} <= measured
    generated = bench.generated_points(cost.EXPERIMENTS["variance"], load_schema())
    pairs = {check_config(config)["variance"]["n_pairs"] for _, config in generated.values()}
    assert pairs == {100_000, 25_000, 400_000}  # its default, a quarter and four times it, within the bounds
    assert all(parts == ["variance"] for parts, _ in generated.values())


def test_generated_points_vary_a_setting_whose_default_stands_beside_its_ref():
    # entropy_sweep.T is `{$ref: sequence_length, default: 8}`: its own default, not the shared entry's, is varied
    generated = _benchmark().generated_points(cost.EXPERIMENTS["entropy_sweep"], load_schema())
    Ts = {check_config(config)["entropy_sweep"]["T"] for _, config in generated.values()}
    assert Ts == {8, 2, 32}
    # and its list of sizes as its smallest and its largest entry alone: the per-d_k term varies too
    d_ks = {tuple(check_config(config)["entropy_sweep"]["d_k"]) for _, config in generated.values()}
    assert {(4,), (4096,)} <= d_ks


def test_a_part_measured_again_keeps_the_file_s_other_rows(tmp_path):
    path = tmp_path / "cost_fit.csv"
    assert _benchmark().kept_rows(path, {"a"}, {"a", "b"}) == []  # no file yet
    path.write_text("config,part,measured_cpu_s\na,x,1.0\nb,x,2.0\na,total,3.0\nc,y,4.0\ngone,x,5.0\n")
    kept = _benchmark().kept_rows(path, {"a"}, {"a", "b", "c"})  # "gone": a point since removed
    assert [(r["config"], r["part"], r["measured_cpu_s"]) for r in kept] == [("b", "x", "2.0"), ("c", "y", "4.0")]


def test_the_fit_recovers_the_constants_and_takes_zero_placeholders():
    bench = _benchmark()
    points = {name: config for name, (parts, config) in bench.FIT_POINTS.items() if parts == ["variance"]}
    true = {"pair_dimension": 20.0, "pair": 5.0, "d_k": 3.0e5}
    rows = [{"config": name, "part": "variance",
             "measured_cpu_s": cost.NS * sum(true[t] * n for t, n in cost.work(check_config(config), [])["variance"]
                                              .items())} for name, config in points.items()]
    assert bench.fit(rows, points)["variance"] == pytest.approx(true, rel=1e-2)
    zero = dict.fromkeys(true, 0.0)  # a new experiment's constants before its first fit
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(cost.NS_PER, "variance", zero)
        assert bench.fit(rows, points)["variance"] == pytest.approx(true, rel=1e-2)
    assert bench._ratio(1.0, 0.0) == "" and bench._ratio(3.0, 2.0) == 1.5
