"""The GitHub Actions workflows a fork runs: clean under actionlint and zizmor (offline),
running the README's own install, pipeline and test commands, each end-to-end check once, with the
pre-commit hooks at the versions the `dev` extra pins."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"
CI = WORKFLOWS / "ci.yml"
CALIBRATION = WORKFLOWS / "calibration.yml"

# Which hook of which pre-commit repo runs which CI lint command, and which PyPI package it is.
HOOK_COMMANDS = {"ruff-check": "ruff check", "ruff-format": "ruff format --check", "snakefmt": "snakefmt --check"}
HOOK_REPOS = {
    "https://github.com/astral-sh/ruff-pre-commit": "ruff",
    "https://github.com/snakemake/snakefmt": "snakefmt",
}

# A workflow with one mistake of each kind the checkers must catch: a typo'd context
# (actionlint), an action on a movable tag and a checkout that keeps its token (zizmor).
BROKEN_WORKFLOW = """\
name: broken
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.nonexistent_context }}"
"""


def tool(name: str) -> str:
    """The checker installed by the `dev` extra (next to this interpreter), else on PATH; skip without it
    (CI's lint job installs the dev extra and runs both checkers itself)."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed: python -m pip install -e '.[dev]'")
    return found


def workflow_files() -> list[Path]:
    return sorted(WORKFLOWS.glob("*.yml"))


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def triggers(workflow: dict) -> dict:
    # YAML 1.1 reads the bare key `on` as the boolean True.
    return workflow.get("on", workflow.get(True))


def run_lines(job: dict) -> list[str]:
    """Every command a job's `run:` steps execute, one per non-blank line."""
    return [line.strip() for step in job["steps"] if "run" in step
            for line in step["run"].splitlines() if line.strip()]


def readme_quick_start() -> list[str]:
    """The commands of the README's quick start code block, trailing comments removed."""
    text = (REPO / "README.md").read_text()
    match = re.search(r"^#+ *Quick start\b.*?^```[a-z]*\n(.*?)^```", text, re.MULTILINE | re.DOTALL | re.IGNORECASE)
    assert match, "README.md has no code block under a 'Quick start' heading"
    return [re.sub(r"\s+#.*$", "", line).strip() for line in match.group(1).splitlines() if line.strip()]


def extras(install: str) -> set[str]:
    """The extras of `python -m pip install -e ".[a,b]"` (none for `-e .`); fails on any other install line."""
    match = re.fullmatch(r'python -m pip install -e (?:\.|"\.\[([a-z,]+)\]")', install)
    assert match, f"not an editable install of the project: {install!r}"
    return set(match.group(1).split(",")) if match.group(1) else set()


def job_install(job: dict) -> str:
    [install] = [line for line in run_lines(job) if "pip install" in line]
    return install


def readme_command(word: str) -> str:
    lines = [line for line in readme_quick_start() if word in line]
    assert len(lines) == 1, f"expected one README quick-start line with {word!r}, got {lines}"
    return lines[0]


def pinned_versions() -> dict[str, str]:
    """name -> version of every `name==version` requirement in pyproject.toml's `dev` extra."""
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    return dict(re.fullmatch(r"([A-Za-z0-9_.-]+)==([^ ;]+)", req).groups() for req in extra if "==" in req)


def test_both_workflows_exist():
    assert CI in workflow_files() and CALIBRATION in workflow_files()


def test_actionlint_finds_nothing():
    proc = subprocess.run([tool("actionlint"), "-no-color", *map(str, workflow_files())], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


def test_zizmor_finds_nothing_even_pedantic():
    proc = subprocess.run([tool("zizmor"), "--offline", "--persona=pedantic", "--format=json", "--no-progress",
                           *map(str, workflow_files())],
                           cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    findings = json.loads(proc.stdout or "[]")
    assert proc.returncode == 0 and findings == [], [f["ident"] + ": " + f["desc"] for f in findings] or proc.stderr


def test_the_checkers_catch_a_broken_workflow(tmp_path):
    """The two tests above can fail: both tools report this workflow's mistakes."""
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(BROKEN_WORKFLOW)
    lint = subprocess.run([tool("actionlint"), "-no-color", str(broken)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert lint.returncode == 1 and "nonexistent_context" in lint.stdout, lint.stdout + lint.stderr
    audit = subprocess.run([tool("zizmor"), "--offline", "--format=json", "--no-progress", str(broken)],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert {"artipacked", "unpinned-uses"} <= {f["ident"] for f in json.loads(audit.stdout)}, audit.stderr


@pytest.mark.parametrize("path", [CI, CALIBRATION], ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit_with_its_version(path):
    uses = [line.strip() for line in path.read_text().splitlines() if re.match(r"\s*(- )?uses:", line)]
    assert uses
    for line in uses:
        assert re.fullmatch(r"(- )?uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+(\.\d+)*", line), line


@pytest.mark.parametrize("path", [CI, CALIBRATION], ids=lambda p: p.name)
def test_least_privilege_time_limits_and_no_persisted_token(path):
    workflow = load(path)
    assert workflow["permissions"] == {"contents": "read"}
    assert "concurrency" in workflow
    for name, job in workflow["jobs"].items():
        assert "permissions" not in job, f"job {name} widens the permissions"
        assert 0 < job["timeout-minutes"] <= 120, name
        checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
        assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts), name
        setups = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@")]
        assert [s["with"]["python-version"] for s in setups] == ["3.11"], name
        assert setups[0]["with"]["cache"] == "pip", name


def test_triggers():
    assert set(triggers(load(CI))) == {"push", "pull_request"}
    calibration = triggers(load(CALIBRATION))
    assert set(calibration) == {"schedule", "workflow_dispatch"} and calibration["schedule"][0]["cron"]


def test_every_job_installs_the_project_with_the_extras_it_needs():
    """The README's install line is the learner's (no linters); the test job runs it word for word, the lint job
    installs the linters alone, the pipeline jobs the project alone."""
    declared = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    install = readme_command("pip install")
    assert extras(install) == {"test"}
    for path in (CI, CALIBRATION):
        for name, job in load(path)["jobs"].items():
            assert extras(job_install(job)) <= declared, (path.name, name)
    jobs = load(CI)["jobs"]
    assert job_install(jobs["test"]) == install
    assert extras(job_install(jobs["lint"])) == {"dev"}
    assert extras(job_install(jobs["claims"])) == set() == extras(job_install(load(CALIBRATION)["jobs"]["calibration"]))


def test_ci_runs_the_readme_quick_start_each_check_once():
    jobs = load(CI)["jobs"]
    every_run = [line for job in jobs.values() for line in run_lines(job)]
    # The virtual environment is the README's; setup-python gives each job its own interpreter.
    for command in readme_quick_start():
        if "venv" not in command and "activate" not in command and "pytest" not in command:
            assert command in every_run, f"CI does not run the README's {command!r}"
    # Regenerate, then decide: the check's exit code fails the job.
    pipeline = readme_command("snakemake")
    [claims] = [job for job in jobs.values() if "sdpa-lab check" in run_lines(job)]
    lines = run_lines(claims)
    assert lines.index(pipeline) < lines.index("sdpa-lab check")
    # The test job runs the README's test command but for the default run, which the claims job just made.
    test_command = readme_command("pytest")
    assert f'{test_command} -m "not default_run"' in run_lines(jobs["test"])
    markers = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("default_run:") for m in markers)


def test_ci_runs_the_linters_the_project_pins():
    lint = set(run_lines(load(CI)["jobs"]["lint"]))
    assert {"ruff check", "snakemake --lint"} <= lint
    for command in ("snakefmt --check", "actionlint", "zizmor --offline"):
        assert any(line.startswith(command) for line in lint), command


@pytest.mark.parametrize(("path", "must_keep"), [(CI, ["reports/report.html", "results/"]),
                                                 (CALIBRATION, ["reports/calibration.html"])],
                         ids=["ci.yml", "calibration.yml"])
def test_reports_are_uploaded_even_when_a_step_failed(path, must_keep):
    steps = [step for job in load(path)["jobs"].values() for step in job["steps"]]
    uploads = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert len(uploads) == 1 and uploads[0]["with"]["name"]
    assert uploads[0]["if"].replace(" ", "") in ("${{!cancelled()}}", "${{always()}}", "!cancelled()", "always()")
    assert set(must_keep) <= set(uploads[0]["with"]["path"].split())
    assert steps.index(uploads[0]) == len(steps) - 1  # after the steps that may fail


def test_calibration_workflow_runs_the_calibration_target():
    [job] = load(CALIBRATION)["jobs"].values()
    assert "snakemake --cores 4 calibration" in run_lines(job)


def test_pre_commit_hooks_match_the_pins_and_ci():
    config = load(REPO / ".pre-commit-config.yaml")
    pins = pinned_versions()
    hooks = set()
    for repo in config["repos"]:
        package = HOOK_REPOS[repo["repo"]]
        assert repo["rev"] == f"v{pins[package]}", (
            f"{repo['repo']} at {repo['rev']}, dev extra pins {package}=={pins[package]}")
        hooks |= {hook["id"] for hook in repo["hooks"]}
    assert set(HOOK_REPOS.values()) <= pins.keys()
    # Each hook runs a lint command CI runs, and each of CI's lint commands has its hook.
    ci_lines = {line for job in load(CI)["jobs"].values() for line in run_lines(job)}
    ci_lint = {hook for hook, command in HOOK_COMMANDS.items() if any(line.startswith(command) for line in ci_lines)}
    assert hooks == ci_lint
