"""The learner's side: a harness that answers the grader's calls, each run in a process forked for it.

A standalone script (standard library and NumPy only: in the sandbox it sees nothing of
sdpa_lab), run by the grader (sdpa_lab.grading.runner) as
`python -I -S child.py SITE MEMORY_MIB [HELPERS]` in a scratch folder (SITE: the course's modules,
sdpa_lab.grading.modules).
It caps its own address space first, so one large allocation raises MemoryError.

Protocol, in frames on its stdin and stdout: a frame is one JSON line, whose "nbytes" says
how many raw bytes follow it. In: first {"name"} + the source, then requests {"id",
"function", "kwargs", "source_bytes"} + the arguments as an .npz, followed by source_bytes
bytes: the source of a correct `softmax`, sent for a call that runs with the file's `softmax`
replaced by it (so a function is graded apart from the helper it calls). Out: {"status":
"started"}, the file's status ("ready" with its functions, or why not), then one reply per
request: {"id", "status", ...} + the returned arrays as an .npz (status "ok"); status "died"
({"exit"} or {"signal"}) when the process of a load or call ended without an answer.

Why a process per call. The harness holds the grader's pipes and never runs the learner's
code: it forks (after NumPy is imported, so a fork costs little) one process to load the file
and one per call, which runs the file afresh and then the function. That process keeps only
/dev/null as input, the log (learner_output.txt) for what it prints, and a pipe of its own
for its one answer (ANSWER_FD); the harness relays the first frame on it to the grader and
nothing else, so what the learner's code writes there is at most its own call's answer, which
it could return anyway (the grader validates every frame). The harness is non-dumpable
(prctl PR_SET_DUMPABLE 0), so the learner's processes, of the same user, can open neither its
/proc/<pid>/fd nor its memory; in the sandbox it is the PID namespace's init (bwrap
--as-pid-1: no bwrap init holding the grader's pipes), which they cannot signal, and after
each call it kills everything else in the namespace. The grader's softmax is never in the
harness nor in its files: its source follows the request of a call that asks for it, the
call's process reads it from the pipe before any of the learner's code runs and compiles it
there; the grader starts a fresh harness (in the sandbox: a fresh sandbox) for the first call
after such calls, so nothing of it is left for the calls that follow. The price: the file runs
once per call (its top-level code counts within each call's time limit), and a fork per call.

Nothing in a call's process is trusted: the learner's code runs there and may replace any of
it. The grader validates every frame and decides every verdict from the arrays itself.
"""

import contextlib
import inspect
import io
import json
import linecache
import os
import resource
import signal
import sys
import traceback

NOT_WRITTEN = "not_written"  # the skeleton's `raise NotImplementedError`
FUNCTIONS = ("softmax", "scaled_dot_product_attention", "exercise_1", "exercise_2", "exercise_3")
MAX_TEXT = 4000  # characters of a traceback sent back
MAX_HEADER = 64 * 1024  # bytes of one reply's JSON line (the grader's limit too)
MAX_PAYLOAD = 2**20  # bytes of one reply's arrays (the probes' answers are kilobytes: this bounds the grader's memory)
ANSWER_FD = 4  # where a call's process writes its answer
LOG = "learner_output.txt"  # what the learner's code prints, in the scratch folder
SCRATCH_MIB = 64  # bytes the learner may write, printing included: the sandbox's scratch size, and any file's


def limit_memory(mebibytes: int) -> None:
    """Cap this process's address space (an allocation past it raises MemoryError), and each file it writes just
    past SCRATCH_MIB (a write past it fails with EFBIG): outside the sandbox, where the scratch folder is on the
    disk, that bounds what one file of the learner's takes there (in the sandbox the scratch folder fills first)."""
    if mebibytes > 0:
        limit = mebibytes * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_FSIZE, ((SCRATCH_MIB + 1) * 2**20, (SCRATCH_MIB + 1) * 2**20))


