"""The grader's checks on what the learner's process sends (sdpa_lab.grading.runner reads it).

Every reply is validated against the protocol (child.py): its status and fields, its text
(control characters escaped, length capped), the .npz of its arrays (numbers only, no pickles,
bounded sizes). A reply that breaks it raises Forged, whose message is the one line the grade
shows.
"""

from __future__ import annotations

import io
import signal
import zipfile

import numpy as np

import sdpa_lab.grading.child as child
from sdpa_lab.grading.learner_text import MAX_TEXT, shown

OK = "ok"
MAX_PAYLOAD = child.MAX_PAYLOAD  # bytes of one reply's arrays (the probes' answers are kilobytes)
MAX_ITEMS = 8  # arrays in one reply
CALL_STATUSES = {"ok", "error", "memory", "not_written", "missing", "died"}
LOAD_STATUSES = {"ready", "syntax", "error", "memory", "not_written", "died"}


class Forged(Exception):
    """A reply that breaks the protocol; its message is the one line the grade shows."""


def text(value, what: str) -> str:
    """A string field of a reply, its control characters (but newlines and tabs) escaped and its length capped, the
    cut marked (sdpa_lab.grading.learner_text)."""
    if not isinstance(value, str):
        raise Forged(f"{what} is not text")
    return shown(value, MAX_TEXT)


def check_load_reply(reply: dict) -> dict:
    """The file's status, validated (Forged if it breaks the protocol); text fields cleaned."""
    status = reply.get("status")
    if status not in LOAD_STATUSES:
        raise Forged(f"unknown status {str(status)[:40]!r}")
    out = {"status": status}
    if status == "ready":
        functions = reply.get("functions")
        if not (isinstance(functions, list) and all(f in child.FUNCTIONS for f in functions)
                and len(set(functions)) == len(functions)):
            raise Forged("the list of functions is not a list of the graded functions' names")
        out["functions"] = functions
        if "stopped" in reply:  # the error that stopped the file after these functions were defined
            out["stopped"] = text(reply["stopped"], "the error that stopped the file")
    elif status == "syntax":
        if not isinstance(reply.get("line"), int) or isinstance(reply.get("line"), bool):
            raise Forged("a syntax error without a line number")
        out.update(line=reply["line"], message=text(reply.get("message"), "the message"),
                   text=text(reply.get("text", ""), "the line"))
    elif status == "error":
        out["traceback"] = text(reply.get("traceback"), "the traceback")
    elif status == "died":
        out["ended"] = ended(reply)
    return out


def ended(reply: dict) -> str:
    """How a process of the learner's ended without an answer ("died": its exit status or signal), in words."""
    exit_code, signum = reply.get("exit"), reply.get("signal")
    if isinstance(signum, int) and not isinstance(signum, bool) and 0 < signum < 65 and exit_code is None:
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        hint = " (killed: out of memory?)" if signum == signal.SIGKILL else ""
        return f"was stopped by signal {name}{hint}"
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and 0 <= exit_code < 256 and signum is None:
        return f"exited with status {exit_code} (sys.exit or os._exit in the file?)"
    raise Forged("a process's end without its exit status or signal")


def check_call_reply(reply: dict, payload: bytes, request_id: int, kwargs: dict) -> dict:
    """A call's reply, validated (Forged if it breaks the protocol), with its arrays read from `payload`."""
    if reply.get("id") != request_id:
        raise Forged(f"a reply to call {shown(str(reply.get('id')), 20, one_line=True)}, not to call {request_id}")
    status = reply.get("status")
    if status not in CALL_STATUSES:
        raise Forged(f"unknown status {str(status)[:40]!r}")
    accepted = reply.get("kwargs", [])
    if not (isinstance(accepted, list) and all(isinstance(k, str) and k in kwargs for k in accepted)):
        raise Forged("the accepted keyword arguments are not among those sent")
    out = {"status": status, "kwargs": tuple(accepted)}
    if status == "error":
        out["traceback"] = text(reply.get("traceback"), "the traceback")
    if status == "died":
        out["ended"] = ended(reply)
    if status != OK:
        if payload:
            raise Forged(f"arrays sent with status {status}")
        return out
    n, sequence = reply.get("n"), reply.get("sequence")
    if not isinstance(sequence, bool) or not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_ITEMS:
        raise Forged("the count of returned arrays is missing or out of range")
    if not sequence and n != 1:
        raise Forged("one array announced, with a count other than 1")
    out.update(sequence=sequence, values=read_arrays(payload, n))
    return out


def read_arrays(payload: bytes, n: int) -> tuple[np.ndarray, ...]:
    """The arrays item0..item{n-1} of an .npz, checked: no pickles, numbers only, sizes within MAX_PAYLOAD."""
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as z:
            names = [i.filename for i in z.infolist()]
            if sum(i.file_size for i in z.infolist()) > MAX_PAYLOAD:  # a compressed bomb
                raise Forged("the arrays unpack to more than the size limit")
        if sorted(names) != sorted(f"item{i}.npy" for i in range(n)):
            raise Forged(f"the arrays are not the {n} announced")
        with np.load(io.BytesIO(payload), allow_pickle=False) as data:
            values = tuple(data[f"item{i}"] for i in range(n))
    except Forged:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever np.load makes of forged bytes
        raise Forged(f"the arrays cannot be read ({type(exc).__name__})") from None
    for a in values:
        if a.dtype.kind not in "biuf" or a.dtype.hasobject:
            raise Forged(f"an array of {shown(str(a.dtype), 80, one_line=True)}, not numbers")  # a field's name too
    return values
