"""The grader's side of the learner's process: start it, call a function with a time limit, read the arrays back.

The learner's code never runs in the grader's process. `LearnerProcess` starts the
harness (child.py) in a bubblewrap sandbox (sdpa_lab.grading.sandbox) when given one, else
as a plain child process in a temporary folder with a minimal environment (self-grading
where no sandbox can start); sends it the file's source, then one request per call (the
harness runs each in a process of its own: child.py says why); and waits for each answer at
most `time_limit` seconds of wall-clock time; past that it kills the harness and all it
started, and starts a fresh one for the next call.

Nothing the process sends is trusted: every frame is checked against the protocol (its
size, its JSON, its status and fields, the .npz of the arrays: numbers only, no pickles,
bounded sizes), and a frame that breaks it makes that call "unusable" with one line, the
process stopped. The verdicts are decided from the validated arrays (sdpa_lab.grading.checks).
"""

from __future__ import annotations

import io
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import sdpa_lab.grading.child as child
import sdpa_lab.grading.machine as machine
from sdpa_lab.grading.modules import COURSE_MODULES, linked_site
from sdpa_lab.grading.replies import Forged, check_call_reply, check_load_reply
from sdpa_lab.grading.sandbox import HARNESS, Sandbox

OK = "ok"
STARTUP_TIME_LIMIT = 60.0  # seconds for the learner's process to start Python and import NumPy, on a loaded machine
MAX_HEADER = child.MAX_HEADER  # bytes of one reply's JSON line
MAX_PAYLOAD = child.MAX_PAYLOAD  # bytes of one reply's arrays (the probes' answers are kilobytes)
# The lesson's stable softmax, sent (as source) to the process of a call that asks for it and compiled there only:
# it is never in the harness, its files or any other call's process (see child.py).
REFERENCE_SOFTMAX = b"""\
import numpy as np


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
"""


@dataclass(frozen=True)
class Outcome:
    """What one call (or loading the file) came to.

    status: "ok", "ready" (file loaded), "syntax", "error", "not_written",
    "missing", "memory", "timeout", "died", "unusable" (a reply that breaks the
    protocol) or "loaded" (lost to the machine's load or memory: sdpa_lab.grading.machine);
    `values` holds the returned arrays when ok; `message` says what happened, in the learner's terms.
    """

    status: str
    values: tuple = ()
    sequence: bool = False  # returned a tuple or list (not a single array)
    message: str = ""
    functions: tuple = ()  # for "ready": the functions the file defines
    kwargs: tuple = ()  # the keyword arguments the function accepted

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def fatal(self) -> bool:
        """The process was lost (a hang, a memory blow-up, a crash or a forged reply): further calls would lose it
        again."""
        return self.status in ("timeout", "memory", "died", "unusable", "loaded")


def _message(reply: dict, name: str, memory_mib: int) -> str:
    status = reply["status"]
    if status == "syntax":
        text = f"\n    {reply['text']}" if reply["text"] else ""
        return f"{name}, line {reply['line']}: {reply['message']}{text}"
    if status == "error":
        return reply["traceback"]
    if status == "memory":
        return f"ran out of memory: it needed more than the limit of {memory_mib} MiB (MemoryError)"
    if status == "not_written":
        return "not written yet (raises NotImplementedError)"
    if status == "missing":
        return "not defined in the file"
    return ""


