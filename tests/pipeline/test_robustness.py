"""Nothing lost, nothing wrong: failed, interrupted and repeated runs, through real Snakemake (a refused run:
test_config_refusals.py).

Every pipeline test works on a copy of the workflow in a temporary folder, on
a small config, building four CSVs of the seeded experiments.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sdpa_lab.experiments.registry import EXPERIMENTS, output_paths

from tests.conftest import REPO, TINY_CONFIG
from tests.pipeline.conftest import SNAKEMAKE, copy_of, digests, files_under, make_workdir
from tests.pipeline.conftest import snakemake as run_snakemake

TARGETS = ["results/variance.csv", "results/entropy_sweep.csv", "results/forward_shape.csv"]
VARIANCE_PAIRS = 100_000  # not the tiny config's: the failed-rerun test changes the settings back to those

# On one test worker (pytest-xdist, --dist loadgroup): the tests of the reference run, built once per worker.
ON_REFERENCE = pytest.mark.xdist_group("robustness")


def robustness_config() -> dict:
    """The tiny config with variance settings of its own."""
    config = copy.deepcopy(TINY_CONFIG)
    config["variance"]["n_pairs"] = VARIANCE_PAIRS
    return config


def snakemake(work: Path, *args: str, cores: int = 2, env: dict | None = None,
              targets: list[str] = TARGETS) -> subprocess.CompletedProcess:
    """Run Snakemake in `work` on `targets` (plus `args`), as a user would, and wait for it."""
    return run_snakemake(work, *args, cores=cores, env=env, targets=targets)


def assert_clean_results(work: Path) -> None:
    """No temporary file is visible in results/."""
    leftovers = [p.name for p in (work / "results").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == [], leftovers


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A clean, uninterrupted run: its folder and the sha256 of every CSV it wrote."""
    work = make_workdir(tmp_path_factory.mktemp("reference") / "work", robustness_config())
    proc = snakemake(work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sums = digests(work)
    draws = [f"results/trial_scores/seed{c['seed']}_T{c['entropy_sweep']['T']}_trials{c['entropy_sweep']['trials']}"
             f"_dk{d}.npy" for c in [robustness_config()] for d in c["entropy_sweep"]["d_k"]]
    assert sorted(sums) == sorted(TARGETS + ["results/entropy_single_draw.csv", "results/entropy_exercise2.csv"]
                                  + draws)
    return work, sums


# ---- 1. a failed run loses nothing and leaves nothing stale ---------------------------------------

FAULT_HOOK = '''
import os
if os.environ.get("SDPA_LAB_TEST_FAULT"):  # test-only fault injection, loaded by every Python started
    import time
    from sdpa_lab import pipeline

    _fault, _name = os.environ["SDPA_LAB_TEST_FAULT"].split(":")
    _run = pipeline.run_declared  # what a job runs (run_job), and run_experiment too

    def _injected(experiment, *args, **kwargs):
        if experiment.name == _name:
            if _fault == "hang":
                time.sleep(600)
            raise RuntimeError(f"injected failure in {experiment.name}")
        return _run(experiment, *args, **kwargs)

    pipeline.run_declared = _injected
'''


def fault_env(tmp_path: Path, experiment: str, fault: str = "fail") -> dict:
    """An environment in which experiment `experiment`'s job, once it runs, raises ("fail") or blocks ("hang"),
    through a sitecustomize."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(FAULT_HOOK)
    return {**os.environ, "PYTHONPATH": str(hook), "SDPA_LAB_TEST_FAULT": f"{fault}:{experiment}"}


@ON_REFERENCE
@pytest.mark.pipeline
def test_failed_rerun_removes_only_its_own_output_and_reruns_next_time(reference, tmp_path):
    work = copy_of(reference[0], tmp_path / "work")
    before = files_under(work)
    config = robustness_config()
    config["variance"]["n_pairs"] = 2000  # a settings change: the variance job must rerun...
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(work, env=fault_env(tmp_path, "variance"))  # ... and it fails
    assert proc.returncode != 0
    assert "injected failure in variance" in (work / "logs" / "variance.log").read_text()
    # Nothing wrong: Snakemake removed the failed job's output (no CSV of the old settings under the
    # current name); the other results untouched, same bytes and mtimes.
    after = files_under(work)
    assert not (work / "results" / "variance.csv").exists()
    assert {k: v for k, v in after.items() if "variance" not in k} == {
        k: v for k, v in before.items() if "variance" not in k}
    dry = snakemake(work, "--dry-run")
    assert dry.returncode == 0 and "rule variance:" in dry.stdout
    # The next successful run rebuilds it with the new settings.
    proc = snakemake(work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (pd.read_csv(work / "results" / "variance.csv").n_pairs == 2000).all()
    assert_clean_results(work)


@ON_REFERENCE
@pytest.mark.pipeline
def test_a_settings_change_reruns_exactly_the_experiments_that_read_them(reference, tmp_path):
    work = copy_of(reference[0], tmp_path / "work")

    def planned(*args: str) -> set[str]:
        dry = snakemake(work, "--dry-run", "--quiet", "rules", *args)
        assert dry.returncode == 0, dry.stderr[-3000:]
        return set(re.findall(r"^(\w+)\s+\d+$", dry.stdout, re.M)) - {"total"}

    assert planned() == set()  # nothing to do
    config = robustness_config()
    config["entropy_sweep"]["trials"] = 150
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    assert planned() == {"entropy_sweep", "trial_scores"}  # fresh draws for the new trial count
    config = robustness_config()
    config["entropy_sweep"]["d_k"] = [*config["entropy_sweep"]["d_k"], 16]
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    assert planned() == {"entropy_sweep", "trial_scores"}  # one new d_k: the others' draws are kept and shared
    # Back to the settings the results were made with: up to date again (Snakemake's params check).
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(robustness_config()))
    assert planned() == set()


@pytest.mark.pipeline
def test_editing_an_experiments_code_reruns_only_the_jobs_that_run_it(tmp_path):
    """A rule's code inputs are its experiment's modules and what they import, not the whole package."""
    work = make_workdir(tmp_path / "work", TINY_CONFIG)
    shutil.copytree(REPO / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    # The jobs run this copy's package, not the installed one (PYTHONPATH). The dry runs below need not: they
    # read the copy's files as the code inputs, since the code inputs name the workflow's own src/ when it has one.
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    # which jobs rerun is checked, not the numbers: in this copy, the lesson's Exercise 1 at 500 samples
    lesson = work / "src" / "sdpa_lab" / "experiments" / "replication.py"
    text = lesson.read_text()
    assert "A1_N_SAMPLES = 100_000\n" in text
    lesson.write_text(text.replace("A1_N_SAMPLES = 100_000\n", "A1_N_SAMPLES = 500\n"))
    tables = [path for name in EXPERIMENTS for path in output_paths(name).values()]  # no claims, figures, report
    proc = snakemake(work, env=env, targets=tables)
    assert proc.returncode == 0, proc.stderr[-3000:]
    experiments = set(EXPERIMENTS) | {"trial_scores"}

    # Moving or copying the checkout (mtimes kept) reruns nothing: the code inputs are paths relative to it.
    moved = shutil.copytree(work, tmp_path / "elsewhere" / "work", symlinks=True)
    dry = snakemake(moved, "--dry-run", targets=tables)
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-3000:]
    shutil.rmtree(moved)

    def planned_after_editing(module: str) -> set[str]:
        path = work / "src" / "sdpa_lab" / module
        text, stat = path.read_bytes(), path.stat()
        path.write_bytes(text + b"\n# an edit\n")  # new content: Snakemake ignores a bare touch
        dry = snakemake(work, "--dry-run", "--quiet", "rules", targets=tables)
        assert dry.returncode == 0, dry.stderr[-3000:]
        path.write_bytes(text)  # the edit undone, mtime too: up to date again for the next edit
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        return set(re.findall(r"^(\w+)\s+\d+$", dry.stdout, re.M)) & experiments

    assert planned_after_editing("experiments/learning.py") == {"learning"}
    assert planned_after_editing("experiments/trial_scores.py") == {
        "trial_scores", "entropy_sweep", "ranking_invariance", "gradient"}
    # The one module every experiment imports reruns them all.
    assert planned_after_editing("seeding.py") == experiments
    assert planned_after_editing("experiments/registry.py") == set()  # gathers the declarations: reruns nothing
    assert planned_after_editing("experiments/declaration.py") == set()  # how they are declared: nor this
    dry = snakemake(work, "--dry-run", targets=tables)  # each edit undone: nothing to do
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-3000:]


# ---- 2. an interrupted run resumes to the same bytes ----------------------------------------------

# Runs the command in its arguments with SIGINT at its default and no signal blocked (exec keeps an ignored or
# blocked signal so).
AS_FROM_A_TERMINAL = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                      "signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])")


def killed_mid_job(tmp_path: Path, sig: signal.Signals) -> Path:
    """A fresh workdir whose run `sig` interrupted in the middle of the variance job.

    Snakemake starts in its own process group, with the variance job made to block once it runs (a
    fault_env's sitecustomize): however loaded the machine, the kill lands while the job runs, before its
    tables exist. Once the job's log exists, `sig` goes to the whole group (as Ctrl-C or a crash would), and the
    test waits until every process of it is gone."""
    work = make_workdir(tmp_path / "work", robustness_config())
    env = fault_env(tmp_path, "variance", "hang")
    # Started as from a terminal: SIGINT neither ignored nor blocked, whatever this test worker has inherited or
    # set (both pass to a child: under the whole suite, a worker's Snakemake ignored the Ctrl-C).
    proc = subprocess.Popen([sys.executable, "-c", AS_FROM_A_TERMINAL, *SNAKEMAKE, "--cores", "2", *TARGETS],
                            cwd=work, start_new_session=True, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    log, deadline = work / "logs" / "variance.log", time.monotonic() + 120
    while not log.is_file():  # the job's log is created when the job starts (sdpa_lab.joblog)
        assert proc.poll() is None and time.monotonic() < deadline, "the variance job never started"
        time.sleep(0.01)
    os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"{sig.name} did not stop Snakemake; here SIGINT is {signal.getsignal(signal.SIGINT)}, "
                             f"blocked: {signal.pthread_sigmask(signal.SIG_BLOCK, [])}") from None
    deadline = time.time() + 30
    while time.time() < deadline:  # wait until every job of the group is gone
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    assert "done in" not in log.read_text() and not (work / "results" / "variance.csv").exists()  # mid-job
    return work


@ON_REFERENCE
@pytest.mark.pipeline
@pytest.mark.parametrize("signame", ["SIGINT", "SIGKILL"])
def test_a_run_interrupted_mid_job_resumes_to_identical_results(reference, tmp_path, signame):
    work = killed_mid_job(tmp_path, getattr(signal, signame))
    # Whatever the kill left under a final name is complete: the very bytes of the clean run.
    visible = {rel: sha for rel, sha in digests(work).items() if not Path(rel).name.startswith(".")}
    assert visible == {rel: reference[1][rel] for rel in visible}
    proc = snakemake(work)  # the README's plain command (the default profile adds --rerun-incomplete)
    if proc.returncode != 0:
        # Only a SIGKILL can leave Snakemake's lock behind; it then says how to remove it.
        assert signame == "SIGKILL" and "--unlock" in proc.stderr, proc.stderr[-3000:]
        assert snakemake(work, "--unlock").returncode == 0
        proc = snakemake(work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert digests(work) == reference[1]
    assert_clean_results(work)


@ON_REFERENCE
@pytest.mark.pipeline
def test_default_profile_reruns_an_output_marked_incomplete(reference, tmp_path):
    """A kill between a job's atomic write and Snakemake's bookkeeping leaves a complete file marked incomplete.

    Snakemake 9 then stops with IncompleteFilesException unless --rerun-incomplete
    is given; profiles/default/config.yaml gives it. (The marker's layout,
    .snakemake/incomplete/<base64 of the path>, is Snakemake's own.)
    """
    import base64

    work = copy_of(reference[0], tmp_path / "work")
    marker = work / ".snakemake" / "incomplete" / base64.b64encode(b"results/variance.csv").decode()
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text('{"external_jobid": null}')
    without = snakemake(work, "--dry-run", "--workflow-profile", "none")
    assert without.returncode != 0 and "IncompleteFilesException" in without.stdout + without.stderr
    with_profile = snakemake(work, "--dry-run")
    assert with_profile.returncode == 0, with_profile.stderr[-2000:]
    assert "rule variance:" in with_profile.stdout


# ---- 3. the same bytes whatever the cores, the folder, or touched files -------------------------


# Every experiment drawing from the configured seed.
SEEDED = [path for name, e in EXPERIMENTS.items() if e.section for path in output_paths(name).values()]


def test_same_bytes_across_cores_folders_and_touched_inputs(tiny_run, tmp_path):
    """The shared tiny run (`--cores 4`) against the same config run on one core in another folder."""
    one = make_workdir(tmp_path / "other folder", TINY_CONFIG)  # another path, with a space in it
    proc = snakemake(one, cores=1, targets=SEEDED)
    assert proc.returncode == 0, proc.stderr[-3000:]
    first = digests(one)
    assert sorted(r for r in first if not r.startswith("results/trial_scores/")) == sorted(SEEDED)
    assert {rel: sha for rel, sha in digests(tiny_run).items() if rel in first} == first  # CSVs and trial draws
    # Touch the config and the scripts: the jobs rerun (a script newer than its outputs) ...
    later = time.time() + 5
    for path in [one / "config" / "config.yaml", *(one / "workflow" / "scripts").glob("*.py")]:
        os.utime(path, (later, later))
    proc = snakemake(one, cores=2, targets=SEEDED)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "rule variance:" in proc.stdout + proc.stderr
    # ... and write the same bytes.
    assert digests(one) == first
    assert_clean_results(one)
