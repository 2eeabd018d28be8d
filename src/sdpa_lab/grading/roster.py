"""A class's roster (config `roster`): who is in the class, as the LMS knows them, read from the LMS's own export.

Three formats, told apart by their header (anything else is refused in one line):

- **Canvas**, its gradebook export (Grades, Export): the identity columns `Student`, `ID`,
  `SIS User ID`, `SIS Login ID`, `Section`, then one column per assignment named `Name (id)`
  and read-only totals; a second row whose Student cell is "Points Possible" (after spaces)
  gives each assignment's points. A learner is known by `ID`, Canvas's user id, the number
  "Download Submissions" puts in every file's name.
- **Moodle**, an assignment's grading worksheet ("Download grading worksheet"): `Identifier`
  ("Participant N"), `Full name`, ..., `Status`, `Grade`, `Maximum Grade`, `Grade can be
  changed`, ... A learner is known by N, the participant id of "Download all submissions"'
  folder names.
- **plain**: a CSV with the columns `id` and `name` (more are kept), for a class collected
  without an LMS: files are named by the id.

Parse-time light (the Snakefile reads the roster before any job): csv only.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sdpa_lab.grading.files import read_bytes

SETTING = "roster"
MAX_BYTES = 20 * 2**20  # a roster of thousands of learners is well under this; a larger file is no roster
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_ASSIGNMENT = re.compile(r"^(?P<name>.+) \((?P<id>\d+)\)$")  # "Homework 2 (4821)"
POINTS_POSSIBLE = "Points Possible"
MOODLE_REQUIRED = ("Identifier", "Full name", "Status", "Grade", "Maximum Grade")
MOODLE_PARTICIPANT = re.compile(r"^\S+ (\d+)$")  # "Participant 1032" (the word is translated with the site)
PLAIN_REQUIRED = ("id", "name")
PLAIN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")  # a plain id names a page: safe in a path and a URL


class RosterError(ValueError):
    """A roster that cannot be used; the message is one line naming the setting."""


@dataclass(frozen=True)
class Learner:
    """One learner of the roster: `id` (what the LMS's file names carry), `name` (as the roster writes it), `row`
    (the roster's row as read, every column)."""

    id: str
    name: str
    row: dict = field(repr=False)


@dataclass(frozen=True)
class Roster:
    """A roster as read: its format ("canvas", "moodle" or "plain"), its columns in order, its learners in order,
    the Canvas "Points Possible" row (else None), and the column the score goes in."""

    path: str
    format: str
    columns: list[str]
    learners: list[Learner]
    points_row: dict | None
    grade_column: str

    def by_id(self) -> dict[str, Learner]:
        return {learner.id: learner for learner in self.learners}


def _fail(path, why: str) -> RosterError:
    return RosterError(f"{SETTING} {path}: {why}")


def read_rows(path: str | os.PathLike) -> tuple[list[str], list[dict]]:
    """A CSV's header and rows as text (a UTF-8 byte-order mark dropped, as Excel and Moodle write one); RosterError
    for a file that is too large, not UTF-8, or no CSV."""
    try:
        if os.stat(path).st_size > MAX_BYTES:
            raise _fail(path, f"more than a roster's {MAX_BYTES} bytes")
        raw = read_bytes(path, follow_links=True)
    except RosterError:
        raise
    except (OSError, ValueError) as exc:
        raise _fail(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if len(raw) > MAX_BYTES:
        raise _fail(path, f"{len(raw)} bytes, more than a roster's {MAX_BYTES}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(path, f"not UTF-8 text (byte {exc.start}): export it again as CSV (UTF-8)") from None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), restval="")
        header = [c.strip() for c in (reader.fieldnames or [])]
        rows = [{k.strip(): (v if isinstance(v, str) else "") for k, v in row.items() if k is not None}
                for row in reader]
    except csv.Error as exc:
        raise _fail(path, f"not a CSV ({exc})") from None
    if len(set(header)) != len(header):
        raise _fail(path, "two columns have the same name")
    return header, rows


def roster_format(header: list[str]) -> str:
    """"canvas", "moodle" or "plain" from a roster's header; "" for none of them."""
    if header[:1] == ["Student"] and set(CANVAS_IDENTITY) <= set(header):
        return "canvas"
    if header[:1] == ["Identifier"] and set(MOODLE_REQUIRED) <= set(header):
        return "moodle"
    if set(PLAIN_REQUIRED) <= {c.lower() for c in header}:
        return "plain"
    return ""


def read_roster(path: str | os.PathLike, assignment: str | None = None) -> Roster:
    """The roster in `path` (RosterError, one line, for a file that is none of the three formats, a learner
    without an id, two learners with one id, or an assignment column that cannot be told)."""
    header, rows = read_rows(path)
    kind = roster_format(header)
    if not kind:
        raise _fail(path, f"its header ({', '.join(header[:6]) or 'empty'}{', ...' if len(header) > 6 else ''}) is "
                          "none of a Canvas gradebook export (Student, ID, SIS User ID, SIS Login ID, Section, ...), a "
                          "Moodle grading worksheet (Identifier, Full name, ..., Status, Grade, Maximum Grade, ...) or "
                          "a plain CSV (id, name)")
    read = {"canvas": _canvas, "moodle": _moodle, "plain": _plain}[kind]
    learners, points_row, grade_column = read(path, header, rows, assignment)
    if not learners:
        raise _fail(path, "it names no learner")
    seen: dict[str, int] = {}
    for i, learner in enumerate(learners):
        if not learner.id:
            raise _fail(path, f"learner {learner.name or i + 1!r} has no id")
        folded = learner.id.casefold()  # two ids that differ by case would share a page on a case-insensitive disk
        if folded in seen:
            raise _fail(path, f"two learners have the id {learner.id!r}")
        seen[folded] = i
    return Roster(str(path), kind, header, learners, points_row, grade_column)


def canvas_assignments(header: list[str]) -> list[str]:
    """The assignment columns of a Canvas export ("Name (id)"), in order."""
    return [c for c in header if c not in CANVAS_IDENTITY and CANVAS_ASSIGNMENT.match(c)]


def _canvas(path, header, rows, assignment):
    is_points = [r.get("Student", "").strip() == POINTS_POSSIBLE for r in rows]
    points_row = next((r for r, p in zip(rows, is_points, strict=True) if p), None)
    # Rows above the first student without an ID (Points Possible, a posting-policy row) describe the columns.
    learners = [Learner(r["ID"].strip(), r["Student"].strip(), r) for r, p in zip(rows, is_points, strict=True)
                if not p and r.get("ID", "").strip()]
    return learners, points_row, _canvas_column(path, header, assignment)


def _canvas_column(path, header, assignment) -> str:
    """The column the score goes in: the one `grading_assignment` names (its whole header, or its name without the
    id), else the export's only assignment; a name matching none is a new assignment Canvas creates on import."""
    found = canvas_assignments(header)
    if assignment:
        named = [c for c in found if assignment in (c, CANVAS_ASSIGNMENT.match(c)["name"])]
        if len(named) > 1:
            raise RosterError(f"grading_assignment: {assignment!r} names {len(named)} columns of {path}: give the "
                              "whole header, with the id in brackets")
        return named[0] if named else assignment
    if len(found) == 1:
        return found[0]
    listed = "; ".join(found[:5]) + ("; ..." if len(found) > 5 else "")
    raise RosterError(f"grading_assignment: {path} has {len(found)} assignment columns"
                      f"{' (' + listed + ')' if found else ''}: set grading_assignment to the one the score goes in")


def _moodle(path, header, rows, assignment):
    learners = []
    for r in rows:
        m = MOODLE_PARTICIPANT.match(r["Identifier"].strip())
        if m is None:
            raise _fail(path, f"Identifier {r['Identifier']!r} is not 'Participant N' as Moodle writes it")
        learners.append(Learner(m[1], r["Full name"].strip(), r))
    return learners, None, "Grade"


def _plain(path, header, rows, assignment):
    lower = {c.lower(): c for c in header}
    learners = [Learner(r[lower["id"]].strip(), r[lower["name"]].strip(), r) for r in rows]
    for learner in learners:
        if learner.id and not PLAIN_ID.match(learner.id):
            raise _fail(path, f"id {learner.id!r}: an id is ASCII letters, digits, '_', '-' and '.' (it names the "
                              "learner's page and files)")
    return learners, None, "total"


def assignment_points(roster: Roster) -> float | None:
    """What the LMS says the assignment is worth, when it says so (Canvas's Points Possible, Moodle's Maximum Grade,
    the same on every row), else None."""
    if roster.format == "canvas" and roster.points_row is not None:
        return _number(roster.points_row.get(roster.grade_column, ""))
    if roster.format == "moodle":
        values = {_number(learner.row.get("Maximum Grade", "")) for learner in roster.learners}
        return values.pop() if len(values) == 1 else None
    return None


def _number(text: str) -> float | None:
    """A number as an LMS writes it: "10.00", "1,000.00", or with a decimal comma ("10,00", a site's locale)."""
    text = text.strip()
    text = text.replace(",", ".") if "," in text and "." not in text and text.count(",") == 1 else \
        text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def roster_problem(roster: Roster, max_points: float) -> str:
    """Why the rubric cannot fill this roster's assignment ("" if it can): the LMS's points for it differ from the
    rubric's total, so a score would land on the wrong scale."""
    worth = assignment_points(roster)
    if worth is None or abs(worth - max_points) < 0.005:
        return ""
    where = "Points Possible" if roster.format == "canvas" else "Maximum Grade"
    return (f"grading_points: the rubric totals {max_points:g} points, but {Path(roster.path).name} says the "
            f"assignment is worth {worth:g} ({where}): make them agree (grading_points, or the assignment's points "
            "in the LMS)")
