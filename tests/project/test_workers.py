"""How many workers `-n auto` starts (tests/conftest.py): one per CPU, one more only when a SLURM controller answers."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from tests import conftest

CPUS = len(os.sched_getaffinity(0))


def fake_scontrol(folder, script: str) -> None:
    """A `scontrol` on the PATH that runs `script` (a shell body) instead of asking a controller."""
    exe = folder / "scontrol"
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(0o755)


def workers(markexpr: str = "") -> int:
    return conftest.pytest_xdist_auto_num_workers(SimpleNamespace(option=SimpleNamespace(markexpr=markexpr)))


@pytest.mark.parametrize("script, extra", [
    ("echo 'Slurmctld(primary) at node is UP'; exit 0", 1),
    ("echo 'Slurmctld(primary) at node is DOWN'; exit 1", 0),
    ("echo 'Slurmctld(primary) at node is DOWN'; exit 0", 0),
    ("exec sleep 30", 0),  # a controller that never answers: the ping's timeout
])
def test_one_extra_worker_only_when_a_controller_answers(tmp_path, monkeypatch, script, extra):
    fake_scontrol(tmp_path, script)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(conftest, "slurm_controller_answers",
                        lambda timeout=0.5, real=conftest.slurm_controller_answers: real(timeout))
    assert workers() == CPUS + extra
    assert workers("not pipeline") == CPUS  # the SLURM tests deselected: never an extra worker


def test_sbatch_alone_adds_no_worker(tmp_path, monkeypatch):
    (tmp_path / "sbatch").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # sbatch here, no scontrol
    assert workers() == CPUS
