"""sdpa_lab.pipeline: what an experiment rule runs, without Snakemake; the workflow's imports and code inputs."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of, trial_scores_files
from sdpa_lab.pipeline import run_job

FORWARD, ENTROPY = (EXPERIMENTS[name].module for name in ("forward_shape", "entropy_sweep"))


def test_run_job_writes_named_outputs(tmp_path, tiny_config):
    outputs = {"table": str(tmp_path / "r" / "fwd.csv")}
    run_job("forward_shape", settings_of(tiny_config, "forward_shape"), outputs, str(tmp_path / "logs" / "fwd.log"),
            module=FORWARD)
    assert len(pd.read_csv(outputs["table"])) > 0
    assert "wrote" in (tmp_path / "logs" / "fwd.log").read_text()


def test_run_job_rejects_unknown_experiment():
    with pytest.raises(ValueError, match="unknown experiment 'nope': module sdpa_lab.experiments.forward_shape"):
        run_job("nope", {}, {}, module=FORWARD)
    with pytest.raises(ValueError, match="unknown experiment 'forward_shape': module sdpa_lab.experiments.sizes "
                                         "declares none"):
        run_job("forward_shape", {}, {}, module="sdpa_lab.experiments.sizes")


def test_run_job_refuses_bad_settings_before_writing(tmp_path, tiny_config):
    settings = settings_of(tiny_config, "forward_shape") | {"shapes": [[2, "eight", 16]]}
    outputs = {"table": str(tmp_path / "fwd.csv")}
    with pytest.raises(ValueError, match=r"shapes\[0\]\[1\]"):
        run_job("forward_shape", settings, outputs, module=FORWARD)
    assert not Path(outputs["table"]).exists()


def test_run_job_refuses_outputs_other_than_the_experiments_tables(tmp_path, tiny_config):
    with pytest.raises(ValueError, match="makes tables"):
        run_job("forward_shape", settings_of(tiny_config, "forward_shape"), {"other": str(tmp_path / "x.csv")},
                module=FORWARD)
    assert not (tmp_path / "x.csv").exists()


def test_the_workflow_imports_neither_pandas_nor_matplotlib_at_parse_time(repo):
    """Every snakemake call, a no-op too, parses the Snakefile: what it imports from sdpa_lab stays light but for
    NumPy, which the experiments' registry brings with the experiment modules it gathers."""
    sources = [repo / "Snakefile", *sorted((repo / "workflow" / "rules").glob("*.smk"))]
    modules = sorted({m for src in sources
                      for m in re.findall(r"^\s*(?:from|import)\s+(sdpa_lab[\w.]*)", src.read_text(), re.M)})
    assert "sdpa_lab.experiments.registry" in modules and "sdpa_lab.report.specs" in modules, modules
    code = f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n" \
           "print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]", (modules, proc.stdout)


def test_experiment_jobs_never_import_pandas_nor_jsonschema(tmp_path, tiny_config):
    """An experiment job writes rows, from settings the workflow checked when it parsed: it needs neither."""
    code = (
        "import sys, yaml\n"
        "from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of\n"
        "from sdpa_lab.pipeline import run_job\n"
        "from sdpa_lab.experiments import replication\n"
        "replication.A1_N_SAMPLES = 500  # what the jobs import is checked, not the lesson's sample size\n"
        f"config = yaml.safe_load({yaml.safe_dump(tiny_config)!r})\n"
        "for name, e in EXPERIMENTS.items():\n"
        f"    run_job(name, settings_of(config, name), {{k: {str(tmp_path)!r} + '/' + k + name for k in e.outputs}},\n"
        "            module=e.module)\n"
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
    run_job("entropy_sweep", settings, outputs, trial_scores=files, module=ENTROPY)
    drawn = {k: str(tmp_path / ("drawn_" + k + ".csv")) for k in keys}
    run_job("entropy_sweep", settings, drawn, module=ENTROPY)
    assert Path(outputs["table"]).read_bytes() == Path(drawn["table"]).read_bytes()
    # A file of other trials is read, and refused, not silently redrawn.
    d_k, path = next(iter(files.items()))
    write_trial_scores(settings["seed"], d_k, settings["T"], settings["trials"] - 1, path)
    with pytest.raises(ValueError, match="expected"):
        run_job("entropy_sweep", settings, outputs, trial_scores=files, module=ENTROPY)


@pytest.mark.parametrize("name", ["lesson_forward", "gradient"])
def test_an_experiment_job_imports_its_own_experiment_module_and_no_other(tmp_path, tiny_config, name):
    """The job's code path (workflow/scripts/run_experiment.py: the declaration's module, then run_job) imports
    the module that declares the experiment and no other module that declares experiments, nor the registry."""
    experiment = EXPERIMENTS[name]
    others = sorted({e.module for e in EXPERIMENTS.values()} - {experiment.module})
    settings = settings_of(tiny_config, name)
    outputs = {key: str(tmp_path / f"{key}.csv") for key in experiment.outputs}
    code = (
        "import sys\n"
        "from sdpa_lab.experiments.declaration import declared_in\n"
        "from sdpa_lab.pipeline import run_job\n"
        f"name, module, settings = {name!r}, {experiment.module!r}, {settings!r}\n"
        "files = declared_in(module, name).trial_scores_files(settings)  # the rule's inputs, drawn by their job:\n"
        "if files:\n"
        "    from sdpa_lab.experiments.trial_scores import write_trial_scores\n"
        "    for d_k, path in files.items():\n"
        "        write_trial_scores(settings['seed'], d_k, settings['T'], settings['trials'], path)\n"
        f"run_job(name, settings, {outputs!r}, trial_scores=files, module=module)\n"
        "print(sorted(m for m in sys.modules if m.startswith('sdpa_lab.experiments.')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    imported = set(ast.literal_eval(proc.stdout.strip().splitlines()[-1]))  # printed by the job
    assert experiment.module in imported and "sdpa_lab.experiments.declaration" in imported, imported
    assert not imported & {*others, "sdpa_lab.experiments.registry"}, imported
    assert all(Path(path).is_file() for path in outputs.values())
