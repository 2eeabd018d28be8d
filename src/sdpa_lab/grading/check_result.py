"""What `check()` returns: a grade shown in a notebook (HTML) or a terminal (text), the verdict first.

One view of a grade (`lines`: the verdict, then one line per failing check, the learner's error,
the mistake and its fix, the lesson section to reread) drawn two ways, so the HTML and the text
always say the same. Points are the class's (sdpa_lab.grading.points, from the same grade record).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from sdpa_lab.grading.grade import Grade
from sdpa_lab.grading.lesson_words import TASKS
from sdpa_lab.grading.points import RUBRIC, score

SECTION = {t.part: f'"{t.section}"' for t in TASKS}  # a part's task in the lesson: where to reread it
UNUSABLE_WHY = {"missing": "it defines none of the functions the grader calls", "syntax": "a syntax error",
                "error": "an error while running it", "timeout": "a hang while running it",
                "memory": "a memory blow-up while running it", "died": "a crash while running it",
                "unusable": "a reply that breaks the grader's protocol"}
COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "lost": "#9a6700", "quiet": "#57606a", "": "inherit"}


def in_kernel_terms(text: str) -> str:
    """A place in the notebook of the cells that ran (`cell 3, In [7]`) as the learner sees it in Jupyter
    (`In [7]`): the numbers of its cells are not their notebook's."""
    return re.sub(r"cell \d+, (In \[\d+\])", r"\1", text)


@dataclass(frozen=True)
class Line:
    kind: str  # "verdict" (a head line), "check" (a failing check), "text", "code" (a traceback)
    text: str
    tone: str = ""  # pass, fail, lost, quiet (how the check ran, notes), or ""


def _points(g: Grade) -> dict:
    from sdpa_lab.grading.record import grade_record

    return score(grade_record(g, "you"), RUBRIC)


def part_lines(p, points: float, worth: float) -> list[Line]:
    """One part: its verdict and points, then what fails, the error, the mistakes with their fixes, what to
    reread (the mistakes' sections, else the task's), and the notes the verdict rests on."""
    import sdpa_lab.grading.mistakes as M

    tone = "pass" if p.passed else "lost" if p.lost is not None else "fail"
    out = [Line("verdict", f"{p.signature}: {p.verdict} ({points:g} of {worth:g} points)", tone)]
    if p.lost is not None:
        out.append(Line("text", p.lost.message))
    out += [Line("check", f"FAIL {c.claim + ' ' if c.claim else ''}{c.what}: {c.detail}", "fail")
            for c in p.checks if not c.passed]
    if p.error:
        out.append(Line("code", "your code raised an error " + p.error))
    out += [Line("text", d) for d in p.diagnosis]
    if not p.passed and p.lost is None:  # checks failed: the mistakes' sections, else the task's
        reread = list(dict.fromkeys(M.MISTAKES[k].reread for k in p.mistakes if k in M.MISTAKES)) or [SECTION[p.name]]
        said = "\n".join(p.diagnosis)
        if not all(r in said for r in reread):  # what the diagnosis does not already say
            out.append(Line("text", f"Reread in the lesson: {'; '.join(reread)}."))
    out += [Line("text", f"note: {n}", "quiet") for n in p.notes]
    return out


def summary(points: dict) -> Line:
    """The verdict on every part, as `sdpa-lab grade` says it (sdpa_lab.grading.points.score): how many pass,
    the points, and what to fix."""
    to_fix = ", ".join(points["to_fix"])
    return Line("verdict", points["line"] + (f"; to fix: {to_fix}" if to_fix else ""), "fail" if to_fix else "pass")


class CheckResult:
    """The grade of one part (or of all) of the learner's code, shown as the verdict first."""

    def __init__(self, grade: Grade | None, part: str | None, file: str, kernel: bool = False):
        self.grade, self.part, self.file, self.kernel = grade, part, file, kernel

    @classmethod
    def nothing(cls, part: str | None) -> CheckResult:
        """A check where there is no code to grade (a plain interactive Python, with no file)."""
        return cls(None, part, "")

    @property
    def verdicts(self) -> dict[str, str]:
        """{part: verdict} of the parts shown ({"file": "unusable"} where the code could not be used)."""
        g = self.grade
        if g is None or not g.usable:
            return {"file": "unusable"}
        return {p.name: p.verdict for p in g.parts if self.part in (None, p.name)}

    @property
    def passed(self) -> bool:
        return self.grade is not None and self.grade.usable and all(v == "pass" for v in self.verdicts.values())

    def lines(self) -> list[Line]:
        """What the check says, in order: the verdict first."""
        g = self.grade
        if g is None:
            return [Line("verdict", "nothing to check", "lost"), Line(
                "text", "check() grades the code of the notebook or the script it runs in, and this Python session "
                "has neither: save your functions in a file and run `sdpa-lab grade FILE` in a terminal.")]
        if not g.usable:
            why = UNUSABLE_WHY.get(g.load.status, g.load.status)
            return [Line("verdict", f"{self.file}: your code cannot be graded: {why}", "lost"),
                    Line("code" if g.load.status in ("error", "syntax") else "text", g.load.message),
                    *[Line("text", f"note: {n}", "quiet") for n in g.notes], self._how()]
        points = _points(g)
        shown = [p for p in g.parts if self.part in (None, p.name)]
        out = [] if self.part is not None else [summary(points), *[
            Line("text", f"note: {n}", "quiet") for n in g.notes]]
        for p in shown:
            out += part_lines(p, points["parts"][p.name], RUBRIC.get(p.name, 0.0))
        return out + [self._how()]

    def _how(self) -> Line:
        """How the check ran: its seed (to check again the same way), where and with what limits."""
        g = self.grade
        again = f"check({self.part!r}, seed={g.seed})" if self.part else f"check(seed={g.seed})"
        return Line("text", f"Inputs drawn from seed {g.seed}: {again} checks again the same way; your code ran in a "
                            f"{g.isolation}, each call limited to {g.time_limit:g} s and {g.memory_mib} MiB. For the "
                            f"whole file: save it, then `sdpa-lab grade {self.file}`.", "quiet")

    def _shown(self, text: str) -> str:
        return in_kernel_terms(text) if self.kernel else text

    def __str__(self) -> str:
        indent = {"verdict": "", "check": "    ", "text": "    ", "code": "    "}
        return "\n".join(indent[line.kind] + self._shown(line.text).replace("\n", "\n" + indent[line.kind] + "  ")
                         for line in self.lines())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = []
        for line in self.lines():
            text = html.escape(self._shown(line.text))
            colour = COLOURS[line.tone]
            if line.kind == "verdict":
                rows.append(f'<p style="margin:0.6em 0 0.2em"><strong style="color:{colour}">{text}</strong></p>')
            elif line.kind == "code":
                rows.append(f'<pre style="margin:0.2em 0 0.2em 1.5em">{text}</pre>')
            else:
                rows.append(f'<p style="margin:0.1em 0 0.1em 1.5em;color:{colour}">{text}</p>')
        return '<div class="sdpa-lab-check">' + "\n".join(rows) + "</div>"

