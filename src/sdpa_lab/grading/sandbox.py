"""Where a learner's code runs: a bubblewrap sandbox in a memory cgroup of its own.

What the learner's process sees and may do (`Sandbox.command`):

- the Python runtime (its standard library, without site-packages) and the course's modules
  (NumPy, matplotlib, ...: sdpa_lab.grading.modules, with what they require), read-only;
  the system's shared libraries (/lib, /usr/lib); the grader's harness (child.py);
- nothing of the project (neither `sdpa_lab` nor the examples), no /etc (no passwd), no /sys;
- a private scratch folder, /scratch, a tmpfs capped at SCRATCH_MIB: it bounds the bytes
  the learner can write, printing included (their output goes to a file there); and a
  /dev/shm capped at SHM_MIB (multiprocessing's semaphores); everything else is read-only,
  the tmpfs bwrap makes for /, /dev and the hidden site-packages included;
- no network (its own empty network namespace), its own PID namespace whose init is the
  harness itself (`--as-pid-1`: no bwrap init holding the grader's pipes, which the learner
  could open through /proc/1/fd): when the grade ends or the grader dies, it dies and the
  kernel kills every process in the namespace, a `setsid()` one too (`--die-with-parent`);
- a minimal environment (`--clearenv`; bwrap itself starts with the same few variables, so
  that not even /proc/1/environ holds the grader's);
- an unprivileged user (uid 65534 in its own user namespace) with no capabilities, so it
  can mount nothing and cannot leave its cgroup;
- a seccomp filter (sdpa_lab.grading.seccomp) refusing the calls that reach kernel state no
  namespace isolates: the keyrings first, which would carry a key from one grade to the next;
- one memory limit for all its processes together: a cgroup (v1 memory controller, or a
  v2 leaf with memory.max) created per grade; bwrap joins it before it starts, so every
  process the learner forks is charged to it, tmpfs pages included; when the sum passes
  the limit the kernel's OOM killer stops a process of the grade, and no other.

RLIMIT_AS (set by the harness too) caps each process alone: it turns one large allocation
into a MemoryError the learner can read, but it cannot bound three forked processes of
3 GB; the cgroup does. `unavailable()` says, in one line, why a sandbox cannot start here.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

import sdpa_lab.grading.child as child
from sdpa_lab.grading.modules import COURSE_MODULES, site_entries
from sdpa_lab.grading.seccomp import program_fd

HARNESS = Path(__file__).with_name("child.py")
SCRATCH = "/scratch"
SCRATCH_MIB = child.SCRATCH_MIB  # bytes the learner may write, printing included
SHM_MIB = 8  # bytes the learner may write to /dev/shm (the only other writable place)
SITE = "/opt/site"  # where the course's modules are mounted
HARNESS_IN = "/opt/harness/child.py"
PIDS_MAX = 64  # processes and threads per grade (a fork bomb stops there)
ENV = {"PATH": "/usr/bin:/bin", "HOME": SCRATCH, "TMPDIR": SCRATCH, "LANG": "C.UTF-8",
       "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
       "PYTHONDONTWRITEBYTECODE": "1",  # one BLAS thread: the learner shares the machine
       "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{SCRATCH}/.matplotlib"}  # plots drawn off-screen, then discarded
_serial = itertools.count()


def python_runtime() -> tuple[Path, Path]:
    """(the interpreter, its installation prefix): the base Python, not a virtual environment."""
    prefix = Path(sys.base_prefix).resolve()
    exe = Path(sys.executable).resolve()
    if not exe.is_relative_to(prefix):  # a venv's python is a link into the base installation
        exe = prefix / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    return exe, prefix


class Cgroup:
    """A memory cgroup of one grade: limit, membership (`join`, for a child before exec), peak and OOM count."""

    def __init__(self, path: Path, version: int):
        self.path, self.version = path, version

    @classmethod
    def create(cls, limit_bytes: int) -> Cgroup:
        """A new cgroup under this process's own, limited to `limit_bytes` (OSError where the machine refuses)."""
        name = f"sdpa-lab-grade-{os.getpid()}-{next(_serial)}"
        own = own_cgroups()
        if "memory" in own:  # cgroup v1: the memory hierarchy
            path = Path("/sys/fs/cgroup/memory") / own["memory"].lstrip("/") / name
            _make_cgroup(path)
            group = cls(path, 1)
            group._write("memory.limit_in_bytes", limit_bytes)
            with contextlib.suppress(OSError):  # present only with swap accounting: swap counts too
                group._write("memory.memsw.limit_in_bytes", limit_bytes)
            group.pids = group.cpu = None
            pids = Path("/sys/fs/cgroup/pids") / own.get("pids", "/").lstrip("/") / name
            with contextlib.suppress(OSError):  # a cap on processes where the pids controller is mounted
                pids.mkdir()
                (pids / "pids.max").write_text(str(PIDS_MAX))
                group.pids = pids
            cpu = Path("/sys/fs/cgroup/cpuacct") / own.get("cpuacct", "/").lstrip("/") / name
            with contextlib.suppress(OSError):  # the CPU its processes use, for the benchmarks
                cpu.mkdir()
                group.cpu = cpu
            return group
        parent = _cgroup2_root() / own.get("", "/").lstrip("/")
        path = parent / name
        _make_cgroup(path)
        group = cls(path, 2)
        group.pids = group.cpu = None
        if not (path / "memory.max").exists():  # the parent does not hand the memory controller to its children
            _remove_cgroup(path)
            raise OSError(errno.EACCES, f"cgroup v2: {parent}/cgroup.subtree_control does not enable memory for the "
                                        "cgroups under it (a cgroup delegated with memory is needed)")
        group._write("memory.max", limit_bytes)
        with contextlib.suppress(OSError):  # present only with swap accounting: no swap for the grade then
            group._write("memory.swap.max", 0)
        with contextlib.suppress(OSError):  # present where the pids controller is enabled too
            group._write("pids.max", PIDS_MAX)
        return group

    def _write(self, name: str, value) -> None:
        """Write to one of the cgroup's interface files, which the kernel made with the cgroup (never created
        here: a missing file is an OSError, as a controller that is not enabled)."""
        fd = os.open(self.path / name, os.O_WRONLY | os.O_TRUNC)  # as a shell's `>` (no O_CREAT)
        try:
            os.write(fd, str(value).encode())
        finally:
            os.close(fd)

    def _read(self, name: str) -> str:
        return (self.path / name).read_text()

    def join(self) -> None:
        """Move the calling process into the cgroup (run in the child between fork and exec)."""
        self._write("cgroup.procs", os.getpid())
        for extra in (self.pids, self.cpu):
            if extra is not None:
                Cgroup(extra, 1)._write("cgroup.procs", os.getpid())

    def processes(self) -> list[int]:
        try:
            return [int(p) for p in self._read("cgroup.procs").split()]
        except OSError:
            return []

    def shmem_bytes(self) -> int:
        """What its tmpfs (the scratch folder, /dev/shm) hold now: memory.stat's shmem, 0 if unknown."""
        with contextlib.suppress(OSError, ValueError):
            for line in self._read("memory.stat").splitlines():
                key, _, value = line.partition(" ")
                if key == "shmem":
                    return int(value)
        return 0

    def peak_bytes(self) -> int:
        """The most memory its processes used together (memory.max_usage_in_bytes, or memory.peak), 0 if unknown."""
        with contextlib.suppress(OSError, ValueError):
            return int(self._read("memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"))
        return 0

    def cpu_seconds(self) -> float:
        """The CPU time its processes used together (cpuacct.usage, or cpu.stat's usage_usec), 0 if unknown."""
        with contextlib.suppress(OSError, ValueError):
            if self.version == 1:
                return int((self.cpu / "cpuacct.usage").read_text()) / 1e9 if self.cpu is not None else 0.0
            for line in self._read("cpu.stat").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        return 0.0

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for memory."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        with contextlib.suppress(OSError, ValueError):
            for line in self._read(name).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def kill_all(self) -> None:
        """SIGKILL every process still in the cgroup and wait (at most a few seconds) until it is empty."""
        deadline = time.monotonic() + 5
        while (pids := self.processes()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for path in (self.path, self.pids, self.cpu):
            if path is not None:
                with contextlib.suppress(OSError):
                    _remove_cgroup(path)


def _make_cgroup(path: Path) -> None:
    """mkdir in a cgroup file system: the kernel makes the new cgroup's interface files."""
    path.mkdir()


def _remove_cgroup(path: Path) -> None:
    """rmdir in a cgroup file system (refused while a process is in it)."""
    path.rmdir()


def own_cgroups(proc_cgroup: Path = Path("/proc/self/cgroup")) -> dict[str, str]:
    """{controller: this process's cgroup path}, from /proc/self/cgroup ("" for the v2 unified hierarchy)."""
    out = {}
    for line in proc_cgroup.read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(","):
            out[c] = path
    return out


def _cgroup2_root(mounts: Path = Path("/proc/self/mounts")) -> Path:
    """Where the cgroup v2 hierarchy is mounted, if the memory controller is in it (else OSError)."""
    for line in mounts.read_text().splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[2] == "cgroup2":
            root = Path(fields[1])
            if "memory" in (root / "cgroup.controllers").read_text().split():
                return root
    raise OSError("no memory cgroup: neither cgroup v1's memory controller nor a cgroup v2 with memory")


def read_only_but_scratch(stdlib: Path) -> list[str]:
    """bwrap options, last on its command line, that leave the learner two writable places, each capped: /scratch and
    a small /dev/shm (POSIX semaphores and shared memory: multiprocessing's locks); the root, /dev and the hidden
    site-packages, tmpfs that bwrap makes writable and unbounded, are remounted read-only (their device files
    /dev/null, /dev/zero ... stay writable: writing to them stores nothing)."""
    hidden = ["--remount-ro", str(stdlib / "site-packages")] if (stdlib / "site-packages").is_dir() else []
    return ["--size", str(SHM_MIB * 2**20), "--tmpfs", "/dev/shm", "--remount-ro", "/dev", *hidden,
            "--remount-ro", "/"]


class Sandbox:
    """One grade's sandbox: the bwrap command line for the learner's process, and the cgroup all its processes share."""

    def __init__(self, memory_mib: int, modules: tuple[str, ...] = COURSE_MODULES):
        self.memory_mib = int(memory_mib)
        self.most_written = 0  # the most bytes its tmpfs held at the end of a load or call (`count_written`)
        self.site = site_entries(tuple(modules))  # before the cgroup: a bad list leaves nothing behind
        self.cgroup = Cgroup.create(self.memory_mib * 2**20)

    def command(self, harness_args: list[str], helpers: Path | None = None, seccomp_fd: int | None = None,
                harness_fd: int | None = None) -> list[str]:
        """bwrap ... python -I -S /opt/harness/child.py ARGS: the learner's process, sandboxed (with the seccomp
        filter read from `seccomp_fd`, sdpa_lab.grading.seccomp; the harness copied from `harness_fd`, else
        mounted from the project)."""
        exe, prefix = python_runtime()
        stdlib = prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
        # An unprivileged user without capabilities: bwrap run as root keeps root's otherwise, and
        # CAP_SYS_ADMIN could mount a cgroup file system and leave the memory limit.
        cmd = ["bwrap", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL",
               "--die-with-parent", "--new-session", "--clearenv", "--as-pid-1", "--proc", "/proc", "--dev", "/dev"]
        cmd += bwrap_options("--disable-userns")  # no nested user namespace: its capabilities reach more of the kernel
        if seccomp_fd is not None:
            cmd += ["--seccomp", str(seccomp_fd)]
        for path in ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/bin", "/usr/bin"):
            if os.path.exists(path):
                cmd += ["--ro-bind", path, path]
        cmd += ["--ro-bind", str(prefix), str(prefix)]
        if (stdlib / "site-packages").is_dir():  # the runtime's own installed packages: hidden
            cmd += ["--tmpfs", str(stdlib / "site-packages")]
        cmd += ["--dir", SITE]
        for entry in self.site:  # exactly the course's distributions, file by file and folder by folder
            cmd += ["--ro-bind", str(entry), f"{SITE}/{entry.name}"]
        if harness_fd is not None:  # a copy: a bind mount would show the project's path in /proc/self/mountinfo
            cmd += ["--ro-bind-data", str(harness_fd), HARNESS_IN]
        else:
            cmd += ["--ro-bind", str(HARNESS), HARNESS_IN]
        if helpers is not None:  # self-grading: the learner's own folder, read-only, for their helper modules
            cmd += ["--ro-bind", str(helpers), "/opt/learner"]
        cmd += ["--size", str(SCRATCH_MIB * 2**20), "--tmpfs", SCRATCH, "--chdir", SCRATCH]
        cmd += read_only_but_scratch(stdlib)
        for key, value in ENV.items():
            cmd += ["--setenv", key, value]
        return [*cmd, "--", str(exe), "-I", "-S", HARNESS_IN, SITE, *harness_args]

    def popen(self, harness_args: list[str], helpers: Path | None = None) -> subprocess.Popen:
        """Start the learner's process in the sandbox, its stdin and stdout the grader's pipes."""
        fds = (program_fd(), data_fd(HARNESS.read_bytes()))
        try:
            return subprocess.Popen(self.command(harness_args, helpers, *fds), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(ENV),
                                    preexec_fn=self.cgroup.join, start_new_session=True, pass_fds=fds)
        finally:
            for fd in fds:
                os.close(fd)

    def count_written(self) -> None:
        """Note what the learner's writable places hold now (called at the end of each load and call, while its
        process lives): the bytes it wrote and kept, counted, within SCRATCH_MIB + SHM_MIB."""
        self.most_written = max(self.most_written, self.cgroup.shmem_bytes())

    def close(self) -> None:
        self.cgroup.remove()


@cache
def bwrap_options(*wanted: str) -> list[str]:
    """Those of `wanted` this machine's bwrap knows (--disable-userns came with bubblewrap 0.8.0)."""
    try:
        known = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [option for option in wanted if option in known.split()]


def data_fd(data: bytes) -> int:
    """A new file descriptor (a memfd, inheritable) from which `data` is read from its start."""
    fd = os.memfd_create("sdpa-lab-data", 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@cache
def unavailable() -> str | None:
    """None where a sandbox starts on this machine, else one line saying why not."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    try:
        box = Sandbox(64)
    except OSError as exc:
        return f"no memory cgroup can be created here ({exc.strerror or exc}): run as root, or with a delegated cgroup"
    try:
        fd = program_fd()
    except (OSError, RuntimeError) as exc:
        box.close()
        return f"no seccomp filter can be built here ({exc}): apt-get install libseccomp2"
    try:
        cmd = box.command([], seccomp_fd=fd)
        probe = [*cmd[:cmd.index("--") + 1], python_runtime()[0].as_posix(), "-I", "-S", "-c", "pass"]
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, env=dict(ENV),
                              preexec_fn=box.cgroup.join, timeout=60, pass_fds=(fd,))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot start: {exc}"
    finally:
        os.close(fd)
        box.close()
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot start a sandbox here: {last}"
    return None
