"""The `expectations` job reruns only when a setting it reads changes (registry.expectation_settings).

Light: one run of that job alone (the tiny config's finite-d_k expectations, seconds), then dry runs.
"""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from sdpa_lab.claims.registry import expectation_settings, expectation_sweep

from tests.conftest import TINY_CONFIG
from tests.pipeline.conftest import make_workdir, snakemake

TARGET = "results/expectations.csv"


@pytest.fixture(scope="module")
def expectations_run(tmp_path_factory):
    work = make_workdir(tmp_path_factory.mktemp("expectations") / "work", TINY_CONFIG)
    proc = snakemake(work, targets=[TARGET], cores=1)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work


def _jobs_after(work, path: tuple[str, ...], value) -> set[str]:
    """The jobs a dry run of TARGET lists with the config setting at `path` changed to `value` (then put back)."""
    changed = copy.deepcopy(TINY_CONFIG)
    *sections, key = path
    node = changed
    for section in sections:
        node = node[section]
    assert node[key] != value
    node[key] = value
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(changed))
    try:
        dry = snakemake(work, "--dry-run", targets=[TARGET])
    finally:
        (work / "config" / "config.yaml").write_text(yaml.safe_dump(TINY_CONFIG))
    assert dry.returncode == 0, dry.stderr[-2000:]
    return set(re.findall(r"^(?:local)?rule (\w+):", dry.stdout, re.M))


def test_nothing_to_rerun_with_the_config_unchanged(expectations_run):
    dry = snakemake(expectations_run, "--dry-run", targets=[TARGET])
    assert dry.returncode == 0 and not re.findall(r"^(?:local)?rule (\w+):", dry.stdout, re.M), dry.stdout


@pytest.mark.parametrize(("path", "value"), [
    (("learning", "steps"), 21),  # a section the expectations do not read
    (("gradient", "trials"), 201),  # a setting they do not read, of a section they do
    (("seed",), 8),
])
def test_a_setting_the_expectations_do_not_read_does_not_rerun_them(expectations_run, path, value):
    assert path[0] not in expectation_settings() or path[1] not in expectation_settings()[path[0]]
    assert "expectations" not in _jobs_after(expectations_run, path, value)


@pytest.mark.parametrize(("path", "value"), [
    (("entropy_sweep", "T"), 9),
    (("gradient", "d_k"), [4, 128]),
])
def test_a_setting_the_expectations_read_reruns_them(expectations_run, path, value):
    section, key = path
    assert key in expectation_settings()[section]
    assert "expectations" in _jobs_after(expectations_run, path, value)


def test_the_expectations_are_computed_from_the_settings_declared_alone():
    # what the rule's params hold is enough: expectations_asked reading anything else would fail here
    from sdpa_lab.claims.registry import expectations_asked

    assert expectations_asked(expectation_sweep(TINY_CONFIG)) == expectations_asked(TINY_CONFIG)
