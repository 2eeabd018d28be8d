"""What the sandbox keeps of the kernel from the learner: the keyrings (and the other calls the seccomp filter refuses),
and the host's paths in /proc/self/mountinfo.

Each probe is a learner's function run in a real sandbox (bubblewrap, the seccomp filter, a memory cgroup) through the
grader's own LearnerProcess; it reports what it saw in the message of an exception, which the grader relays.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import textwrap
import uuid

import pytest

from sdpa_lab.grading import sandbox
from sdpa_lab.grading.runner import LearnerProcess
from sdpa_lab.grading.seccomp import REFUSED

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox here: {sandbox.unavailable()}")

MEMORY_MIB = 300
KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING = -4, -3
KEYCTL_SEARCH, KEYCTL_UNLINK, KEYCTL_READ = 10, 9, 11


def numbers() -> dict[str, int]:
    """{system call: its number on this machine}, from libseccomp (the numbers differ between architectures)."""
    import pyseccomp

    return {name: pyseccomp.resolve_syscall(pyseccomp.system_arch(), name) for name in REFUSED}


def seen(body: str) -> dict:
    """Run `body` (the body of a learner's exercise_3, which puts what it saw in `seen`) in a sandbox, and return
    `seen` as the grader received it."""
    code = "def exercise_3(seed=42, d_k=256, T=8):\n    import ctypes, json\n    seen = {}\n" + \
        textwrap.indent(textwrap.dedent(body), "    ") + "    raise RuntimeError('SEEN ' + json.dumps(seen))\n"
    outcome = exercise_3_in_a_sandbox(code)
    assert outcome.status == "error", outcome.message
    return json.loads(outcome.message.rsplit("SEEN ", 1)[1].splitlines()[0])


def exercise_3_in_a_sandbox(code: str):
    """The Outcome of calling the `exercise_3` of `code` in a fresh sandbox."""
    box = sandbox.Sandbox(MEMORY_MIB)
    try:
        with LearnerProcess("probe.py", code, 60, MEMORY_MIB, box) as process:
            assert process.start().status == "ready"
            return process.call("exercise_3")
    finally:
        box.close()


def _keyctl():
    libc = ctypes.CDLL(None, use_errno=True)
    nr = numbers()
    return libc, nr


def host_key(description: str) -> int:
    """The serial of the key `description` in the grader's user keyring, or -errno."""
    libc, nr = _keyctl()
    ctypes.set_errno(0)
    serial = libc.syscall(nr["keyctl"], KEYCTL_SEARCH, ctypes.c_long(KEY_SPEC_USER_KEYRING), b"user",
                          description.encode(), 0)
    return serial if serial >= 0 else -ctypes.get_errno()


def test_every_refused_call_fails_with_eperm_in_the_sandbox():
    calls = json.dumps(numbers())
    got = seen(f"""\
        libc = ctypes.CDLL(None, use_errno=True)
        for name, nr in json.loads({calls!r}).items():
            ctypes.set_errno(0)
            seen[name] = [libc.syscall(nr, 0, 0, 0, 0, 0), ctypes.get_errno()]
        """)
    assert got == {name: [-1, errno.EPERM] for name in REFUSED}


def test_a_key_added_by_a_grade_neither_outlives_it_nor_reaches_the_next():
    description = f"sdpa-lab-probe-{uuid.uuid4().hex}"
    nr = json.dumps(numbers())
    got = seen(f"""\
        libc = ctypes.CDLL(None, use_errno=True)
        nr = json.loads({nr!r})
        for keyring in ({KEY_SPEC_USER_KEYRING}, {KEY_SPEC_SESSION_KEYRING}):
            ctypes.set_errno(0)
            serial = libc.syscall(nr["add_key"], b"user", {description.encode()!r}, b"the reference", 13,
                                  ctypes.c_long(keyring))
            seen[str(keyring)] = [serial, ctypes.get_errno()]
        """)
    assert got == {str(KEY_SPEC_USER_KEYRING): [-1, errno.EPERM], str(KEY_SPEC_SESSION_KEYRING): [-1, errno.EPERM]}
    assert host_key(description) == -errno.ENOKEY  # nothing in the grader's keyring after the grade


def test_a_grade_cannot_read_or_find_a_key_of_the_graders_user():
    """A key in the grader user's keyring (one a grade could have planted, were add_key allowed) is out of reach."""
    libc, nr = _keyctl()
    description = f"sdpa-lab-planted-{uuid.uuid4().hex}"
    serial = libc.syscall(nr["add_key"], b"user", description.encode(), b"softmax of the reference", 24,
                          ctypes.c_long(KEY_SPEC_USER_KEYRING))
    if serial < 0:
        pytest.skip(f"this machine refuses keys to the tests too ({os.strerror(ctypes.get_errno())})")
    try:
        assert host_key(description) == serial  # the test's own search finds it: the probe below could too
        got = seen(f"""\
            libc = ctypes.CDLL(None, use_errno=True)
            nr = json.loads({json.dumps(nr)!r})
            ctypes.set_errno(0)
            found = libc.syscall(nr["keyctl"], {KEYCTL_SEARCH}, ctypes.c_long({KEY_SPEC_USER_KEYRING}), b"user",
                                 {description.encode()!r}, 0)
            seen["search"] = [found, ctypes.get_errno()]
            buffer = ctypes.create_string_buffer(64)
            ctypes.set_errno(0)
            seen["read"] = [libc.syscall(nr["keyctl"], {KEYCTL_READ}, {serial}, buffer, 64), ctypes.get_errno()]
            ctypes.set_errno(0)
            seen["request"] = [libc.syscall(nr["request_key"], b"user", {description.encode()!r}, None, 0),
                               ctypes.get_errno()]
            """)
        assert got == {"search": [-1, errno.EPERM], "read": [-1, errno.EPERM], "request": [-1, errno.EPERM]}
    finally:
        libc.syscall(nr["keyctl"], KEYCTL_UNLINK, serial, ctypes.c_long(KEY_SPEC_USER_KEYRING))


@pytest.mark.skipif(not sandbox.bwrap_options("--disable-userns"), reason="bwrap before 0.8.0: no --disable-userns")
def test_no_nested_user_namespace_can_be_made():
    got = seen("""\
        libc = ctypes.CDLL(None, use_errno=True)
        seen["unshare"] = [libc.unshare(0x10000000), ctypes.get_errno() != 0]  # CLONE_NEWUSER
        """)
    assert got == {"unshare": [-1, True]}


MOUNTS = """\
    fields = [line.split() for line in open("/proc/self/mountinfo")]
    seen["rw"] = sorted([f[4], f[f.index("-") + 1], f[f.index("-") + 3]] for f in fields if f[5].startswith("rw"))
    seen["roots"] = sorted({f[3] for f in fields})
    """


def test_mountinfo_shows_no_path_of_the_project_and_every_writable_mount_stores_in_memory():
    """The learner writes to memory only (tmpfs, charged to the grade's memory cgroup), never to the class's disk:
    every writable mount is /proc, a device, or one of the two capped tmpfs. The harness is a copy, not a mount of
    the project's file; the paths still shown are the Python runtime's and the course modules' (see
    docs/grading.md)."""
    from pathlib import Path

    got = seen(MOUNTS)
    project = str(Path(__file__).resolve().parents[2] / "src")
    assert not [root for root in got["roots"] if root.startswith(project)]
    writable = {(where, kind) for where, kind, _ in got["rw"]}
    devices = {(w, k) for w, k in writable if w.startswith("/dev/") and k in ("devtmpfs", "devpts", "tmpfs")
               and w not in ("/dev", "/dev/shm")}
    assert writable - devices == {("/proc", "proc"), ("/scratch", "tmpfs"), ("/dev/shm", "tmpfs")}
    sizes = {where: options for where, kind, options in got["rw"] if kind == "tmpfs" and where in ("/scratch",
                                                                                                    "/dev/shm")}
    assert f"size={sandbox.SCRATCH_MIB * 1024}k" in sizes["/scratch"]
    assert f"size={sandbox.SHM_MIB * 1024}k" in sizes["/dev/shm"]


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x32 ABI is x86_64's")
def test_a_system_call_of_another_abi_kills_the_process_rather_than_go_around_the_filter():
    """add_key through the x32 ABI (its number with bit 30 set) would be another architecture's call, which the
    filter does not list: libseccomp's default for it stops the process (SIGSYS)."""
    code = textwrap.dedent(f"""\
        def exercise_3(seed=42, d_k=256, T=8):
            import ctypes
            ctypes.CDLL(None).syscall({0x40000000 | numbers()["add_key"]}, b"user", b"x32", b"x", 1, -4)
        """)
    outcome = exercise_3_in_a_sandbox(code)
    assert outcome.status == "died" and "SIGSYS" in outcome.message


def test_the_bytes_a_grade_writes_are_counted_in_its_record_within_the_cap(tmp_path):
    from pathlib import Path

    from sdpa_lab.grading.classroom import grade_submission

    correct = (Path(__file__).resolve().parents[2] / "examples" / "solutions" / "correct.py").read_text()
    (tmp_path / "ann.py").write_text(correct)
    (tmp_path / "bob.py").write_text(correct + textwrap.dedent("""\

        def exercise_3(seed=42, d_k=256, T=8):
            with open("/scratch/kept", "wb") as f:
                f.write(b"x" * (30 * 2**20))
            with open("/dev/shm/kept", "wb") as f:
                f.write(b"x" * (4 * 2**20))
            raise RuntimeError("wrote 34 MiB and kept them")
        """))
    limits = {"seed": 3, "time_limit": 60, "memory_mib": 512, "n_samples": 2000}
    ann, bob = (grade_submission(tmp_path / f"{name}.py", name, **limits) for name in ("ann", "bob"))
    assert ann["written_mib"] < 10  # NumPy's and matplotlib's own files in the scratch folder, if any
    assert 34 <= bob["written_mib"] <= sandbox.SCRATCH_MIB + sandbox.SHM_MIB
