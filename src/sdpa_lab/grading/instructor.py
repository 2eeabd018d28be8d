"""The class as the instructor needs it: every roster learner, names beside ids, overrides applied, help first.

`class_records` joins the grade records with the roster (a record for every roster learner: a
learner whose file was not graded gets sdpa_lab.grading.lms_import.absent_record, saying why) and
the overrides; `arrange` completes the overview (sdpa_lab.grading.gradebook.overview) with the
learners' names, the absent learners' rows, the files not graded and why, and the order: those
who need help first (a part that fails, a file that could not be graded, nothing handed in),
lowest score first, then the rest by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sdpa_lab.grading.lms_import import absent_record
from sdpa_lab.grading.overrides import with_overrides
from sdpa_lab.grading.roster import Roster


@dataclass
class ClassRecords:
    """The graded records (overrides applied), every roster learner's record by id (absent ones included), the
    roster's names by id, and the intake's files (sdpa_lab.grading.lms.Intake.as_params)."""

    graded: list[dict]
    everyone: dict[str, dict] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    files: list[dict] = field(default_factory=list)


def class_records(graded: list[dict], roster: Roster | None, overrides: Mapping[str, Mapping] | None,
                  intake: Mapping | None) -> ClassRecords:
    """The class's records with the roster and the overrides: see ClassRecords."""
    overrides = overrides or {}
    graded = [with_overrides(r, overrides) for r in graded]
    files = list((intake or {}).get("files", []))
    if roster is None:
        return ClassRecords(graded, {r["learner"]: r for r in graded}, {}, files)
    names = {learner.id: learner.name for learner in roster.learners}
    graded = [{**r, "name": names.get(r["learner"], "")} for r in graded]  # their page greets them by name
    by_id = {r["learner"]: r for r in graded}
    everyone = {}
    for learner in roster.learners:
        if learner.id in by_id:
            everyone[learner.id] = by_id[learner.id]
            continue
        theirs = [f for f in files if f["learner"] == learner.id]
        why = ("not graded: " + "; ".join(f"{f['file']}: {f['why']}" for f in theirs)) if theirs else \
            "missing: no submission"
        everyone[learner.id] = absent_record(learner.id, why, overrides.get(learner.id))
    return ClassRecords(graded, everyone, names, files)


def needs_help(row: Mapping) -> bool:
    """A learner row that asks for the instructor: a part fails, the file could not be graded, or none was."""
    return not row["all_pass"]


def arrange(o: dict, c: ClassRecords, absent_rows: list[dict]) -> dict:
    """The overview `o` with the absent learners' rows (`absent_rows`, learner_row of their records), names beside
    ids, those who need help first (lowest score first), then the rest by name; the files not graded listed."""
    rows = [*o["learners"], *absent_rows]
    for row in rows:
        row["name"] = c.names.get(row["learner"], "")

    def by_name(row):
        return ((row["name"] or row["learner"]).casefold(), row["learner"])

    helped = sorted((r for r in rows if needs_help(r)), key=lambda r: (r["total"], *by_name(r)))
    rest = sorted((r for r in rows if not needs_help(r)), key=by_name)
    not_graded = [f for f in c.files if not f["graded"]]
    missing = [r["learner"] for r in absent_rows if r["status"].startswith("missing")]
    return {**o, "learners": helped + rest, "not_graded": not_graded, "missing": missing,
            "roster": bool(c.names), "help": len(helped)}


def read_lms(settings: Mapping, table: Mapping[str, float], learners: list[str]):
    """(the roster or None, the overrides {} or read) from `settings` ("roster", "assignment", "overrides": paths
    or None), the overrides checked against the roster's ids, else against `learners`."""
    from sdpa_lab.grading.overrides import read_overrides
    from sdpa_lab.grading.roster import read_roster

    roster = read_roster(settings["roster"], settings.get("assignment")) if settings.get("roster") else None
    ids = [learner.id for learner in roster.learners] if roster is not None else learners
    overrides = read_overrides(settings["overrides"], ids, table) if settings.get("overrides") else {}
    return roster, overrides