def learner_traceback(exc: BaseException, name: str) -> str:
    """The traceback from the learner's file only (the harness's own frames left out), and the error."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == name]
    lines = traceback.format_list(frames) if frames else []
    text = "".join(lines + traceback.format_exception_only(type(exc), exc)).rstrip()
    return text if len(text) <= MAX_TEXT else f"[... {len(text) - MAX_TEXT:,} characters cut ...] " + text[-MAX_TEXT:]


def failure(exc: BaseException, name: str) -> dict:
    if isinstance(exc, MemoryError):
        return {"status": "memory"}
    if isinstance(exc, NotImplementedError):
        return {"status": NOT_WRITTEN}
    return {"status": "error", "traceback": learner_traceback(exc, name)}


def load(source: str, name: str):
    """The learner's module, or the answer saying why it cannot be used."""
    try:
        code = compile(source, name, "exec")
    except SyntaxError as exc:  # IndentationError is one too
        return None, {"status": "syntax", "line": exc.lineno or 0, "message": f"{type(exc).__name__}: {exc.msg}",
                      "text": (exc.text or "").rstrip()[:200]}
    # tracebacks show its lines, split as Python splits code (only at "\n": not at a form feed, as splitlines does)
    linecache.cache[name] = (len(source), None, io.StringIO(source, newline="\n").readlines(), name)
    module = type(sys)("solutions")
    module.__file__ = name
    sys.modules["solutions"] = module
    stopped = None
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - anything the learner's module raises is reported
        stopped = failure(exc, name)
    present = [fn for fn in FUNCTIONS if callable(getattr(module, fn, None))]
    if stopped is None:
        return module, {"status": "ready", "functions": present}
    if not present or stopped["status"] != "error":  # as a notebook's Run All: what was defined before it is kept
        return None, stopped
    return module, {"status": "ready", "functions": present, "stopped": stopped["traceback"]}


