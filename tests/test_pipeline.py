"""End to end: Snakemake runs the workflow on a tiny config in a temporary folder."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sdpa_lab.experiments.registry import EXPERIMENTS, output_paths, settings_of, trial_scores_files
from sdpa_lab.pipeline import run_job

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def make_workdir(repo: Path, tmp: Path, config: dict) -> Path:
    """A copy of the workflow (not of results) with `config` as config/config.yaml."""
    work = tmp / "work"
    work.mkdir()
    shutil.copy(repo / "Snakefile", work / "Snakefile")
    shutil.copytree(repo / "workflow", work / "workflow", ignore=shutil.ignore_patterns("__pycache__"))
    (work / "config").mkdir()
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return work


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*SNAKEMAKE, "--cores", "2", *args], cwd=work, capture_output=True, text=True)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.pipeline
def test_snakemake_builds_every_csv(repo, tmp_path, tiny_config):
    work = make_workdir(repo, tmp_path, tiny_config)
    proc = snakemake(work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in EXPERIMENTS:
        for rel in output_paths(name).values():
            table = pd.read_csv(work / rel)
            assert len(table) > 0, rel
    variance = pd.read_csv(work / "results/variance.csv")
    assert sorted(variance.d_k.unique()) == [4, 64]
    assert (variance.n_pairs == 2000).all()
    lesson = pd.read_csv(work / "results/lesson_variance.csv").set_index(["d_k", "quantity"])["value"]
    assert round(lesson[256, "raw_variance"], 3) == 256.391  # the lesson's number, whatever the config
    for rule in ("variance", "lesson_forward"):
        assert (work / "logs" / f"{rule}.log").exists()
        assert (work / "logs" / "benchmarks" / f"{rule}.tsv").exists()
    # Byte-identical CSVs across --cores, folders, touched inputs and interruptions: tests/pipeline/test_robustness.py.


@pytest.mark.pipeline
def test_bad_config_stops_before_any_job(repo, tmp_path, tiny_config):
    tiny_config["variance"]["d_k"] = [4, "wide"]
    work = make_workdir(repo, tmp_path, tiny_config)
    proc = snakemake(work)
    assert proc.returncode != 0
    assert "variance.d_k[1]" in proc.stderr
    assert not (work / "results").exists()


def test_run_job_writes_named_outputs(tmp_path, tiny_config):
    outputs = {"table": str(tmp_path / "r" / "fwd.csv")}
    run_job("forward_shape", settings_of(tiny_config, "forward_shape"), outputs, str(tmp_path / "logs" / "fwd.log"))
    assert len(pd.read_csv(outputs["table"])) > 0
    assert "wrote" in (tmp_path / "logs" / "fwd.log").read_text()


def test_run_job_rejects_unknown_experiment():
    with pytest.raises(ValueError, match="unknown experiment 'nope'"):
        run_job("nope", {}, {})


def test_run_job_refuses_bad_settings_before_writing(tmp_path, tiny_config):
    settings = settings_of(tiny_config, "forward_shape") | {"shapes": [[2, "eight", 16]]}
    outputs = {"table": str(tmp_path / "fwd.csv")}
    with pytest.raises(ValueError, match=r"shapes\[0\]\[1\]"):
        run_job("forward_shape", settings, outputs)
    assert not Path(outputs["table"]).exists()


def test_run_job_refuses_outputs_other_than_the_experiments_tables(tmp_path, tiny_config):
    with pytest.raises(ValueError, match="makes tables"):
        run_job("forward_shape", settings_of(tiny_config, "forward_shape"), {"other": str(tmp_path / "x.csv")})
    assert not (tmp_path / "x.csv").exists()


def test_the_workflow_imports_neither_numpy_pandas_nor_matplotlib_at_parse_time(repo):
    """Every snakemake call, a no-op too, parses the Snakefile: what it imports from sdpa_lab must stay light."""
    sources = [repo / "Snakefile", *sorted((repo / "workflow" / "rules").glob("*.smk"))]
    modules = sorted({m for src in sources
                      for m in re.findall(r"^\s*(?:from|import)\s+(sdpa_lab[\w.]*)", src.read_text(), re.M)})
    assert "sdpa_lab.experiments.registry" in modules and "sdpa_lab.report.specs" in modules, modules
    code = f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n" \
           "print(sorted(m for m in ('numpy', 'pandas', 'matplotlib') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]", (modules, proc.stdout)


def test_experiment_jobs_never_import_pandas_nor_jsonschema(tmp_path, tiny_config):
    """An experiment job writes rows, from settings the workflow checked when it parsed: it needs neither."""
    code = (
        "import sys, yaml\n"
        "from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of\n"
        "from sdpa_lab.pipeline import run_job\n"
        f"config = yaml.safe_load({yaml.safe_dump(tiny_config)!r})\n"
        "for name, e in EXPERIMENTS.items():\n"
        f"    run_job(name, settings_of(config, name), {{k: {str(tmp_path)!r} + '/' + k + name for k in e.outputs}})\n"
        "print(sorted(m for m in ('pandas', 'jsonschema') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
    assert len(list(tmp_path.iterdir())) == sum(len(e.outputs) for e in EXPERIMENTS.values())


def test_run_job_reads_the_trial_score_files_it_is_given(tmp_path, tiny_config):
    """The workflow hands the shared trial scores over as inputs: run_job reads them instead of drawing."""
    from sdpa_lab.experiments.trial_scores import write_trial_scores

    settings = settings_of(tiny_config, "entropy_sweep")
    files = {d_k: str(tmp_path / p) for d_k, p in trial_scores_files("entropy_sweep", settings).items()}
    for d_k, path in files.items():
        write_trial_scores(settings["seed"], d_k, settings["T"], settings["trials"], path)
    keys = EXPERIMENTS["entropy_sweep"].outputs
    outputs = {k: str(tmp_path / ("read_" + k + ".csv")) for k in keys}
    run_job("entropy_sweep", settings, outputs, trial_scores=files)
    drawn = {k: str(tmp_path / ("drawn_" + k + ".csv")) for k in keys}
    run_job("entropy_sweep", settings, drawn)
    assert Path(outputs["table"]).read_bytes() == Path(drawn["table"]).read_bytes()
    # A file of other trials is read, and refused, not silently redrawn.
    d_k, path = next(iter(files.items()))
    write_trial_scores(settings["seed"], d_k, settings["T"], settings["trials"] - 1, path)
    with pytest.raises(ValueError, match="expected"):
        run_job("entropy_sweep", settings, outputs, trial_scores=files)
