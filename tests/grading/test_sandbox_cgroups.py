"""The sandbox's memory cgroup on a cgroup v2 machine, against a fake cgroup2 tree in a temporary folder.

The machines this project runs on have cgroup v1's memory controller (bound to the v1
hierarchy, so no cgroup2 mount can have it): the sandbox tests there exercise the v1 path on
the real kernel. These tests check the v2 path's bookkeeping without a kernel: where the grade's
cgroup is made, what it writes (memory.max, memory.swap.max, pids.max, cgroup.procs) and how it
reads memory.peak, memory.events' oom_kill and cpu.stat. `FakeKernel` makes a cgroup's interface
files at mkdir, as the kernel does, only for the controllers its parent's cgroup.subtree_control
enables, and refuses to remove a cgroup that still holds a process. What they cannot show: that
the kernel enforces memory.max on the grade's processes, or kills one past it.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from sdpa_lab.grading import sandbox
from sdpa_lab.grading.sandbox import PIDS_MAX, Cgroup

OWN = "/user.slice/grader.scope"  # the grader's cgroup in the fake tree
# The real parsers of /proc/self/cgroup and /proc/self/mounts, given the fake machine's files instead.
OWN_CGROUPS, CGROUP2_ROOT = sandbox.own_cgroups, sandbox._cgroup2_root


class FakeKernel:
    """A cgroup2 tree in a folder: interface files made at mkdir, processes listed in cgroup.procs."""

    def __init__(self, root: Path, subtree_control: str):
        self.root = root
        own = root / OWN.lstrip("/")
        own.mkdir(parents=True)
        (root / "cgroup.controllers").write_text("cpu io memory pids\n")
        (own / "cgroup.subtree_control").write_text(subtree_control + "\n")

    def mkdir(self, path: Path) -> None:
        path.mkdir()
        enabled = (path.parent / "cgroup.subtree_control").read_text().split()
        files = {"cgroup.procs": "", "cgroup.subtree_control": "", "cpu.stat": "usage_usec 0\nuser_usec 0\n"}
        if "memory" in enabled:
            files.update({"memory.max": "max\n", "memory.swap.max": "max\n", "memory.peak": "0\n",
                          "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"})
        if "pids" in enabled:
            files["pids.max"] = "max\n"
        for name, text in files.items():
            (path / name).write_text(text)

    def rmdir(self, path: Path) -> None:
        if (path / "cgroup.procs").read_text().split():
            raise OSError(errno.EBUSY, "Device or resource busy", str(path))
        shutil.rmtree(path)

    def reap(self, path: Path) -> None:
        """Drop the processes that have ended from cgroup.procs (the kernel does it when they exit)."""
        alive = [pid for pid in (path / "cgroup.procs").read_text().split() if _alive(int(pid))]
        (path / "cgroup.procs").write_text("".join(f"{pid}\n" for pid in alive))


def _alive(pid: int) -> bool:
    """Whether our child `pid` still runs (looked at without reaping it: its parent collects its status)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except ChildProcessError:
        return False


@pytest.fixture
def cgroup2(tmp_path, monkeypatch):
    """A fake cgroup v2 machine: no v1 memory controller, this process in OWN, memory and pids enabled below it."""
    return fake_machine(tmp_path, monkeypatch, "memory pids")


def fake_machine(tmp_path, monkeypatch, subtree_control: str) -> FakeKernel:
    kernel = FakeKernel(tmp_path / "cgroup", subtree_control)
    (tmp_path / "cgroup_of_self").write_text(f"0::{OWN}\n")
    (tmp_path / "mounts").write_text(f"cgroup2 {kernel.root} cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n")
    monkeypatch.setattr(sandbox, "own_cgroups", lambda: OWN_CGROUPS(tmp_path / "cgroup_of_self"))
    monkeypatch.setattr(sandbox, "_cgroup2_root", lambda: CGROUP2_ROOT(tmp_path / "mounts"))
    monkeypatch.setattr(sandbox, "_make_cgroup", kernel.mkdir)
    monkeypatch.setattr(sandbox, "_remove_cgroup", kernel.rmdir)
    return kernel


