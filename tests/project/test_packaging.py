"""pyproject.toml and environment.yml (a developer's environment: the test and dev extras too) declare the same
dependencies; the layout is in place."""

from __future__ import annotations

import re
import tomllib

import pytest
import yaml


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_matches_pyproject(repo):
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    declared = {_name(r) for r in [*project["dependencies"], *extras["test"], *extras["dev"]]}
    env = yaml.safe_load((repo / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)} - {"python", "pip"}
    pip_lines = next(d for d in env["dependencies"] if isinstance(d, dict))["pip"]
    assert "-e ." in pip_lines  # installs the package itself
    # Tools that conda does not carry come from PyPI, in the pip list.
    assert conda | {_name(r) for r in pip_lines if r != "-e ."} == declared


def test_design_card_packages_are_declared(repo):
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    declared = {_name(r) for r in project["dependencies"]}
    assert {"numpy", "pandas", "matplotlib", "snakemake", "jinja2", "pyyaml"} <= declared


def test_the_schema_is_one_file_shipped_with_the_package(repo):
    from sdpa_lab.config import schema_path

    assert schema_path().resolve() == (repo / "src/sdpa_lab/config.schema.yaml").resolve()
    assert not schema_path().is_symlink()
    assert sorted(p.relative_to(repo).as_posix() for p in repo.glob("[!.]*/**/*schema*.yaml")) == [
        "src/sdpa_lab/config.schema.yaml"]


def test_layout(repo):
    for path in ("Snakefile", "workflow/rules", "src/sdpa_lab", "config/config.yaml", "results/README.md",
                 "reports/README.md", "tests", "environment.yml", "pyproject.toml", "README.md", ".ci/run"):
        assert (repo / path).exists(), path


def test_a_learners_install_pulls_no_linter(repo):
    """`pip install -e ".[test]"` (the README's) brings the tests' tools; the linters are the `dev` extra's."""
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    learner = {_name(r) for r in [*project["dependencies"], *project["optional-dependencies"]["test"]]}
    linters = {_name(r) for r in project["optional-dependencies"]["dev"]}
    assert {"ruff", "snakefmt", "zizmor"} <= linters and not learner & linters


@pytest.mark.xdist_group("packaging")
def test_the_xdist_groups_reach_the_scheduler(request):
    """Under pytest-xdist (pyproject's addopts), a test marked xdist_group runs with its group in its node id: the
    scheduler keeps a group on one worker only then (a pytest that xdist cannot rename a node id under would
    spread them silently)."""
    if not getattr(request.config.option, "loadgroup", False):  # set in each worker under --dist loadgroup
        pytest.skip("not run by a pytest-xdist worker under --dist loadgroup")
    assert request.node.nodeid.endswith("@packaging"), request.node.nodeid
