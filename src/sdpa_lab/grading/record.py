"""A grade as plain data: the record a submission's job writes as JSON, and what it says of a file it could not use.

Apart from sdpa_lab.grading.classroom so that the grade itself (sdpa_lab.grading.grade, which counts its points on
the record) can read it without importing the class.
"""

from __future__ import annotations

import re

from sdpa_lab.grading.learner_text import file_name
from sdpa_lab.grading.limits import UNUSABLE


def unusable_reason(g) -> str:  # g: a sdpa_lab.grading.grade.Grade (which imports this module)
    """Why a grade could not use the file, in one line: the load's error (an exception raised at import as its
    last line and where), or the first reply that broke the protocol and in how many more functions one did, or
    the first part the machine left ungraded (its load, its memory) and how many more."""
    if not g.usable and g.load.message:
        return error_line(g.load.message) if g.load.status == "error" else g.load.message.splitlines()[0]
    forged = [p.lost.message for p in g.forged] or [f"{p.name}: {p.lost.message}" for p in g.ungraded]
    if not forged:
        return g.load.status
    more = len(forged) - 1
    return forged[0] + (f" (and in {more} more function{'s' if more > 1 else ''})" if more else "")


def error_line(traceback: str) -> str:
    """A learner's traceback in one line: its exception, and the file and line it was raised at."""
    lines = [line for line in traceback.strip().splitlines() if line.strip()]
    if not lines:
        return "an error"
    places = [m for line in lines if (m := re.match(r'\s*File "([^"]+)", line (\d+)', line))]
    where = f" ({places[-1][1]}, line {places[-1][2]})" if places else ""
    return lines[-1].strip() + where


def grade_record(g, learner: str) -> dict:  # g: a sdpa_lab.grading.grade.Grade
    """A grade as plain data (the JSON a submission's job writes)."""
    import sdpa_lab.grading.mistakes as M

    parts = []
    for p in g.parts:
        parts.append({
            "name": p.name, "signature": p.signature, "verdict": p.verdict, "passed": bool(p.passed),
            "lost": p.lost.message if p.lost is not None else "", "lost_status": p.lost.status if p.lost else "",
            "checks": [{"claim": c.claim, "what": c.what, "passed": bool(c.passed), "detail": c.detail}
                       for c in p.checks],
            "notes": list(p.notes), "error": p.error, "diagnosis": list(p.diagnosis), "mistakes": list(p.mistakes),
            "reread": [M.MISTAKES[k].reread for k in p.mistakes if k in M.MISTAKES],
        })
    unusable = "" if g.exit_status != UNUSABLE else unusable_reason(g)
    return {"learner": learner, "file": file_name(g.path), "seed": g.seed, "isolation": g.isolation,
            "time_limit": g.time_limit, "memory_mib": g.memory_mib, "peak_mib": round(g.peak_mib, 1),
            "written_mib": round(g.written_mib, 1),
            "seconds": round(g.seconds, 3), "learner_cpu_seconds": round(g.learner_cpu_seconds, 3),
            "exit_status": g.exit_status, "usable": g.usable,
            "load_status": g.load.status, "load_message": g.load.message, "unusable": unusable,
            "passed": sum(bool(p.passed) for p in g.parts), "parts": parts, "notes": list(g.notes)}
