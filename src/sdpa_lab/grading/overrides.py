"""An instructor's overrides (config `grading_overrides`): one part's points set by hand, with a comment.

A CSV with the columns `learner`, `part`, `points`, `comment` (the comment may be empty): the
learner's id (the roster's, else the class's learner id), a part of the rubric, points from 0 to
what the part is worth. As in nbgrader's formgrader, a hand-given score takes precedence over the
grader's and survives every regrade: the overrides live in their own file, never in a grade
record, and are applied wherever points are read (sdpa_lab.grading.points.score), so the
gradebook, the LMS's import and the learner's page agree, the comment shown as the instructor's.
A reference to a learner or part that does not exist is refused, in one line, before any job.
Parse-time light.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping

from sdpa_lab.grading.roster import RosterError, read_rows

SETTING = "grading_overrides"
COLUMNS = ("learner", "part", "points", "comment")


class OverridesError(ValueError):
    """Overrides that cannot be applied; the message is one line naming the setting."""


def read_overrides(path: str | os.PathLike, learners: Collection[str],
                   table: Mapping[str, float]) -> dict[str, dict[str, dict]]:
    """{learner: {part: {"points", "comment"}}} from the CSV in `path`, each reference checked against `learners`
    and the rubric `table` (OverridesError, one line naming the file's line, otherwise)."""
    try:
        header, rows = read_rows(path)
    except RosterError as exc:
        raise OverridesError(str(exc).replace("roster", SETTING, 1)) from None
    if [c.lower() for c in header[:3]] != list(COLUMNS[:3]) or not set(header) <= set(COLUMNS):
        raise OverridesError(f"{SETTING} {path}: its header must be {', '.join(COLUMNS)} (comment may be left out), "
                             f"not {', '.join(header) or 'empty'}")
    out: dict[str, dict[str, dict]] = {}
    for line, row in enumerate(rows, start=2):
        where = f"{SETTING} {path} line {line}"
        learner, part = row["learner"].strip(), row["part"].strip()
        if learner not in learners:
            raise OverridesError(f"{where}: learner {learner!r} is not in the class")
        if part not in table:
            raise OverridesError(f"{where}: part {part!r} is none of {', '.join(table)}")
        points = _points(row["points"], table[part], where)
        if part in out.get(learner, {}):
            raise OverridesError(f"{where}: {learner}'s {part} is overridden twice")
        out.setdefault(learner, {})[part] = {"points": points, "comment": row.get("comment", "").strip()}
    return out


def _points(text: str, worth: float, where: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise OverridesError(f"{where}: points {text!r} is not a number") from None
    if not math.isfinite(value) or not 0 <= value <= worth:
        raise OverridesError(f"{where}: points {text.strip()} outside 0 to {worth:g}, what the part is worth")
    return round(value, 2)


def with_overrides(record: dict, overrides: Mapping[str, Mapping[str, dict]]) -> dict:
    """The grade record with its learner's overrides under "overrides" (a copy; the record itself untouched)."""
    mine = overrides.get(record["learner"])
    return {**record, "overrides": dict(mine)} if mine else record