def test_a_grade_cgroup_is_made_under_the_graders_own_with_its_limits(cgroup2):
    group = Cgroup.create(300 * 2**20)
    assert group.version == 2
    assert group.path.parent == cgroup2.root / OWN.lstrip("/") and group.path.name.startswith("sdpa-lab-grade-")
    assert (group.path / "memory.max").read_text() == str(300 * 2**20)
    assert (group.path / "memory.swap.max").read_text() == "0"  # no swap: the limit is all the memory it gets
    assert (group.path / "pids.max").read_text() == str(PIDS_MAX)
    group.remove()
    assert not group.path.exists()


def test_without_pids_or_swap_accounting_the_memory_limit_still_holds(tmp_path, monkeypatch):
    kernel = fake_machine(tmp_path, monkeypatch, "memory")
    real_mkdir = kernel.mkdir

    def no_swap_accounting(path):
        real_mkdir(path)
        (path / "memory.swap.max").unlink()

    monkeypatch.setattr(sandbox, "_make_cgroup", no_swap_accounting)
    group = Cgroup.create(2**30)
    assert (group.path / "memory.max").read_text() == str(2**30)
    assert not (group.path / "memory.swap.max").exists() and not (group.path / "pids.max").exists()  # none made
    group.remove()


def test_a_parent_that_does_not_enable_memory_is_refused_with_the_reason_and_nothing_left(tmp_path, monkeypatch):
    kernel = fake_machine(tmp_path, monkeypatch, "cpu pids")
    with pytest.raises(OSError) as refused:
        Cgroup.create(2**30)
    assert "cgroup.subtree_control does not enable memory" in refused.value.strerror
    assert "\n" not in refused.value.strerror
    assert [p.name for p in (kernel.root / OWN.lstrip("/")).iterdir()] == ["cgroup.subtree_control"]


def test_no_cgroup2_with_memory_and_no_v1_memory_is_refused(tmp_path, monkeypatch):
    kernel = fake_machine(tmp_path, monkeypatch, "memory")
    (kernel.root / "cgroup.controllers").write_text("cpu io pids\n")  # memory bound to a v1 hierarchy, say
    with pytest.raises(OSError, match="no memory cgroup"):
        Cgroup.create(2**30)


def test_a_process_joins_before_exec_and_is_killed_with_the_grade(cgroup2, monkeypatch):
    group = Cgroup.create(2**30)
    # The sandbox's way: the child writes its own pid into cgroup.procs between fork and exec.
    child = subprocess.Popen(["sleep", "60"], preexec_fn=group.join)
    try:
        assert group.processes() == [child.pid]
        monkeypatch.setattr(sandbox.time, "sleep", lambda _: cgroup2.reap(group.path))
        group.remove()  # SIGKILLs what cgroup.procs lists, waits until it is empty, then removes the cgroup
        assert child.wait(timeout=5) == -signal.SIGKILL
        assert not group.path.exists()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_it_reads_the_peak_the_oom_kills_and_the_cpu_time_from_the_v2_files(cgroup2):
    group = Cgroup.create(2**30)
    assert (group.peak_bytes(), group.oom_kills(), group.cpu_seconds()) == (0, 0, 0.0)
    # What the kernel would write after a grade whose processes reached 700 MiB and one of which was killed.
    (group.path / "memory.peak").write_text(f"{700 * 2**20}\n")
    (group.path / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n")
    (group.path / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    assert group.peak_bytes() == 700 * 2**20
    assert group.oom_kills() == 1
    assert group.cpu_seconds() == 2.5
    (group.path / "memory.peak").unlink()  # kernels before 5.19 have no memory.peak: unknown, not an error
    assert group.peak_bytes() == 0
    group.remove()


def test_the_v2_lines_of_proc_self_cgroup_are_read(tmp_path):
    (tmp_path / "v2").write_text("0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n")
    assert OWN_CGROUPS(tmp_path / "v2") == {"": "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0"}
    (tmp_path / "hybrid").write_text("4:memory:/slurm/uid_0/job_7/step_0\n1:name=systemd:/\n0::/\n")
    assert OWN_CGROUPS(tmp_path / "hybrid") == {"memory": "/slurm/uid_0/job_7/step_0", "name=systemd": "/",
                                                       "": "/"}


def test_unavailable_says_why_in_one_line_on_a_v2_machine_without_memory_delegated(tmp_path, monkeypatch):
    fake_machine(tmp_path, monkeypatch, "pids")
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: f"/usr/bin/{name}")
    why = sandbox.unavailable.__wrapped__()
    assert why.startswith("no memory cgroup can be created here (cgroup v2: ") and "\n" not in why
    assert "does not enable memory" in why
