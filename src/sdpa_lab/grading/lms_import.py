"""results/class/lms_import.csv: the class's scores in the roster's own format, one row per roster learner.

- **Canvas** (Grades, Import): the five identity columns copied from the export, the
  assignment's column with each total, and the "Points Possible" row first (the rubric's
  total under the assignment); Canvas finds each learner by `ID` and ignores the read-only
  row. A column matching no assignment of the course becomes a new assignment on import.
- **Moodle** (the assignment's "Upload grading worksheet"): the worksheet as downloaded,
  every column and row kept, `Grade` filled in; Moodle finds each learner by `Identifier`.
- **plain**: the roster's columns and `total`.

A learner with no graded file scores 0 (their parts' overrides, if any, counted); otherwise
the same total as the gradebook. Written through sdpa_lab.grading.spreadsheet (formula-safe).
"""

from __future__ import annotations

from collections.abc import Mapping

from sdpa_lab.grading.points import score
from sdpa_lab.grading.roster import CANVAS_IDENTITY, POINTS_POSSIBLE, Roster


def import_columns(roster: Roster) -> list[str]:
    """The import's header: Canvas's identity columns and the assignment's; Moodle's worksheet as it is; a plain
    roster's columns and `total`."""
    if roster.format == "canvas":
        return [c for c in roster.columns if c in CANVAS_IDENTITY] + [roster.grade_column]
    if roster.format == "moodle":
        return list(roster.columns)
    return [c for c in roster.columns if c != "total"] + ["total"]


def absent_record(learner: str, why: str = "missing: no submission", overrides: Mapping | None = None) -> dict:
    """The record of a learner whose file was not graded: every part 0 (or overridden), with why."""
    record = {"learner": learner, "file": "", "exit_status": 2, "parts": [], "passed": 0, "unusable": why,
              "usable": False, "absent": True}
    return {**record, "overrides": dict(overrides)} if overrides else record


def import_rows(roster: Roster, records: Mapping[str, dict], table: Mapping[str, float]) -> list[dict]:
    """The import's rows (columns: import_columns) from every roster learner's record (absent_record for one whose
    file was not graded), the Canvas Points Possible row first."""
    columns = import_columns(roster)
    rows = []
    if roster.format == "canvas":
        given = roster.points_row or {"Student": f"    {POINTS_POSSIBLE}"}
        rows.append({c: given.get(c, "") for c in columns[:-1]} | {roster.grade_column: round(sum(table.values()), 2)})
    for learner in roster.learners:
        row = {c: learner.row.get(c, "") for c in columns}
        row[roster.grade_column] = score(records[learner.id], table)["total"]
        rows.append({c: row[c] for c in columns})
    return rows
