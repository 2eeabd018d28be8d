"""The learner's process: imports a solutions file by path and answers the grader's calls.

Run by the grader (sdpa_lab.grading.runner) as
`python -m sdpa_lab.grading.child SOLUTIONS WORKDIR MEMORY_MIB`, in WORKDIR.
It caps its own address space first, so the learner's code runs under the
limit. Requests come as JSON lines on stdin: {"id", "function", "args": npz
file or null, "kwargs"}; every answer is one JSON line on the original
stdout, and the result arrays go to an .npz file in WORKDIR. Whatever the
learner prints goes to WORKDIR/learner_output.txt, never into the protocol.
"""

from __future__ import annotations

import inspect
import json
import os
import resource
import sys
import traceback
from pathlib import Path

NOT_WRITTEN = "not_written"  # the skeleton's `raise NotImplementedError`
FUNCTIONS = ("softmax", "scaled_dot_product_attention", "exercise_1", "exercise_2", "exercise_3")


def limit_memory(mebibytes: int) -> None:
    """Cap this process's address space: an allocation past it raises MemoryError."""
    if mebibytes > 0:
        limit = mebibytes * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def learner_traceback(exc: BaseException, path: str) -> str:
    """The traceback from the learner's file only (the grader's own frames left out), and the error."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    lines = traceback.format_list(frames) if frames else []
    return "".join(lines + traceback.format_exception_only(type(exc), exc)).rstrip()


def failure(exc: BaseException, path: str) -> dict:
    if isinstance(exc, MemoryError):
        return {"status": "memory"}
    if isinstance(exc, NotImplementedError):
        return {"status": NOT_WRITTEN}
    return {"status": "error", "traceback": learner_traceback(exc, path)}


def load(path: str):
    """The learner's module, or the answer saying why it cannot be used."""
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        code = compile(source, path, "exec")
    except SyntaxError as exc:  # IndentationError is one too
        return None, {"status": "syntax", "line": exc.lineno, "message": f"{type(exc).__name__}: {exc.msg}",
                      "text": (exc.text or "").rstrip()}
    module = type(sys)("solutions")
    module.__file__ = path
    sys.path.insert(0, str(Path(path).parent))  # the learner's own helper modules, beside the file
    sys.modules["solutions"] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - anything the learner's module raises is reported
        return None, failure(exc, path)
    present = [name for name in FUNCTIONS if callable(getattr(module, name, None))]
    return module, {"status": "ready", "functions": present}


def accepted_kwargs(fn, kwargs: dict) -> dict:
    """The keyword arguments `fn` accepts (exercise_1 may be written without n_samples)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


def encode(value, out: Path) -> dict:
    """Save what a function returned as arrays item0, item1, ... in `out`."""
    import numpy as np

    sequence = isinstance(value, (tuple, list))
    items = list(value) if sequence else [value]
    arrays = {}
    for i, item in enumerate(items):
        a = np.asarray(item)
        if a.dtype.kind not in "biuf":
            return {"status": "error", "traceback": f"returned {type(item).__name__} {item!r:.80}, not numbers"}
        arrays[f"item{i}"] = a
    np.savez(out, **arrays)
    return {"status": "ok", "sequence": sequence, "n": len(items), "file": str(out)}


def answer(module, request: dict, path: str, workdir: Path) -> dict:
    import numpy as np

    fn = getattr(module, request["function"], None)
    if not callable(fn):
        return {"status": "missing"}
    args = []
    if request.get("args"):
        with np.load(request["args"]) as data:
            args = [data[f"arg{i}"] for i in range(len(data.files))]
    kwargs = accepted_kwargs(fn, request.get("kwargs") or {})
    try:
        value = fn(*args, **kwargs)
        reply = encode(value, workdir / f"out_{request['id']}.npz")
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt from the learner too
        reply = failure(exc, path)
    reply["kwargs"] = sorted(kwargs)
    return reply


def main(argv: list[str]) -> int:
    path, workdir, mebibytes = str(Path(argv[0]).resolve()), Path(argv[1]), int(argv[2])
    limit_memory(mebibytes)
    # The protocol keeps private copies of stdin and stdout; the learner's code gets
    # /dev/null for input and a log file for what it prints.
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    log = os.open(workdir / "learner_output.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)

    def send(reply: dict) -> None:
        sys.stdout.flush()
        replies.write(json.dumps(reply) + "\n")

    import numpy  # noqa: F401 - the grader's own start, timed apart from the learner's code

    send({"status": "started"})
    module, status = load(path)
    send(status)
    if module is None:
        return 0
    for line in requests:
        request = json.loads(line)
        reply = answer(module, request, path, workdir)
        send({"id": request["id"], **reply})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
