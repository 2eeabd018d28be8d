"""What the Snakemake end-to-end tests share: a copy of the workflow in a temporary folder, Snakemake run in it as
a user would, and one run of the tiny config, built once per session, for the tests that only read what a run
makes. Every test under tests/pipeline/ is marked `pipeline` (the fast lane, `-m "not pipeline"`, leaves them out).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from filelock import FileLock

from tests.conftest import REPO, TINY_CONFIG, session_folder

HERE = Path(__file__).resolve().parent
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.pipeline)


def make_workdir(dest: Path, config: dict | str) -> Path:
    """A copy of the workflow (Snakefile, workflow/, profiles/) in `dest` with `config` as config/config.yaml."""
    dest.mkdir(parents=True)
    shutil.copy(REPO / "Snakefile", dest / "Snakefile")
    shutil.copy(REPO / "environment.yml", dest / "environment.yml")  # every rule's conda:
    for folder in ("workflow", "profiles"):
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "config").mkdir()
    text = config if isinstance(config, str) else yaml.safe_dump(config)
    (dest / "config" / "config.yaml").write_text(text)
    return dest


def snakemake(work: Path, *args: str, cores: int | None = 2, env: dict | None = None,
              targets: list[str] | tuple[str, ...] = (), timeout: float = 600) -> subprocess.CompletedProcess:
    """Run Snakemake in `work` on `targets` (none: the default target), plus `args` (and `--cores`, unless None), as
    the `snakemake` command would, and wait for it. A run over `timeout` seconds is killed (a hung run fails)."""
    argv = [*(["--cores", str(cores)] if cores is not None else []), *targets, *args]
    env = dict(os.environ if env is None else env)
    if env.get("PYTHONPATH") != os.environ.get("PYTHONPATH"):  # read at start-up: a fresh process
        return subprocess.run([*SNAKEMAKE, *argv], cwd=work, capture_output=True, text=True, env=env, timeout=timeout)
    return _server().run(argv, work, env, timeout)


class _Server:
    """This test worker's Snakemake server (snakemake_server.py): one process that imported Snakemake once and
    forks a child per run."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, str(HERE / "snakemake_server.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.folder = Path(tempfile.mkdtemp(prefix="sdpa-snakemake-"))

    def run(self, argv: list[str], work: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
        out, err = self.folder / "stdout", self.folder / "stderr"
        out.write_bytes(b"")
        err.write_bytes(b"")
        request = {"argv": argv, "cwd": str(work), "env": env, "stdout": str(out), "stderr": str(err),
                   "timeout": timeout}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, "the Snakemake server stopped"
        return subprocess.CompletedProcess(["snakemake", *argv], json.loads(answer)["returncode"],
                                           out.read_text(errors="replace"), err.read_text(errors="replace"))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)


@functools.cache
def _server() -> _Server:
    server = _Server()
    atexit.register(server.close)
    return server


def files_under(work: Path, folder: str = "results") -> dict[str, tuple[str, int]]:
    """Every file under work/folder: relative path -> (sha256, mtime in ns)."""
    root = work / folder
    if not root.exists():
        return {}
    return {str(p.relative_to(work)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def digests(work: Path) -> dict[str, str]:
    """sha256 of every file under work/results."""
    return {rel: sha for rel, (sha, _) in files_under(work).items()}


def copy_of(work: Path, dest: Path) -> Path:
    """A copy of a finished workdir (results, logs and Snakemake's metadata), mtimes kept."""
    shutil.copytree(work, dest, symlinks=True)
    return dest


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The tiny config, run by `snakemake --cores 4` to the default target: every CSV, figure and the report.

    Built once per session for every test worker (the first to ask runs it under a lock in the session's shared
    folder, the others wait and read it). Shared: read it, never change it (copy_of it first)."""
    root = session_folder() or tmp_path_factory.getbasetemp()
    work, done = root / "tiny_run" / "work", root / "tiny_run" / "done"
    with FileLock(root / "tiny_run.lock"):
        if not done.is_file():
            shutil.rmtree(work.parent, ignore_errors=True)  # what a worker's failed build left
            make_workdir(work, TINY_CONFIG)
            proc = snakemake(work, cores=4)
            assert proc.returncode == 0, proc.stderr[-3000:]
            done.touch()
    return work