class LearnerProcess:
    """A solutions file's source loaded in its own (sandboxed) process; `call` runs one of its functions there."""

    def __init__(self, name: str, source: str, time_limit: float, memory_mib: int, sandbox: Sandbox | None = None,
                 helpers: str | os.PathLike | None = None, modules: tuple[str, ...] = COURSE_MODULES,
                 relocate=None):
        self.name, self.source = name, source
        self.modules = tuple(modules)  # what a plain process may import (a sandbox mounts its own)
        self.relocate = relocate or (lambda text: text)  # the source's places as the learner's (a notebook's cells)
        self.time_limit = float(time_limit)
        self.memory_mib = int(memory_mib)
        self.sandbox = sandbox
        self.helpers = Path(helpers).resolve() if helpers is not None else None
        self._proc: subprocess.Popen | None = None
        self._scratch: tempfile.TemporaryDirectory | None = None
        self._buffer = b""
        self._calls = 0
        self._oom_before = 0
        self._held_reference = False  # the last call was given the grader's softmax
        self._sched: dict = {}  # the grade's processes' run and wait times when the call began (machine.snapshot)
        self._machine_ooms = 0  # the machine's kills for memory when the call began
        self._marked = 0.0  # when it began

    # -- process management -------------------------------------------------
    def _popen(self) -> subprocess.Popen:
        if self.sandbox is not None:
            self._oom_before = self.sandbox.cgroup.oom_kills()
            helpers = ["/opt/learner"] if self.helpers is not None else []
            return self.sandbox.popen([str(self.memory_mib), *helpers], helpers=self.helpers)
        # No sandbox (self-grading where bubblewrap cannot start): a plain process in a temporary
        # folder, with a minimal environment, limited to memory_mib of address space.
        from sdpa_lab.grading.sandbox import ENV

        self._scratch = tempfile.TemporaryDirectory(prefix="sdpa-lab-grade-")
        helpers = [str(self.helpers)] if self.helpers is not None else []
        site = linked_site(Path(self._scratch.name) / ".site", self.modules)
        env = {**ENV, "HOME": self._scratch.name, "TMPDIR": self._scratch.name,
               "MPLCONFIGDIR": str(Path(self._scratch.name) / ".matplotlib")}
        return subprocess.Popen(
            [sys.executable, "-I", "-S", str(HARNESS), str(site), str(self.memory_mib), *helpers],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self._scratch.name,
            env=env, start_new_session=True)  # its own process group, so a kill reaches anything it started

    def start(self) -> Outcome:
        """Start the process and load the file; the Outcome says whether it can be used."""
        self._proc = self._popen()
        self._buffer = b""
        self._mark()
        try:
            started, _ = self._receive("starting Python and NumPy", startup=True)  # before any of the learner's code
            if started != {"status": "started", "nbytes": 0}:
                raise Forged("the start was not announced")
            if not self._send({"name": self.name}, self.source.encode("utf-8")):
                return self._lost("loading the file")
            reply = check_load_reply(self._receive("importing the file")[0])
        except _Lost as lost:
            return lost.outcome
        except Forged as exc:
            return self._forged(exc, "importing the file")
        if reply["status"] == "died":
            return self._died(reply["ended"], "importing the file")
        if reply["status"] != "ready":
            self.close()
            return Outcome(reply["status"], message=self.relocate(_message(reply, self.name, self.memory_mib)))
        return Outcome("ready", functions=tuple(reply["functions"]), message=self.relocate(reply.get("stopped", "")))

    def close(self) -> None:
        """Stop the process (and anything it started)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:  # the pipe to a killed process
                    pass
        if self.sandbox is not None:
            self.sandbox.cgroup.kill_all()  # anything left in the grade's cgroup
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def __enter__(self) -> LearnerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- calls --------------------------------------------------------------
    def call(self, function: str, *args: np.ndarray, reference_softmax: bool = False, **kwargs) -> Outcome:
        """function(*args, **kwargs) in the learner's process; a fresh process if the last one was lost.

        reference_softmax: the call runs with the file's `softmax` replaced by a correct one (REFERENCE_SOFTMAX);
        the first call after such calls gets a fresh process (in the sandbox, a fresh sandbox: its scratch folder,
        /dev/shm and IPC namespace), so that nothing they left can carry the correct softmax to it.
        """
        if self._held_reference and not reference_softmax:
            self.close()
        self._held_reference = reference_softmax
        if self._proc is None:
            started = self.start()
            if started.status != "ready":
                return started
        self._calls += 1
        payload = b""
        if args:
            buffer = io.BytesIO()
            np.savez(buffer, **{f"arg{i}": a for i, a in enumerate(args)})
            payload = buffer.getvalue()
        self._oom_before = self.sandbox.cgroup.oom_kills() if self.sandbox is not None else 0
        self._mark()
        source = REFERENCE_SOFTMAX if reference_softmax else b""
        request = {"id": self._calls, "function": function, "kwargs": kwargs, "source_bytes": len(source)}
        if not self._send(request, payload, source):
            return self._lost(f"calling {function}")
        try:
            reply = check_call_reply(*self._receive(f"running {function}"), self._calls, kwargs)
        except _Lost as lost:
            return lost.outcome
        except Forged as exc:
            return self._forged(exc, f"running {function}")
        if reply["status"] == "died":
            return self._died(reply["ended"], f"running {function}")
        if self._oom_killed():  # a process it started was killed for memory: the answer went over the limit
            self.close()
            return Outcome("memory", message=f"ran out of memory: its processes together needed more than the "
                                             f"limit of {self.memory_mib} MiB while running {function} (one was "
                                             "stopped by the kernel)")
        if reply["status"] != OK:
            outcome = Outcome(reply["status"], message=self.relocate(_message(reply, self.name, self.memory_mib)),
                              kwargs=reply["kwargs"])
            if outcome.fatal:  # a MemoryError may leave the process short of memory: start afresh
                self.close()
            return outcome
        return Outcome(OK, reply["values"], reply["sequence"], kwargs=reply["kwargs"])

    def _send(self, header: dict, payload: bytes = b"", after: bytes = b"") -> bool:
        """A frame to the harness, and `after` it the bytes its header announces apart (the grader's softmax)."""
        try:
            self._proc.stdin.write((json.dumps({**header, "nbytes": len(payload)}) + "\n").encode() + payload + after)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def _read_until(self, enough, doing: str, deadline: float, startup: bool) -> None:
        """Read from the process until enough(buffer), the deadline, or its end (raising _Lost)."""
        fd = self._proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not enough(self._buffer):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    if self._oom_killed():  # what hangs is what is left of it after the kernel's kill
                        raise _Lost(self._lost(doing))
                    limit = STARTUP_TIME_LIMIT if startup else self.time_limit
                    run, waited = machine.since(self._sched, machine.snapshot(self._pids()))
                    elapsed = time.monotonic() - self._marked
                    if not startup and (more := machine.more_time(run, waited, elapsed, limit)) > 0:
                        deadline = time.monotonic() + more  # starved by the machine: its CPU time is not used up
                        continue
                    self.close()
                    if startup or machine.lost_to_load(run, waited, elapsed, limit):  # startup: none of its code ran
                        raise _Lost(Outcome("loaded", message=machine.starved_message(limit, run, waited, doing)))
                    raise _Lost(Outcome("timeout", message=(
                        f"did not finish within the time limit of {limit:g} s while {doing} (an endless loop, or far "
                        "more work than the exercise needs?): stopped")))
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise _Lost(self._lost(doing))
                self._buffer += chunk

    def _receive(self, doing: str, startup: bool = False) -> tuple[dict, bytes]:
        """The next frame (JSON header, payload) within the time limit, or _Lost (a hang, a crash) or Forged."""
        deadline = time.monotonic() + (STARTUP_TIME_LIMIT if startup else self.time_limit)
        self._read_until(lambda b: b"\n" in b or len(b) > MAX_HEADER, doing, deadline, startup)
        line, _, rest = self._buffer.partition(b"\n")
        if len(line) > MAX_HEADER:
            raise Forged(f"a reply line longer than {MAX_HEADER} bytes")
        try:
            header = json.loads(line)
        except (ValueError, RecursionError):
            raise Forged("a reply that is not JSON") from None
        if not isinstance(header, dict):
            raise Forged("a reply that is not a JSON object")
        nbytes = header.get("nbytes")
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or not 0 <= nbytes <= MAX_PAYLOAD:
            raise Forged("a reply whose size is missing or out of range")
        self._buffer = rest
        self._read_until(lambda b: len(b) >= nbytes, doing, deadline, startup)
        payload, self._buffer = self._buffer[:nbytes], self._buffer[nbytes:]
        if self.sandbox is not None:
            self.sandbox.count_written()
        return header, payload

    def _pids(self) -> list[int]:
        """The grade's processes now (its cgroup's, or the plain process's group)."""
        if self._proc is None:
            return []
        return self.sandbox.cgroup.processes() if self.sandbox is not None else machine.group(self._proc.pid)

    def _mark(self) -> None:
        """What machine.py compares with when a call is lost: its processes' times, the machine's kills for memory."""
        self._sched, self._machine_ooms = machine.snapshot(self._pids()), machine.machine_oom_kills()
        self._marked = time.monotonic()

    def _machine_memory(self, doing: str) -> Outcome | None:
        """A lost call's Outcome where the kernel killed a process for the machine's memory meanwhile (not the
        grade's limit: _oom_killed is asked first), else None."""
        if machine.machine_oom_kills() <= self._machine_ooms:
            return None
        self.close()
        return Outcome("loaded", message=machine.memory_message(doing))

    def _oom_killed(self) -> bool:
        """Whether the kernel killed a process of this grade for memory since the call (or the start) began."""
        return self.sandbox is not None and self.sandbox.cgroup.oom_kills() > self._oom_before

    def _forged(self, exc: Forged, doing: str) -> Outcome:
        self.close()
        return Outcome("unusable", message=f"unusable: the learner's process broke the grader's protocol while "
                                           f"{doing}: {exc}")

    def _died(self, ended: str, doing: str) -> Outcome:
        """The process of a load or call ended without an answer (the harness says how): out of memory if the kernel
        stopped a process of the grade, else its exit status or signal."""
        if self._oom_killed():
            return self._lost(doing)
        if "SIGKILL" in ended and (lost := self._machine_memory(doing)):
            return lost
        self.close()
        return Outcome("died", message=f"the process {ended} while {doing}")

    def _lost(self, doing: str) -> Outcome:
        if self._oom_killed():
            self.close()
            return Outcome("memory", message=f"ran out of memory: its processes together needed more than the limit "
                                             f"of {self.memory_mib} MiB while {doing} (stopped by the kernel)")
        proc = self._proc
        try:
            code = proc.wait(timeout=5) if proc is not None else None
        except subprocess.TimeoutExpired:  # closed its end of the pipe but kept running
            code = None
        if code in (-signal.SIGKILL, 128 + signal.SIGKILL) and (lost := self._machine_memory(doing)):
            return lost  # killed by the kernel for the machine's memory (bwrap passes its child's kill on as 137)
        self.close()
        if code is None:
            why = "stopped answering"
        elif code < 0:
            name = signal.Signals(-code).name
            hint = " (killed: out of memory?)" if -code == signal.SIGKILL else ""
            why = f"was stopped by signal {name}{hint}"
        else:
            why = f"exited with status {code} (sys.exit or os._exit in the file?)"
        return Outcome("died", message=f"the process {why} while {doing}")


class _Lost(Exception):
    def __init__(self, outcome: Outcome):
        self.outcome = outcome


@dataclass
class Calls:
    """Every call made to one function, so a hang or a crash is paid for once, not once per probe."""

    process: LearnerProcess
    function: str
    lost: Outcome | None = None
    outcomes: list = field(default_factory=list)

    def __call__(self, *args, **kwargs) -> Outcome:
        if self.lost is not None:
            return self.lost
        outcome = self.process.call(self.function, *args, **kwargs)
        for _ in range(machine.RETRIES):  # lost to the machine: made again, in a fresh process
            if outcome.status != "loaded":
                break
            outcome = self.process.call(self.function, *args, **kwargs)
        if outcome.fatal or outcome.status in ("not_written", "missing"):
            self.lost = outcome
        self.outcomes.append(outcome)
        return outcome
