"""Shared fixtures: a tiny, fast configuration, the repository root, and what the test workers make once per session."""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import pickle
import shutil
import subprocess
from collections.abc import Collection
from pathlib import Path

import pytest
import yaml
from filelock import FileLock
from hypothesis import Phase, settings

from sdpa_lab import attention
from sdpa_lab.config import check_config

REPO = Path(__file__).resolve().parents[1]

# A small, fast sweep: what it changes from the schema's defaults (src/sdpa_lab/config.schema.yaml) ...
TINY_CHANGES = {
    "seed": 7,
    "variance": {"d_k": [4, 64], "n_pairs": 2000},
    "entropy_sweep": {"d_k": [4, 64], "trials": 200},
    "ranking_invariance": {"d_k": [4, 2048], "trials": 200},
    "forward_shape": {"shapes": [[1, 6, 16], [2, 3, 5]]},
    "gradient": {"d_k": [4, 256], "trials": 200},
    "learning": {"d_k": [4, 64], "T": 4, "runs": 10, "steps": 20, "learning_rates": [0.1, 1.0]},
}
# ... and every setting of it, as the workflow holds it (an experiment added later runs at its defaults).
TINY_CONFIG = check_config(TINY_CHANGES)


def slurm_controller_answers(timeout: float = 3.0) -> bool:
    """Whether a SLURM controller answers `scontrol ping` within `timeout` seconds (False without scontrol, on a
    timeout, or when the ping reports the controller down)."""
    exe = shutil.which("scontrol")
    if exe is None:
        return False
    try:
        ping = subprocess.run([exe, "ping"], capture_output=True, text=True, timeout=timeout, check=False)
    except (subprocess.TimeoutExpired, OSError):
        return False
    return ping.returncode == 0 and "DOWN" not in ping.stdout


def pytest_xdist_auto_num_workers(config) -> int:
    """How many workers `-n auto` starts: one per CPU this process may use, and one more only when the pipeline
    tests are selected and a SLURM controller answers. The SLURM tests' worker mostly waits while the cluster's
    jobs, which are not its processes, compute; the extra worker keeps the CPUs busy then. Without a controller
    answering, a worker per CPU is fastest (an extra one costs its start and contention)."""
    cpus = len(os.sched_getaffinity(0))
    selected = "not pipeline" not in (config.option.markexpr or "")
    return cpus + 1 if selected and slurm_controller_answers() else cpus


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The order pytest-xdist hands out work (pyproject's --no-loadscope-reorder keeps this one): the SLURM tests
    first, since they mostly wait on their cluster and so overlap best with the other workers' computing; then,
    as pytest-xdist's own reordering would, the groups with more tests before those with fewer, and the single
    tests last, evening out the workers at the end."""
    def group(item) -> str:
        mark = item.get_closest_marker("xdist_group")
        return mark.args[0] if mark else item.nodeid

    sizes = {}
    for item in items:
        sizes[group(item)] = sizes.get(group(item), 0) + 1
    items.sort(key=lambda item: (item.get_closest_marker("slurm") is None, -sizes[group(item)]))  # stable


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def tiny_config() -> dict:
    """A deep copy of a small valid config, safe to mutate."""
    return copy.deepcopy(TINY_CONFIG)


@pytest.fixture
def default_config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


# The folder every test worker of this session shares (pytest-xdist: the parent of each worker's basetemp), set by
# the fixture below; None outside a session (made_once then makes its value in process).
_SHARED: Path | None = None


@pytest.fixture(scope="session", autouse=True)
def _shared_folder(tmp_path_factory):
    """The session's folder shared by its workers, for made_once (pytest-xdist's documented pattern)."""
    global _SHARED
    base = tmp_path_factory.getbasetemp()
    _SHARED = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # a worker's: <basetemp>/popen-gw<n>
    yield
    _SHARED = None


def session_folder() -> Path | None:
    """The folder every test worker of this session shares (None outside a session)."""
    return _SHARED


def made_once(key: tuple, make):
    """make(), computed once per session whatever the number of test workers: the first worker to ask makes it
    and pickles it (exactly: floats included) under a lock in the session's shared folder, the others wait and read
    it. For a value that depends only on `key` and the code as shipped: a test that changes the code makes its own."""
    if _SHARED is None:
        return make()
    path = _SHARED / "made_once" / hashlib.sha256(repr(key).encode()).hexdigest()
    path.parent.mkdir(exist_ok=True)
    with FileLock(f"{path}.lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = make()
        path.write_bytes(pickle.dumps(value))
        return value


# The attention module as shipped, before any test breaks it on purpose (monkeypatch, calibration's arms).
_SHIPPED_ATTENTION = dict(vars(attention))


@functools.cache
def _lesson_rows(name: str) -> dict:
    from sdpa_lab.pipeline import run_experiment

    return made_once(("lesson_rows", name), lambda: run_experiment(name, {}))


def lesson_rows(name: str) -> dict:
    """The rows of lesson replication `name` (an experiment without a config section: the same in every run,
    settings {}), made once per session (by one test worker for all) while the attention is as shipped, else made
    again."""
    from sdpa_lab.pipeline import run_experiment

    if all(getattr(attention, key, None) is value for key, value in _SHIPPED_ATTENTION.items()):
        return _lesson_rows(name)
    return run_experiment(name, {})


def lesson_tables() -> dict:
    """The lesson replications' tables by file name, as sdpa_lab.calibration.runner.fixed_tables makes them for any
    config (their settings are {}); fresh DataFrames of the rows made once per session (lesson_rows)."""
    import pandas as pd

    from sdpa_lab.calibration.runner import fixed_experiments, table_file

    return {table_file(name, key): pd.DataFrame(rows) for name in fixed_experiments()
            for key, rows in lesson_rows(name).items()}


def write_run(root: Path, config: dict, as_shipped: Collection[str] = ()) -> Path:
    """Every experiment's CSVs for `config` under root/results, as the rules write them; returns that folder.
    The lesson replications named in `as_shipped` are those made with the attention as shipped (once per session),
    for a test that breaks the attention where tests/experiments/test_contracts.py shows it does not reach them."""
    from sdpa_lab.experiments.registry import EXPERIMENTS, output_paths, settings_of
    from sdpa_lab.io import write_csv
    from sdpa_lab.pipeline import run_experiment

    config = check_config(config)
    for name in EXPERIMENTS:
        section = EXPERIMENTS[name].section
        if section:
            tables = run_experiment(name, settings_of(config, name))
        else:
            tables = _lesson_rows(name) if name in as_shipped else lesson_rows(name)
        for key, rel in output_paths(name).items():
            write_csv(tables[key], root / rel)
    return root / "results"


# The suite's profile: no deadline. A hypothesis deadline is a time limit on each example, so on a loaded
# machine a correct test fails (one did, at 274 ms against 200 ms); speed is measured in benchmarks/, never
# asserted by a test. `--hypothesis-profile NAME` still selects another profile.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

# `mutmut run` (pyproject.toml [tool.mutmut]) selects this profile: no deadline, as mutated code runs
# slower through mutmut's trampolines; derandomized, so that a mutant's verdict is reproducible; and
# no shrinking, since a failing example is all mutmut needs (shrinking made kills time out).
settings.register_profile("mutmut", deadline=None, derandomize=True,
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))