def accepted_kwargs(fn, kwargs: dict) -> dict:
    """The keyword arguments `fn` accepts (an exercise may be written without some of them)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


def encode(value):
    """(reply, payload): what a function returned, as arrays item0, item1, ... in an .npz."""
    import numpy as np

    sequence = isinstance(value, (tuple, list))
    items = list(value) if sequence else [value]
    arrays = {}
    for i, item in enumerate(items):
        a = np.asarray(item)
        if a.dtype.kind not in "biuf":
            return {"status": "error", "traceback": f"returned {type(item).__name__} {item!r:.80}, not numbers"}, b""
        arrays[f"item{i}"] = a
    if sum(a.nbytes for a in arrays.values()) > MAX_PAYLOAD - 4096:  # room for the .npz's headers
        shapes = ", ".join(str(a.shape) for a in arrays.values())
        return {"status": "error", "traceback": f"returned arrays of shape {shapes:.200}: more than the "
                                               f"{MAX_PAYLOAD // 1024} KiB of numbers the grader reads"}, b""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return {"status": "ok", "sequence": sequence, "n": len(items)}, buffer.getvalue()


def answer(module, request: dict, args_bytes: bytes, name: str):
    import numpy as np

    fn = getattr(module, request["function"], None)
    if not callable(fn):
        return {"status": "missing"}, b""
    args = []
    if args_bytes:
        with np.load(io.BytesIO(args_bytes), allow_pickle=False) as data:
            args = [data[f"arg{i}"] for i in range(len(data.files))]
    kwargs = accepted_kwargs(fn, request.get("kwargs") or {})
    reference = request.get("softmax")  # the grader's correct softmax, in the process of a call that asks for it
    if reference is not None and "softmax" in module.__dict__:
        module.softmax = reference  # this process ends with the call: nothing to put back
    try:
        reply, payload = encode(fn(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt from the learner too
        reply, payload = failure(exc, name), b""
    reply["kwargs"] = sorted(kwargs)
    return reply, payload




# -- the harness: reads the grader's requests, runs each in a process forked for it ---------------

def read_exact(fd: int, n: int) -> bytes:
    """n bytes from fd, fewer only at its end."""
    chunks = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_request(fd: int):
    """(header, payload) of the grader's next frame, read unbuffered, so that what follows it (the source of the
    grader's softmax) stays in the pipe for the call's process; (None, b"") at the end of the input."""
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            return None, b""
        line += byte
    header = json.loads(line)
    return header, read_exact(fd, header.get("nbytes", 0))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def frame(header: dict, payload: bytes = b"") -> bytes:
    return (json.dumps({**header, "nbytes": len(payload)}) + "\n").encode() + payload


def relay(fd: int) -> bytes:
    """The first frame a call's process wrote on its answer pipe, as the grader reads one: its header line and the
    bytes it announces (a line that heads no frame goes alone, and the grader refuses it); b"" if the pipe
    closed before a whole frame."""
    data = bytearray()
    while b"\n" not in data and len(data) <= MAX_HEADER:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b""
        data += chunk
    if b"\n" not in data:
        return bytes(data[:MAX_HEADER + 1])  # longer than the grader takes: it says so
    line, _, rest = bytes(data).partition(b"\n")
    try:
        nbytes = json.loads(line).get("nbytes")
    except (ValueError, AttributeError, RecursionError):
        return line + b"\n"
    if not isinstance(nbytes, int) or isinstance(nbytes, bool) or not 0 <= nbytes <= MAX_PAYLOAD:
        return line + b"\n"
    if len(rest) < nbytes:
        rest += read_exact(fd, nbytes - len(rest))
    return line + b"\n" + rest[:nbytes] if len(rest) >= nbytes else b""


def call_process(request, args: bytes, source: str, name: str, log: int, answer_fd: int) -> None:
    """In the process forked for one call (request None: loading the file): the grader's softmax if the call asks
    for it, read from the request pipe and compiled before any of the learner's code runs; then the file run
    afresh and the function called; its one answer written to ANSWER_FD, the only descriptor left open besides
    /dev/null for input and the log for what it prints."""
    reference = None
    if request is not None and request.get("source_bytes"):
        namespace = {}
        exec(compile(read_exact(0, request["source_bytes"]), "<the grader's softmax>", "exec"), namespace)
        reference = namespace["softmax"]
    os.dup2(log, 1)  # first: the log may be where the answer goes next
    os.dup2(log, 2)
    if answer_fd != ANSWER_FD:
        os.dup2(answer_fd, ANSWER_FD)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.closerange(3, ANSWER_FD)
    os.closerange(ANSWER_FD + 1, os.sysconf("SC_OPEN_MAX"))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    module, status = load(source, name)
    if request is None:
        reply, payload = status, b""
    elif module is None:  # the file ran differently this time
        reply, payload = {k: v for k, v in status.items() if k in ("status", "traceback")}, b""
        if reply["status"] == "syntax":
            reply = {"status": "error", "traceback": status["message"]}
    else:
        reply, payload = answer(module, {**request, "softmax": reference}, args, name)
    if request is not None:
        reply = {"id": request["id"], **reply}
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the scratch folder is full: the learner's output is cut there
            pass
    write_all(ANSWER_FD, frame(reply, payload))


def run(request, args: bytes, source: str, name: str, log: int, sandboxed: bool) -> None:
    """One load or call in a process forked for it; its answer relayed to the grader, or how it ended without one."""
    os.ftruncate(log, 0)  # each call's prints within the scratch folder's size, however many calls ran the file
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            call_process(request, args, source, name, log, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    answer_frame = relay(read_end)
    os.close(read_end)
    if not answer_frame:  # how the process ended (it closed its answer pipe: it is ending, or it hangs)
        _, code = os.waitpid(pid, 0)
        ended = {"signal": -os.waitstatus_to_exitcode(code)} if os.WIFSIGNALED(code) else \
            {"exit": os.waitstatus_to_exitcode(code)}
        answer_frame = frame({**({"id": request["id"]} if request else {}), "status": "died", **ended})
    end_call(pid, sandboxed)
    write_all(1, answer_frame)


def end_call(pid: int, sandboxed: bool) -> None:
    """Stop the call's process and, in the sandbox, everything else it started (the harness is the PID namespace's
    init: kill(-1) reaches every other process in it); reap them."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if sandboxed and os.getpid() == 1:  # never outside the sandbox: kill(-1) there is every process of the user
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                os.waitpid(-1, 0)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def undumpable(sandboxed: bool) -> None:
    """Make the harness non-dumpable, so that a process of the same user (the learner's) can neither open its
    /proc/<pid>/fd (the grader's pipes) nor read its memory; required in the sandbox."""
    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE, 0
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
    except (OSError, ImportError, AttributeError):
        if sandboxed:
            raise


def main(argv: list) -> int:
    site, mebibytes = argv[0], int(argv[1])
    sys.path.insert(0, site)
    if len(argv) > 2:
        sys.path.insert(0, argv[2])  # the learner's own helper modules (self-grading only)
    limit_memory(mebibytes)
    sandboxed = os.getpid() == 1  # in the sandbox the harness is its PID namespace's init (bwrap --as-pid-1)
    undumpable(sandboxed)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # no handler: a signal from the learner's processes to init is void
    log = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    import numpy  # noqa: F401 - the harness's own start, timed apart from the learner's code; inherited by each fork

    write_all(1, frame({"status": "started"}))
    header, source = read_request(0)
    if header is None:
        return 0
    text, name = source.decode("utf-8", errors="replace"), header["name"]
    run(None, b"", text, name, log, sandboxed)
    while True:
        request, args = read_request(0)
        if request is None:
            return 0
        run(request, args, text, name, log, sandboxed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
