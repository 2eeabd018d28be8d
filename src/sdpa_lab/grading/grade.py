"""Grade a solutions file: load it in its own process, check every function and exercise, format the verdicts."""

from __future__ import annotations

import os
import re
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from sdpa_lab.grading import checks, limits, machine
from sdpa_lab.grading.files import read_bytes
from sdpa_lab.grading.limits import UNUSABLE
from sdpa_lab.grading.modules import COURSE_MODULES
from sdpa_lab.grading.runner import Calls, LearnerProcess, Outcome
from sdpa_lab.grading.source import prepare

# One set of limits for every grade, self-graded or in a class (sdpa_lab.grading.limits says why).
DEFAULT_TIME_LIMIT = limits.TIME_LIMIT
DEFAULT_MEMORY_MIB = limits.MEMORY_MIB

PASS, FAIL = 0, 1  # exit statuses, with UNUSABLE (sdpa_lab.grading.limits)
ISOLATIONS = ("auto", "sandbox", "none")  # sandbox where it starts / only in a sandbox / a plain process

GRADERS = (
    ("softmax", checks.grade_softmax),
    ("scaled_dot_product_attention", checks.grade_attention),
    ("exercise_1", checks.grade_exercise_1),
    ("exercise_2", checks.grade_exercise_2),
    ("exercise_3", checks.grade_exercise_3),
)


class SandboxUnavailable(RuntimeError):
    """A grade that must be sandboxed where no sandbox starts; the message is one line saying why."""


@dataclass
class Grade:
    """The verdicts on one solutions file, and how they were reached (the seed reproduces them)."""

    path: Path
    load: Outcome
    parts: list
    time_limit: float
    memory_mib: int
    seed: int = 0
    isolation: str = ""  # "bubblewrap sandbox" or "plain process"
    peak_mib: float = 0.0  # the most memory its processes used together (sandbox only, else 0)
    seconds: float = 0.0
    learner_cpu_seconds: float = 0.0  # the CPU its processes used together (sandbox only, else 0)
    notes: list = field(default_factory=list)  # about the file as a whole: what of it did not run, and why

    @property
    def usable(self) -> bool:
        return self.load.status == "ready" and bool(self.load.functions)

    @property
    def forged(self) -> list:
        """The parts whose replies broke the grader's protocol."""
        return [p for p in self.parts if p.lost is not None and p.lost.status == "unusable"]

    @property
    def ungraded(self) -> list:
        """The parts the machine left ungraded (its load or its memory; sdpa_lab.grading.machine): not fails."""
        return [p for p in self.parts if p.lost is not None and p.lost.status == "loaded"]

    @property
    def exit_status(self) -> int:
        if not self.usable or self.forged or self.ungraded:
            return UNUSABLE
        return PASS if all(p.passed for p in self.parts) else FAIL


def resolve_isolation(isolation: str):
    """The Sandbox class to use, or None for a plain process; SandboxUnavailable where one is required."""
    from sdpa_lab.grading import sandbox

    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {isolation!r}")
    if isolation == "none":
        return None
    why = sandbox.unavailable()
    if why is None:
        return sandbox.Sandbox
    if isolation == "sandbox":
        raise SandboxUnavailable(f"cannot grade in a sandbox: {why}")
    return None


