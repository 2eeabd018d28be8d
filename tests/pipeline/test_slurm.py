"""The pipeline on a real one-node SLURM cluster, through profiles/slurm (Snakemake's slurm executor plugin).

tests/pipeline/slurm/cluster.sh starts the cluster (memory enforced) for this module and stops it
afterwards, failed tests or not. Skipped where SLURM, munge or the plugin is not installed
(`apt-get install slurm-wlm munge`, `pip install -e ".[slurm]"`; .ci/run does both).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from sdpa_lab.grading import sandbox

from tests.conftest import TINY_CONFIG
from tests.pipeline.conftest import SNAKEMAKE, copy_of, make_workdir
from tests.pipeline.conftest import snakemake as run_snakemake

# On one test worker (pytest-xdist, --dist loadgroup): one cluster at a time (it links /etc/slurm/slurm.conf).
pytestmark = [pytest.mark.slurm, pytest.mark.pipeline, pytest.mark.xdist_group("slurm")]

REPO = Path(__file__).resolve().parents[2]
CLUSTER_SH = REPO / "tests" / "pipeline" / "slurm" / "cluster.sh"
CALIBRATION_STUDY = REPO / "tests" / "pipeline" / "slurm" / "calibration.yaml"
# As every Snakemake run of the tests: a hung run (status polling gone wrong) fails instead of blocking CI.
RUN_TIMEOUT = 600
EXAMPLES = REPO / "examples" / "solutions"
# A small class graded within the same runs (one SLURM job per learner, beside the experiments' jobs): a correct
# file, and the attack that meets the job's own memory limit: three forked children of 400 MB, which the grade's
# cgroup (1024 MiB for all the learner's processes) must stop before SLURM kills the job. (Mistakes are named by
# the same grade job anywhere: tests/pipeline/test_class.py.)
CLASS = {
    "correct": (EXAMPLES / "correct.py").read_text(),
    "forks": (EXAMPLES / "correct.py").read_text()
    + "\n\ndef exercise_3(seed=42, d_k=256, T=8):\n    import os, time\n    for _ in range(3):\n"
    "        if os.fork() == 0:\n            a = np.ones(400 * 2**20 // 8)\n            time.sleep(2)\n"
    "            os._exit(0)\n    for _ in range(3):\n        os.wait()\n",
}
# One seed: the same inputs locally and on the cluster; 1024 MiB: the forks learner (1.2 GB) runs out of it.
CLASS_CONFIG = ("grading_seed=1234", "grading_n_samples=2000", "grading_memory_mib=1024")


def _missing_requirements() -> str | None:
    """Why this machine cannot run the cluster, or None."""
    missing = [p for p in ("slurmctld", "slurmd", "sbatch", "munged", "mungekey") if not shutil.which(p)]
    if missing:
        return f"SLURM or munge not installed ({', '.join(missing)} not found; apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "starting slurmd needs root"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return 'the slurm executor plugin is not installed (pip install -e ".[slurm]")'
    return None


@pytest.fixture(scope="module")
def cluster(request) -> dict[str, str]:
    """A running one-node cluster; the environment to reach it."""
    reason = _missing_requirements()
    if reason:
        pytest.skip(reason)
    # Under /tmp, not pytest's 0700 tmp folder: munged runs as the munge user and must reach its socket.
    directory = Path(tempfile.mkdtemp(prefix="sdpa-slurm-"))

    def stop():
        subprocess.run(["bash", str(CLUSTER_SH), "stop", str(directory)], check=False)
        shutil.rmtree(directory, ignore_errors=True)

    request.addfinalizer(stop)  # registered first: stops whatever start left running, whatever fails
    started = subprocess.run(["bash", str(CLUSTER_SH), "start", str(directory)], check=False,
                             capture_output=True, text=True)
    assert started.returncode == 0, started.stderr[-3000:]
    return {**os.environ, "SLURM_CONF": str(directory / "slurm.conf")}


def snakemake(work: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_snakemake(work, *args, cores=None, env=env, timeout=RUN_TIMEOUT)


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def runs(cluster, request, tmp_path_factory) -> dict:
    """The tiny config run on the cluster, its default target and the calibration target (a tiny study) in one
    Snakemake run, against the session's local run of it (tiny_run); with a small class (CLASS) graded in both
    where the sandbox starts here (the cluster's node is this machine)."""
    base = tmp_path_factory.mktemp("slurm")
    remote = make_workdir(base / "cluster", TINY_CONFIG)
    (remote / "config" / "calibration").mkdir()
    shutil.copy(CALIBRATION_STUDY, remote / "config" / "calibration" / "tiny.yaml")
    grading: tuple[str, ...] = ()
    if sandbox.unavailable() is None:
        (base / "class").mkdir()
        for learner, code in CLASS.items():
            (base / "class" / f"{learner}.py").write_text(code)
        grading = ("--config", f"submissions={base / 'class'}", *CLASS_CONFIG)
    # The local side (the tiny run, made here if no other test has made it yet, and the class graded in a copy of
    # it) beside the cluster run, which mostly waits for SLURM's status checks.
    on_cluster = subprocess.Popen([*SNAKEMAKE, "all", "calibration", "--profile", "profiles/slurm", *grading],
                                  cwd=remote, env=cluster, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        local = copy_of(request.getfixturevalue("tiny_run"), base / "local")
        if grading:
            done = snakemake(local, "--cores", "2", *grading)
            assert done.returncode == 0, done.stderr[-3000:]
        _, submitted = on_cluster.communicate(timeout=RUN_TIMEOUT)
    finally:
        if on_cluster.poll() is None:
            on_cluster.kill()  # a failed local side or a hung cluster run: no Snakemake left behind
            on_cluster.wait()
    assert on_cluster.returncode == 0, submitted[-5000:]
    assert "submitted with SLURM jobid" in submitted  # the jobs did go through SLURM
    return {"local": local, "cluster": remote, "submitted": submitted, "class": bool(grading)}


def test_every_csv_is_byte_identical_to_a_local_run(runs):
    local = {k: v for k, v in digests(runs["local"] / "results").items() if k.endswith(".csv")}
    remote = {k: v for k, v in digests(runs["cluster"] / "results").items()
              if k.endswith(".csv") and not k.startswith("calibration/")}  # the study: the test below
    assert len(local) >= 12 and "claims.csv" in local
    assert remote == local
    assert (runs["cluster"] / "reports" / "report.html").stat().st_size > 0


def test_a_class_is_graded_one_slurm_job_per_learner_into_the_local_gradebook(runs):
    if not runs["class"]:
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    work, gradebook = runs["cluster"], "results/class/gradebook.csv"
    assert (work / gradebook).read_bytes() == (runs["local"] / gradebook).read_bytes()
    # One SLURM job per learner (the plugin names each job's log after its rule and learner).
    for learner in CLASS:
        submitted = re.findall(rf"submitted with SLURM jobid (\d+) \(log: \S+/rule_grade_submission/{learner}/",
                               runs["submitted"])
        assert len(submitted) == 1, learner
        # ... and graded in that job's step, sandboxed, its memory read from the grade's own cgroup.
        log = (work / "logs" / "grade_submission" / f"{learner}.log").read_text()
        assert re.search(rf"{learner}: grading on \S+, SLURM job {submitted[0]} step \d+, grade cgroups under ", log)
        record = json.loads((work / "results" / "class" / "grades" / f"{learner}.json").read_text())
        assert record["isolation"] == "bubblewrap sandbox" and 0 < record["peak_mib"] <= record["memory_mib"]
    rows = list(csv.DictReader(io.StringIO((work / gradebook).read_text())))
    totals = {r["learner"]: r for r in rows if r["part"] == "total"}
    verdicts = {(r["learner"], r["part"]): r["verdict"] for r in rows if r["item"] == "verdict"}
    assert totals["correct"]["verdict"] == "5 of 5 pass" and totals["correct"]["seed"] == "1234"
    # The learner's cgroup stopped the forks inside the job; SLURM's limit for the job (mem_mb) was not reached.
    assert totals["forks"]["verdict"] == "4 of 5 pass" and verdicts["forks", "exercise_3"] == "runs out of memory"
    assert sorted(p.name for p in (work / "reports" / "class").iterdir()) == sorted(f"{k}.html" for k in CLASS)


def test_calibration_target_runs_on_the_cluster(runs):
    work = runs["cluster"]
    for rule in ("calibration_sweeps", "calibration_expectations", "calibration_batch"):
        assert re.search(rf"submitted with SLURM jobid \d+ \(log: \S+/rule_{rule}/", runs["submitted"]), rule
    batches = sorted((work / "results" / "calibration" / "batches" / "tiny").glob("*/batch*.csv"))
    assert len(batches) == 1 and batches[0].stat().st_size > 0  # the correct arm's one batch (tiny.yaml)
    assert (work / "reports" / "calibration.html").is_file()


def test_out_of_memory_names_the_rule_and_a_rerun_with_more_fixes_it(runs, cluster):
    work, target = runs["cluster"], "results/forward_shape.csv"
    others = {p: (h, (work / "results" / p).stat().st_mtime_ns)
              for p, h in digests(work / "results").items() if p != "forward_shape.csv"}

    # 20 MB: less than the job's own Snakemake needs; the cluster kills the job within a second.
    failed = snakemake(work, target, "--forcerun", "forward_shape", "--profile", "profiles/slurm",
                       "--set-resources", "forward_shape:mem_mb=20", env=cluster)
    assert failed.returncode != 0
    # The workflow's onerror hook (sdpa_lab.workflow_support.cluster) names the rule and its limit.
    said = re.search(r"^rule forward_shape ran out of memory \(mem_mb=20\); "
                     r"rerun with --set-resources (forward_shape:mem_mb=\d+)$", failed.stderr, re.MULTILINE)
    assert said, failed.stderr[-3000:]
    suggested = said[1]

    rerun = snakemake(work, target, "--profile", "profiles/slurm", "--set-resources", suggested, env=cluster)
    assert rerun.returncode == 0, rerun.stderr[-5000:]
    assert (work / target).read_bytes() == (runs["local"] / target).read_bytes()
    after = {p: (h, (work / "results" / p).stat().st_mtime_ns)
             for p, h in digests(work / "results").items() if p != "forward_shape.csv"}
    assert after == others  # no other result rewritten or touched
