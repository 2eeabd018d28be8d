"""The grader's side of the learner's process: start it, call a function with a time limit, read the arrays back.

The learner's code never runs in the grader's process. `LearnerProcess`
starts `python -m sdpa_lab.grading.child` in a temporary folder, under a
memory limit it sets on itself (RLIMIT_AS), and waits for each answer at most
`time_limit` seconds of wall-clock time; past that it kills the process and
starts a fresh one for the next call.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

OK = "ok"
STARTUP_TIME_LIMIT = 60.0  # seconds for the learner's process to start Python and import NumPy, on a loaded machine


@dataclass(frozen=True)
class Outcome:
    """What one call (or loading the file) came to.

    status: "ok", "ready" (file loaded), "syntax", "error", "not_written",
    "missing", "memory", "timeout" or "died"; `values` holds the returned
    arrays when ok; `message` says what happened, in the learner's terms.
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
        """The process was lost (a hang, a memory blow-up or a crash): further calls would lose it again."""
        return self.status in ("timeout", "memory", "died")


def _message(reply: dict, path: Path, memory_mib: int) -> str:
    status = reply["status"]
    if status == "syntax":
        text = f"\n    {reply['text']}" if reply.get("text") else ""
        return f"{path.name}, line {reply['line']}: {reply['message']}{text}"
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
    """A solutions file loaded in its own process; `call` runs one of its functions there."""

    def __init__(self, path: str | os.PathLike, workdir: str | os.PathLike, time_limit: float, memory_mib: int):
        self.path = Path(path).resolve()
        self.workdir = Path(workdir)
        self.time_limit = float(time_limit)
        self.memory_mib = int(memory_mib)
        self._proc: subprocess.Popen | None = None
        self._buffer = b""
        self._calls = 0

    # -- process management -------------------------------------------------
    def start(self) -> Outcome:
        """Start the process and import the file; the Outcome says whether it can be used."""
        env = dict(os.environ)
        # One BLAS thread: the learner shares the machine, and each thread reserves address space.
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "sdpa_lab.grading.child", str(self.path), str(self.workdir), str(self.memory_mib)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self.workdir, env=env,
            start_new_session=True,  # its own process group, so a kill reaches anything it started
        )
        self._buffer = b""
        started = self._receive("starting Python and NumPy", startup=True)  # before any of the learner's code
        if isinstance(started, Outcome):
            return started
        reply = self._receive("importing the file")
        if isinstance(reply, Outcome):
            return reply
        if reply["status"] != "ready":
            self.close()
            return Outcome(reply["status"], message=_message(reply, self.path, self.memory_mib))
        return Outcome("ready", functions=tuple(reply["functions"]))

    def close(self) -> None:
        """Stop the process (and anything it started)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
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

    def __enter__(self) -> LearnerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- calls --------------------------------------------------------------
    def call(self, function: str, *args: np.ndarray, **kwargs) -> Outcome:
        """function(*args, **kwargs) in the learner's process; a fresh process if the last one was lost."""
        if self._proc is None:
            started = self.start()
            if started.status != "ready":
                return started
        self._calls += 1
        request = {"id": self._calls, "function": function, "args": None, "kwargs": kwargs}
        if args:
            request["args"] = str(self.workdir / f"in_{self._calls}.npz")
            np.savez(request["args"], **{f"arg{i}": a for i, a in enumerate(args)})
        try:
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            return self._lost(f"calling {function}")
        reply = self._receive(f"running {function}")
        if isinstance(reply, Outcome):
            return reply
        if reply["status"] != OK:
            outcome = Outcome(reply["status"], message=_message(reply, self.path, self.memory_mib))
            if outcome.fatal:  # a MemoryError may leave the process short of memory: start afresh
                self.close()
            return outcome
        with np.load(reply["file"]) as data:
            values = tuple(data[f"item{i}"] for i in range(reply["n"]))
        return Outcome(OK, values, reply["sequence"], kwargs=tuple(reply.get("kwargs", ())))

    def _receive(self, doing: str, startup: bool = False) -> dict | Outcome:
        """The next JSON line from the process within the time limit (the learner's, or STARTUP_TIME_LIMIT for
        the process's own start), or the Outcome of a hang or a crash."""
        time_limit = STARTUP_TIME_LIMIT if startup else self.time_limit
        deadline = time.monotonic() + time_limit
        fd = self._proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    self.close()
                    why = " (the machine is overloaded?)" if startup else \
                        " (an endless loop, or far more work than the exercise needs?)"
                    return Outcome("timeout", message=(
                        f"did not finish within the time limit of {time_limit:g} s while {doing}{why}: stopped"))
                chunk = os.read(fd, 65536)
                if not chunk:
                    return self._lost(doing)
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _lost(self, doing: str) -> Outcome:
        proc = self._proc
        try:
            code = proc.wait(timeout=5) if proc is not None else None
        except subprocess.TimeoutExpired:  # closed its end of the pipe but kept running
            code = None
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
        if outcome.fatal or outcome.status in ("not_written", "missing"):
            self.lost = outcome
        self.outcomes.append(outcome)
        return outcome
