"""Grade a solutions file: load it in its own process, check every function and exercise, format the verdicts."""

from __future__ import annotations

import os
import re
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import sdpa_lab.grading.checks as checks
import sdpa_lab.grading.limits as limits
import sdpa_lab.grading.machine as machine
from sdpa_lab.grading.assignment import none_defined, not_defined
from sdpa_lab.grading.files import read_bytes
from sdpa_lab.grading.learner_text import shown
from sdpa_lab.grading.limits import UNUSABLE
from sdpa_lab.grading.modules import COURSE_MODULES
from sdpa_lab.grading.points import RUBRIC, rubric, score
from sdpa_lab.grading.record import grade_record
from sdpa_lab.grading.runner import Calls, LearnerProcess, Outcome
from sdpa_lab.grading.source import prepare
from sdpa_lab.numbers import num
from sdpa_lab.terminal import columns, wrap

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
# The parts whose lesson code calls the file's softmax, graded again with a correct one where both fail, so that a
# softmax's mistake is charged once (the forward does it probe by probe: check_attention).
CALL_SOFTMAX = ("exercise_2", "exercise_3")


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
    written_mib: float = 0.0  # the most its writable places (tmpfs) held at the end of a call (sandbox only, else 0)

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
    import sdpa_lab.grading.sandbox as sandbox

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
        written = box.most_written / 2**20 if box is not None else 0.0
        return Grade(path, load, parts, time_limit, memory_mib, seed, how, peak, time.monotonic() - start, cpu, notes,
                     written)

    if not (path.is_file() if follow_links else path.is_symlink() or path.exists()):  # read_bytes refuses
        return done(Outcome("missing", message=f"{shown(str(path), one_line=True)}: no such file"), [])
    try:
        prepared = prepare(path, modules, data=read_bytes(path, follow_links))
    except (ValueError, OSError) as exc:
        return done(Outcome("error", message=str(exc)), [])
    notes += prepared.notes
    draw = checks.Draw(seed, n_samples)
    box = box_class(memory_mib, modules) if box_class is not None else None
    try:
        with LearnerProcess(prepared.name, prepared.source, time_limit, memory_mib, box,
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
                load = Outcome("syntax", message=prepared.stop) if prepared.stop else Outcome(
                    "missing", message=none_defined(prepared.name))
                return done(load, [], box)
            if prepared.stop:
                notes.append(f"Your file stops at {prepared.stop.splitlines()[0]}: as with Jupyter's Run All, the "
                             "code before it is graded, and none after it")
            if load.message:
                notes.append(f"Your file stopped with an error: {_last_line(load.message)}; as with Jupyter's Run "
                             "All, the functions defined before it are graded, and none after it")
            parts = [grader(Calls(process, name), draw) for name, grader in GRADERS]
            parts = [_charged_once(process, name, grader, draw, part, parts[0]) for (name, grader), part
                     in zip(GRADERS, parts, strict=True)]
            for p in parts:  # a function the file lacks: the one the grader calls, and where to start
                if p.lost is not None and p.lost.status == "missing":
                    p.lost = Outcome("missing", message=not_defined(p.name))
        return done(load, parts, box)
    finally:
        if box is not None:
            box.close()


class _WithCorrectSoftmax(Calls):
    """Calls of one function with a correct softmax in place of the file's (runner.REFERENCE_SOFTMAX)."""

    def __call__(self, *args, **kwargs) -> Outcome:
        return super().__call__(*args, reference_softmax=True, **kwargs)


def _charged_once(process, name: str, grader, draw, part, softmax) -> object:
    """`part`, or where it and the softmax fail, the part graded again with a correct softmax in place of the
    file's, when that changes its verdicts: a part that fails only through the softmax passes, with a note, and
    one that fails on its own is blamed for that alone."""
    if name not in CALL_SOFTMAX or softmax.passed or part.passed or part.lost is not None:
        return part
    again = grader(_WithCorrectSoftmax(process, name), draw)
    if again.lost is not None or [c.passed for c in again.checks] == [c.passed for c in part.checks]:
        return part  # the softmax is not what it fails on
    again.notes.insert(0, checks.softmax_note(name, [c.what for c in part.checks if not c.passed], again.passed))
    return again


def _last_line(traceback: str) -> str:
    """A traceback's error and the last place it names (the learner's cell and line)."""
    lines = [line.strip() for line in traceback.strip().splitlines() if line.strip()]
    places = [m for line in lines if (m := re.match(r'File "([^"]+)", line (\d+)', line))]
    return (lines[-1] if lines else "an error") + (f" ({places[-1][1]}, line {places[-1][2]})" if places else "")


def _wrap(text: str, indent: str) -> str:
    return "\n".join("\n".join(wrap(line, columns(), indent)) for line in text.splitlines())


def grade_score(g: Grade, table=RUBRIC) -> dict:
    """The grade's parts passed and points (points.score on its record: one count, whoever shows it)."""
    return score(grade_record(g, g.path.stem), table)


def format_grade(g: Grade, table=RUBRIC) -> str:
    """The verdicts as the terminal shows them, with the points of the rubric `table`."""
    s = grade_score(g, table)
    if g.isolation == "bubblewrap sandbox":
        where = (f"a bubblewrap sandbox (no network, nothing of the project); each call limited to {g.time_limit:g} s, "
                 f"all its processes together to {g.memory_mib} MiB")
    else:
        where = (f"a separate process, not sandboxed; each call limited to {g.time_limit:g} s and "
                 f"{g.memory_mib} MiB")
    head = f"Grading {shown(str(g.path), one_line=True)} (its code runs in {where}; inputs drawn from seed " \
           f"{g.seed}: --seed {g.seed} grades it again the same way)"
    if not g.usable:
        what = {"syntax": "a syntax error", "error": "an error while importing it",
                "timeout": "a hang while importing it", "memory": "a memory blow-up while importing it",
                "died": "a crash while importing it",
                "unusable": "a reply that breaks the grader's protocol"}.get(g.load.status, "")
        lines = [head, "", f"The file cannot be used{': ' + what if what else ''}.", _wrap(g.load.message, "    ")]
        return "\n".join(lines + [_wrap(f"note: {note}", "    ") for note in g.notes] + ["", s["line"]])
    lines = [head, ""]
    for note in g.notes:
        lines += [_wrap(f"note: {note}", ""), ""]
    width = max(len(p.signature) for p in g.parts) + 2
    for p in g.parts:
        lines.append(f"{p.signature:<{width}}{p.verdict}, {_points(s, table, p.name)}")
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
    lines.append(s["line"] + (f"; to fix: {', '.join(s['to_fix'])}" if s["to_fix"] else ""))
    return "\n".join(lines)


def _points(s: dict, table, part: str) -> str:
    return f"{num(s['parts'][part])} of {num(table[part])} points"


# -- results/solutions.csv ----------------------------------------------------------

COLUMNS = ("part", "item", "claim", "verdict", "points", "max_points", "detail")
TOTAL = "total"  # the part and item of results/solutions.csv's last row: the parts passed and the points


def rows(g: Grade, table=RUBRIC) -> list[dict]:
    """The verdicts as table rows (results/solutions.csv): per part its verdict (with its points of the rubric
    `table`), then its checks, notes, the learner's error and the diagnosis; a file that cannot be used is one
    row; last, the total: the parts that pass and the points (grade_score, as `sdpa-lab grade` says them)."""
    s = grade_score(g, table)
    total = {"part": TOTAL, "item": TOTAL, "claim": "", "verdict": s["verdict"], "points": s["total"],
             "max_points": s["max"], "detail": s["line"]}
    if not g.usable:
        out = [{"part": "file", "item": "load", "claim": "", "verdict": "unusable", "detail": g.load.message}]
        return [{c: row.get(c, "") for c in COLUMNS} for row in [*out, total]]
    out = [{"part": "file", "item": "note", "claim": "", "verdict": "", "detail": n} for n in g.notes]
    for p in g.parts:
        out.append({"part": p.name, "item": "verdict", "claim": "", "verdict": p.verdict,
                    "points": s["parts"][p.name], "max_points": table[p.name],
                    "detail": p.lost.message if p.lost is not None else ";".join(p.mistakes)})
        out += [{"part": p.name, "item": c.what, "claim": c.claim, "verdict": "ok" if c.passed else "FAIL",
                 "detail": c.detail} for c in p.checks]
        out += [{"part": p.name, "item": "note", "claim": "", "verdict": "", "detail": n} for n in p.notes]
        if p.error:
            out.append({"part": p.name, "item": "error", "claim": "", "verdict": "", "detail": p.error})
        out += [{"part": p.name, "item": "diagnosis", "claim": "", "verdict": "", "detail": d} for d in p.diagnosis]
    return [{c: row.get(c, "") for c in COLUMNS} for row in [*out, total]]


def grade_rows(path: str | os.PathLike, table=RUBRIC, **limits) -> list[dict]:
    """rows(grade(path, **limits), table), and never raises: a failure of the grader itself is a row too."""
    try:
        return rows(grade(path, **limits), table)
    except Exception as exc:  # noqa: BLE001 - recorded, so a bad solutions file never breaks a pipeline
        return [{"part": "file", "item": "grader", "claim": "", "verdict": "unusable", "points": "", "max_points": "",
                 "detail": f"the grader could not run: {type(exc).__name__}: {exc}"}]


def solutions_job(solutions: str | os.PathLike, out: str | os.PathLike, time_limit: float = DEFAULT_TIME_LIMIT,
                  memory_mib: int = DEFAULT_MEMORY_MIB, log_path: str | None = None, seed: int | None = None,
                  n_samples: int | None = limits.N_SAMPLES, modules: tuple[str, ...] = COURSE_MODULES,
                  points: dict | None = None) -> None:
    """The workflow's job: grade `solutions` and write the verdicts to `out` (results/solutions.csv), with the
    class's settings (seed, limits, modules, the rubric of config `grading_points`): a file graded here and in a
    class gets one grade and the same points.

    Whatever the file does, the verdicts are written and the job succeeds: a bad
    solutions file never breaks the rest of the pipeline.
    """
    from sdpa_lab.io import write_csv
    from sdpa_lab.joblog import job_log

    with job_log("solutions", log_path) as logger:
        table = grade_rows(solutions, rubric(points), time_limit=time_limit, memory_mib=memory_mib, seed=seed,
                           n_samples=n_samples, modules=tuple(modules))
        write_csv(table, out)
        verdicts = [f"{r['part']}: {r['verdict']}" for r in table if r["item"] in ("verdict", "load", "grader", TOTAL)]
        logger.info("solutions %s: %s; wrote %s", solutions, "; ".join(verdicts), out)
