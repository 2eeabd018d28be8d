"""The learner's process: runs a solutions file's source and answers the grader's calls.

A standalone script (standard library and NumPy only: in the sandbox it sees nothing of
sdpa_lab), run by the grader (sdpa_lab.grading.runner) as
`python -I -S child.py NUMPY_SITE MEMORY_MIB [HELPERS]` in a scratch folder.
It caps its own address space first, so one large allocation raises MemoryError.

Protocol, in frames on its stdin and (a private copy of) its stdout: a frame is one JSON
line, whose "nbytes" says how many raw bytes follow it. In: first {"name"} + the source,
then requests {"id", "function", "kwargs", "reference_softmax"} + the arguments as an .npz
("reference_softmax": true runs the call with the file's `softmax` replaced by a correct one, so
a function is graded apart from the helper it calls). Out: {"status":
"started"}, the file's status ("ready" with its functions, or why not), then one reply per
request: {"id", "status", ...} + the returned arrays as an .npz (status "ok").

Nothing here is trusted: the learner's code runs in this process and may replace any of
it. The grader validates every frame and decides every verdict from the arrays itself.
Whatever the learner prints goes to learner_output.txt in the scratch folder.
"""

import inspect
import io
import json
import linecache
import os
import resource
import sys
import traceback

NOT_WRITTEN = "not_written"  # the skeleton's `raise NotImplementedError`
FUNCTIONS = ("softmax", "scaled_dot_product_attention", "exercise_1", "exercise_2", "exercise_3")
MAX_TEXT = 4000  # characters of a traceback sent back


def limit_memory(mebibytes: int) -> None:
    """Cap this process's address space: an allocation past it raises MemoryError."""
    if mebibytes > 0:
        limit = mebibytes * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def learner_traceback(exc: BaseException, name: str) -> str:
    """The traceback from the learner's file only (the harness's own frames left out), and the error."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == name]
    lines = traceback.format_list(frames) if frames else []
    return "".join(lines + traceback.format_exception_only(type(exc), exc)).rstrip()[-MAX_TEXT:]


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
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)  # tracebacks show its lines
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
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return {"status": "ok", "sequence": sequence, "n": len(items)}, buffer.getvalue()


def correct_softmax(x, axis=-1):
    """The lesson's stable softmax, put in place of the learner's for a call that asks for it."""
    import numpy as np

    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


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
    swap = bool(request.get("reference_softmax")) and "softmax" in module.__dict__
    own = module.__dict__.get("softmax")
    try:
        if swap:
            module.softmax = correct_softmax
        reply, payload = encode(fn(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt from the learner too
        reply, payload = failure(exc, name), b""
    finally:
        if swap:
            module.softmax = own
    reply["kwargs"] = sorted(kwargs)
    return reply, payload


def read_frame(stream):
    """(header, payload) of the next frame, or (None, b"") at the end of the input."""
    line = stream.readline()
    if not line:
        return None, b""
    header = json.loads(line)
    return header, stream.read(header.get("nbytes", 0))


def main(argv: list) -> int:
    site, mebibytes = argv[0], int(argv[1])
    sys.path.insert(0, site)
    if len(argv) > 2:
        sys.path.insert(0, argv[2])  # the learner's own helper modules (self-grading only)
    limit_memory(mebibytes)
    # The protocol keeps private copies of stdin and stdout; the learner's code gets
    # /dev/null for input and a log file for what it prints.
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    log = os.open("learner_output.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)

    def send(reply: dict, payload: bytes = b"") -> None:
        try:
            sys.stdout.flush()
        except OSError:  # the scratch folder is full: the learner's output is cut there
            pass
        replies.write((json.dumps({**reply, "nbytes": len(payload)}) + "\n").encode() + payload)
        replies.flush()

    import numpy  # noqa: F401 - the harness's own start, timed apart from the learner's code

    send({"status": "started"})
    header, source = read_frame(requests)
    name = header["name"]
    module, status = load(source.decode("utf-8", errors="replace"), name)
    send(status)
    if module is None:
        return 0
    while True:
        request, args_bytes = read_frame(requests)
        if request is None:
            return 0
        reply, payload = answer(module, request, args_bytes, name)
        send({"id": request["id"], **reply}, payload)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
