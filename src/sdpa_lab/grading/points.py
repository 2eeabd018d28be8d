"""Points: the rubric of a class's grades, and each learner's score from their grade record.

The rubric is one table, `RUBRIC` (points per function and exercise), which config
`grading_points` may override part by part (numbers only, bounds in the config schema).
A part's points split evenly over the distinct statements its checks decide: a claim of
the lesson (every check tied to that claim id together, e.g. B9), or, for a check tied to
no claim, that check itself (e.g. "agrees with the reference softmax"). A statement earns
its share when all its checks pass. A part that stopped (a hang, a memory blow-up, a crash,
a function not written) earns 0, its checks being incomplete; a file that could not be
used ("unusable") scores 0 in every part, with its reason. Points are rounded to 2
decimals per part and the total is the sum of the rounded parts, so a spreadsheet's sum
of the part columns equals the total column.

Parse-time light (the workflow checks the rubric before any job): no NumPy.
"""

from __future__ import annotations

from collections.abc import Mapping

from sdpa_lab.grading.limits import UNUSABLE
from sdpa_lab.numbers import num

# The rubric: points per part, in the order the grader checks them (sdpa_lab.grading.grade.GRADERS).
# Each part counts the same by default: the lesson asks for each of them.
RUBRIC: dict[str, float] = {
    "softmax": 2.0,
    "scaled_dot_product_attention": 2.0,
    "exercise_1": 2.0,
    "exercise_2": 2.0,
    "exercise_3": 2.0,
}
SETTING = "grading_points"  # the config setting that overrides RUBRIC


class RubricError(ValueError):
    """A rubric that cannot grade; the message is one line naming the setting."""


def rubric(overrides: Mapping[str, float] | None = None) -> dict[str, float]:
    """RUBRIC with config `grading_points` applied (RubricError for an unknown part, a negative or non-number
    value, or a rubric worth 0 in all)."""
    table = dict(RUBRIC)
    for part, value in (overrides or {}).items():
        if part not in RUBRIC:
            raise RubricError(f"{SETTING}: unknown part {part!r}; the parts are {', '.join(RUBRIC)}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
            raise RubricError(f"{SETTING}.{part}: must be a number of points, 0 or more, got {value!r}")
        table[part] = float(value)
    if sum(table.values()) <= 0:
        raise RubricError(f"{SETTING}: every part is worth 0 points; give at least one part some")
    return table


def statements(part: Mapping) -> list[dict]:
    """The distinct statements a part's checks decide, in the order its checks first name them: each with its
    label (the claim id, or the check itself where it is tied to no claim), its checks, and whether all pass."""
    out: dict[str, dict] = {}
    for c in part.get("checks", []):
        key = c["claim"] or c["what"]
        s = out.setdefault(key, {"label": key, "claim": c["claim"], "checks": [], "passed": True})
        s["checks"].append(c)
        s["passed"] = s["passed"] and bool(c["passed"])
    return list(out.values())


def part_points(part: Mapping, worth: float) -> float:
    """The points a part earns out of `worth`: worth / (its statements) per statement that holds; all of it when
    the part passes; 0 when it stopped (lost) or decided nothing."""
    if part.get("passed"):
        return round(worth, 2)
    said = statements(part)
    if part.get("lost_status") or part.get("lost") or not said:
        return 0.0
    return round(worth * sum(s["passed"] for s in said) / len(said), 2)


def score(record: Mapping, table: Mapping[str, float] = RUBRIC) -> dict:
    """A learner's score from their grade record (sdpa_lab.grading.classroom.grade_record), the one place a grade
    is counted and said (`sdpa-lab grade`, results/solutions.csv, the report, the class's tables and pages):

    {"total", "max", "parts": {part: points}, "statements": {part: [held, of]}, "unusable": reason or "",
    "passed", "of": the rubric's parts that pass, of all of them, "to_fix": the others, "verdict": "4 of 5
    pass" (or "unusable"), "line": the verdict with the points, "4 of 5 pass, 8 of 10 points"};
    a part the record lacks earns 0, and an unusable file 0 in all; a part the instructor overrode
    (sdpa_lab.grading.overrides, the record's "overrides") earns what they gave, whatever the grade says.
    """
    usable = record["exit_status"] != UNUSABLE
    graded = {p["name"]: p for p in record.get("parts", [])} if usable else {}
    parts, said = {}, {}
    for name, worth in table.items():
        p = graded.get(name)
        parts[name] = part_points(p, worth) if p is not None else 0.0
        if name in record.get("overrides", {}):
            parts[name] = round(float(record["overrides"][name]["points"]), 2)
        held = statements(p) if p is not None else []
        said[name] = [sum(s["passed"] for s in held), len(held)]
    total, most = round(sum(parts.values()), 2), round(sum(table.values()), 2)
    passed = [name for name in table if usable and graded.get(name, {}).get("passed")]
    verdict = f"{len(passed)} of {len(table)} pass" if usable else "unusable"
    why = "" if usable else (record.get("unusable") or "could not be used")
    line = (f"{verdict}, {num(total)} of {num(most)} points" if usable else
            f"could not be graded: {why}; {num(total)} of {num(most)} points")
    return {"total": total, "max": most, "parts": parts, "statements": said, "unusable": why,
            "passed": len(passed), "of": len(table), "to_fix": [name for name in table if name not in passed],
            "verdict": verdict, "line": line}
