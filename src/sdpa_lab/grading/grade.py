"""Grade a solutions file: load it in its own process, check every function and exercise, format the verdicts."""

from __future__ import annotations

import os
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from sdpa_lab.experiments.replication import A1_N_SAMPLES
from sdpa_lab.grading import checks
from sdpa_lab.grading.runner import Calls, LearnerProcess, Outcome

# Exercise 1 as the lesson writes it draws 2 x 100,000 x 1024 normals and holds
# three arrays of 800 MB: about 10 s and 2.5 GB here. The limits leave room for that.
DEFAULT_TIME_LIMIT = 120.0  # seconds of wall-clock time per call
DEFAULT_MEMORY_MIB = 4096

PASS, FAIL, UNUSABLE = 0, 1, 2  # exit statuses

GRADERS = (
    ("softmax", checks.grade_softmax),
    ("scaled_dot_product_attention", checks.grade_attention),
    ("exercise_1", checks.grade_exercise_1),
    ("exercise_2", checks.grade_exercise_2),
    ("exercise_3", checks.grade_exercise_3),
)


@dataclass
class Grade:
    """The verdicts on one solutions file."""

    path: Path
    load: Outcome
    parts: list
    time_limit: float
    memory_mib: int

    @property
    def usable(self) -> bool:
        return self.load.status == "ready" and bool(self.load.functions)

    @property
    def exit_status(self) -> int:
        if not self.usable:
            return UNUSABLE
        return PASS if all(p.passed for p in self.parts) else FAIL


def grade(path: str | os.PathLike, time_limit: float = DEFAULT_TIME_LIMIT, memory_mib: int = DEFAULT_MEMORY_MIB,
          n_samples: int = A1_N_SAMPLES) -> Grade:
    """Run every check on the solutions file at `path` (its code runs in a separate, limited process).

    n_samples: the pairs Exercise 1 is asked to draw (the lesson's 100,000; fewer for quick runs).
    """
    path = Path(path)
    if not path.is_file():
        return Grade(path, Outcome("missing", message=f"{path}: no such file"), [], time_limit, memory_mib)
    with tempfile.TemporaryDirectory(prefix="sdpa-lab-grade-") as workdir, \
            LearnerProcess(path, workdir, time_limit, memory_mib) as process:
        load = process.start()
        if load.status != "ready":
            return Grade(path, load, [], time_limit, memory_mib)
        if not load.functions:
            missing = ", ".join(name for name, _ in GRADERS)
            load = Outcome("missing", message=f"{path.name} defines none of the functions to grade ({missing})")
            return Grade(path, load, [], time_limit, memory_mib)
        parts = []
        for name, grader in GRADERS:
            call = Calls(process, name)
            parts.append(grader(call, n_samples) if name == "exercise_1" else grader(call))
    return Grade(path, load, parts, time_limit, memory_mib)


def _wrap(text: str, indent: str) -> str:
    return "\n".join(textwrap.fill(line, 110, initial_indent=indent, subsequent_indent=indent + "  ")
                     for line in text.splitlines())


def format_grade(g: Grade) -> str:
    """The verdicts as the terminal shows them."""
    head = (f"Grading {g.path} (its code runs in a separate process, each call limited to "
            f"{g.time_limit:g} s and {g.memory_mib} MiB)")
    if not g.usable:
        what = {"syntax": "a syntax error", "error": "an error while importing it",
                "timeout": "a hang while importing it", "memory": "a memory blow-up while importing it",
                "died": "a crash while importing it"}.get(g.load.status, "")
        lines = [head, "", f"The file cannot be used{': ' + what if what else ''}.", _wrap(g.load.message, "    ")]
        return "\n".join(lines)
    lines = [head, ""]
    width = max(len(p.signature) for p in g.parts) + 2
    for p in g.parts:
        lines.append(f"{p.signature:<{width}}{p.verdict}")
        if p.lost is not None:
            lines.append(_wrap(p.lost.message, "    "))
        for c in p.checks:
            claim = f"{c.claim:<4}" if c.claim else "    "
            lines.append(_wrap(f"{'ok  ' if c.passed else 'FAIL'}  {claim}{c.what}: {c.detail}", "    "))
        for note in p.notes:
            lines.append(_wrap(f"note: {note}", "    "))
        if p.error:
            lines.append("    your code raised an error " + p.error.splitlines()[0])
            lines.append(textwrap.indent("\n".join(p.error.splitlines()[1:]), "      "))
        for d in p.diagnosis:
            lines.append(_wrap(d, "    "))
        lines.append("")
    passed = sum(p.passed for p in g.parts)
    to_fix = ", ".join(p.name for p in g.parts if not p.passed)
    lines.append(f"{passed} of {len(g.parts)} pass" + (f"; to fix: {to_fix}" if to_fix else ""))
    return "\n".join(lines)


# -- results/solutions.csv ----------------------------------------------------------

COLUMNS = ("part", "item", "claim", "verdict", "detail")


def rows(g: Grade) -> list[dict]:
    """The verdicts as table rows (results/solutions.csv): per part its verdict, then its checks, notes,
    the learner's error and the diagnosis; a file that cannot be used is one row."""
    if not g.usable:
        return [{"part": "file", "item": "load", "claim": "", "verdict": "unusable", "detail": g.load.message}]
    out = []
    for p in g.parts:
        out.append({"part": p.name, "item": "verdict", "claim": "", "verdict": p.verdict,
                    "detail": p.lost.message if p.lost is not None else ";".join(p.mistakes)})
        out += [{"part": p.name, "item": c.what, "claim": c.claim, "verdict": "ok" if c.passed else "FAIL",
                 "detail": c.detail} for c in p.checks]
        out += [{"part": p.name, "item": "note", "claim": "", "verdict": "", "detail": n} for n in p.notes]
        if p.error:
            out.append({"part": p.name, "item": "error", "claim": "", "verdict": "", "detail": p.error})
        out += [{"part": p.name, "item": "diagnosis", "claim": "", "verdict": "", "detail": d} for d in p.diagnosis]
    return out


def grade_rows(path: str | os.PathLike, **limits) -> list[dict]:
    """rows(grade(path, **limits)), and never raises: a failure of the grader itself is a row too."""
    try:
        return rows(grade(path, **limits))
    except Exception as exc:  # noqa: BLE001 - recorded, so a bad solutions file never breaks a pipeline
        return [{"part": "file", "item": "grader", "claim": "", "verdict": "unusable",
                 "detail": f"the grader could not run: {type(exc).__name__}: {exc}"}]


def solutions_job(solutions: str | os.PathLike, out: str | os.PathLike, time_limit: float = DEFAULT_TIME_LIMIT,
                  memory_mib: int = DEFAULT_MEMORY_MIB, log_path: str | None = None) -> None:
    """The workflow's job: grade `solutions` and write the verdicts to `out` (results/solutions.csv).

    Whatever the file does, the verdicts are written and the job succeeds: a bad
    solutions file never breaks the rest of the pipeline.
    """
    from sdpa_lab.io import write_csv
    from sdpa_lab.joblog import job_log

    with job_log("solutions", log_path) as logger:
        table = grade_rows(solutions, time_limit=time_limit, memory_mib=memory_mib)
        write_csv(table, out)
        verdicts = [f"{r['part']}: {r['verdict']}" for r in table if r["item"] in ("verdict", "load", "grader")]
        logger.info("solutions %s: %s; wrote %s", solutions, "; ".join(verdicts), out)