def grade(path: str | os.PathLike, time_limit: float = DEFAULT_TIME_LIMIT, memory_mib: int = DEFAULT_MEMORY_MIB,
          n_samples: int | None = limits.N_SAMPLES, seed: int | None = None, isolation: str = "auto",
          helpers: bool = True, follow_links: bool = True, modules: tuple[str, ...] = COURSE_MODULES) -> Grade:
    """Run every check on the solutions file at `path` (its code runs in a separate, limited process).

    n_samples: the pairs Exercise 1 is asked to draw at its two calls; None: limits.QUICK_N_SAMPLES
    (checks.grade_exercise_1).
    seed: the grade's inputs (None: a fresh one, recorded in the Grade). isolation: "auto" (a
    bubblewrap sandbox where one starts, else a plain process), "sandbox" (SandboxUnavailable
    where none starts) or "none". helpers: the file's folder is importable (self-grading; a
    class's submissions do not see each other). follow_links: the file may be a symbolic link (your own
    file, self-grading); False (a class): a link is not read. modules: what the file may import (the
    course's list, config `grading_modules`). What of the file runs: sdpa_lab.grading.source.
    """
    box_class = resolve_isolation(isolation)
    path = Path(path)
    seed = checks.fresh_seed() if seed is None else int(seed)
    how = "bubblewrap sandbox" if box_class is not None else "plain process"
    start = time.monotonic()
    notes = []

    def done(load, parts, box=None) -> Grade:
        peak = box.cgroup.peak_bytes() / 2**20 if box is not None else 0.0
        cpu = box.cgroup.cpu_seconds() if box is not None else 0.0
        return Grade(path, load, parts, time_limit, memory_mib, seed, how, peak, time.monotonic() - start, cpu, notes)

    if not (path.is_file() if follow_links else path.is_symlink() or path.exists()):  # read_bytes refuses
        return done(Outcome("missing", message=f"{path}: no such file"), [])
    try:
        prepared = prepare(path, modules, data=read_bytes(path, follow_links))
    except (ValueError, OSError) as exc:
        return done(Outcome("error", message=str(exc)), [])
    notes += prepared.notes
    draw = checks.Draw(seed, n_samples)
    box = box_class(memory_mib, modules) if box_class is not None else None
    try:
        with LearnerProcess(path.name, prepared.source, time_limit, memory_mib, box,
                            helpers=path.parent if helpers else None, modules=modules,
                            relocate=prepared.relocate) as process:
            load = process.start()
            for _ in range(machine.RETRIES):  # lost to the machine (machine.py): started again
                if load.status != "loaded":
                    break
                load = process.start()
            if load.status != "ready":
                return done(load, [], box)
            if not load.functions:
                missing = ", ".join(name for name, _ in GRADERS)
                load = Outcome("syntax", message=prepared.stop) if prepared.stop else Outcome(
                    "missing", message=f"{path.name} defines none of the functions to grade ({missing})")
                return done(load, [], box)
            if prepared.stop:
                notes.append(f"Your file stops at {prepared.stop.splitlines()[0]}: as with Jupyter's Run All, the "
                             "code before it is graded, and none after it")
            if load.message:
                notes.append(f"Your file stopped with an error: {_last_line(load.message)}; as with Jupyter's Run "
                             "All, the functions defined before it are graded, and none after it")
            parts = [grader(Calls(process, name), draw) for name, grader in GRADERS]
        return done(load, parts, box)
    finally:
        if box is not None:
            box.close()


def _last_line(traceback: str) -> str:
    """A traceback's error and the last place it names (the learner's cell and line)."""
    lines = [line.strip() for line in traceback.strip().splitlines() if line.strip()]
    places = [m for line in lines if (m := re.match(r'File "([^"]+)", line (\d+)', line))]
    return (lines[-1] if lines else "an error") + (f" ({places[-1][1]}, line {places[-1][2]})" if places else "")


def _wrap(text: str, indent: str) -> str:
    return "\n".join(textwrap.fill(line, 110, initial_indent=indent, subsequent_indent=indent + "  ")
                     for line in text.splitlines())


def format_grade(g: Grade) -> str:
    """The verdicts as the terminal shows them."""
    if g.isolation == "bubblewrap sandbox":
        where = (f"a bubblewrap sandbox (no network, nothing of the project); each call limited to {g.time_limit:g} s, "
                 f"all its processes together to {g.memory_mib} MiB")
    else:
        where = (f"a separate process, not sandboxed; each call limited to {g.time_limit:g} s and "
                 f"{g.memory_mib} MiB")
    head = f"Grading {g.path} (its code runs in {where}; inputs drawn from seed {g.seed}: --seed {g.seed} grades it " \
           "again the same way)"
    if not g.usable:
        what = {"syntax": "a syntax error", "error": "an error while importing it",
                "timeout": "a hang while importing it", "memory": "a memory blow-up while importing it",
                "died": "a crash while importing it",
                "unusable": "a reply that breaks the grader's protocol"}.get(g.load.status, "")
        lines = [head, "", f"The file cannot be used{': ' + what if what else ''}.", _wrap(g.load.message, "    ")]
        return "\n".join(lines + [_wrap(f"note: {note}", "    ") for note in g.notes])
    lines = [head, ""]
    for note in g.notes:
        lines += [_wrap(f"note: {note}", ""), ""]
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
    out = [{"part": "file", "item": "note", "claim": "", "verdict": "", "detail": n} for n in g.notes]
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
                  memory_mib: int = DEFAULT_MEMORY_MIB, log_path: str | None = None, seed: int | None = None,
                  n_samples: int | None = limits.N_SAMPLES, modules: tuple[str, ...] = COURSE_MODULES) -> None:
    """The workflow's job: grade `solutions` and write the verdicts to `out` (results/solutions.csv), with the
    class's settings (seed, limits, modules): a file graded here and in a class gets one grade.

    Whatever the file does, the verdicts are written and the job succeeds: a bad
    solutions file never breaks the rest of the pipeline.
    """
    from sdpa_lab.io import write_csv
    from sdpa_lab.joblog import job_log

    with job_log("solutions", log_path) as logger:
        table = grade_rows(solutions, time_limit=time_limit, memory_mib=memory_mib, seed=seed, n_samples=n_samples,
                           modules=tuple(modules))
        write_csv(table, out)
        verdicts = [f"{r['part']}: {r['verdict']}" for r in table if r["item"] in ("verdict", "load", "grader")]
        logger.info("solutions %s: %s; wrote %s", solutions, "; ".join(verdicts), out)
