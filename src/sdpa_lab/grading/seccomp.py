"""The system calls refused in the sandbox: a seccomp filter built with libseccomp, which bwrap loads (`--seccomp FD`).

bubblewrap gives the learner's process namespaces of its own, but some of the kernel's state belongs to no
namespace and is in an unprivileged process's reach. The kernel keyrings are the first: a key added there
(`add_key`) is the grader user's, outlives the grade, and can be read, overwritten or searched (`keyctl`,
`request_key`) by the next grade, so one grade could carry data (a reference's output) to another. Docker's default
seccomp profile refuses these three for that reason (https://docs.docker.com/engine/security/seccomp/), and so does
this filter, with EPERM as Docker's does. It also refuses the few other calls that profile refuses to unprivileged
code and that the lesson never needs (each with its reason in REFUSED). Every other call is allowed: the namespaces,
the unprivileged user without capabilities and the memory cgroup do the rest.

A system call of another architecture (a 32-bit call from a 64-bit process) kills the process: the filter speaks for
the native architecture only, so no other ABI can go around it (libseccomp's default for a foreign architecture).
"""

from __future__ import annotations

import errno
import os

# {system call: why it is refused}
REFUSED = {
    "add_key": "the kernel keyrings are not namespaced: a key would outlive the grade and reach the next",
    "keyctl": "reads, writes and searches the keyrings the grader's user shares with every grade",
    "request_key": "looks keys up in those keyrings (and may start the host's key helper)",
    "perf_event_open": "performance counters are the host's: timing side channels on the grader",
    "userfaultfd": "page faults handled by the learner stall the kernel's paths: an exploit's tool",
    "bpf": "programs loaded into the kernel, outside every namespace",
    "io_uring_setup": "io_uring, a large kernel surface Docker's profile refuses too",
    "io_uring_enter": "io_uring, a large kernel surface Docker's profile refuses too",
    "io_uring_register": "io_uring, a large kernel surface Docker's profile refuses too",
}


def program_fd() -> int:
    """A new file descriptor holding the filter as the kernel's BPF program, read from its start (one per bwrap: it
    reads it to the end): every call allowed but those in REFUSED, which fail with EPERM. The child that reads it
    gets it in pass_fds; the caller closes it once the child started. RuntimeError or OSError where libseccomp is
    missing or refuses."""
    import pyseccomp

    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name in REFUSED:
        rules.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
    fd = os.memfd_create("sdpa-lab-seccomp", 0)  # not close-on-exec: bwrap inherits it
    try:
        rules.export_bpf(_FileNo(fd))
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


class _FileNo:
    """A file descriptor where libseccomp's Python bindings expect a file (they ask it for fileno() only)."""

    def __init__(self, fd: int):
        self.fd = fd

    def fileno(self) -> int:
        return self.fd
