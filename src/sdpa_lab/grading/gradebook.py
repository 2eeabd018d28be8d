"""A graded class, from its grade records (sdpa_lab.grading.classroom): the tables, the overview and the pages.

- `gradebook_rows`: results/class/gradebook.csv, one row per learner and check, per learner and
  part (item "verdict") and per learner (part "total"), each with machine-readable `passed`,
  `points` and `max_points` beside the `verdict` in words;
- `lms_rows`: results/class/scores.csv, one row per learner for Canvas and Moodle (docs/grading.md);
- `overview`: the class at a glance (a row per learner, the pass rate per part and per check,
  the common mistakes in words, the files that could not be used), for reports/class.html
  and the main report's summary;
- `gradebook_job`: all of these, and one self-contained page per learner, reports/class/<learner>.html.

Points come from the rubric (sdpa_lab.grading.points); both CSVs are written through
sdpa_lab.grading.spreadsheet, which keeps a learner's text from becoming a formula.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from sdpa_lab.grading.points import RUBRIC, UNUSABLE, rubric, score

PARTS = tuple(RUBRIC)
COLUMNS = ("learner", "file", "seed", "part", "item", "claim", "verdict", "passed", "points", "max_points",
           "mistakes", "detail")
# Canvas's gradebook import reads a student from these columns (any one of its ids will do); sdpa-lab knows a
# learner only by their file's name, which goes in SIS Login ID (docs/grading.md: how to map it).
LMS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
LMS_TOTAL = "sdpa-lab attention total"
# Words for the exercises' mistakes that sdpa_lab.grading.mistakes.MISTAKES does not name (its titles come first).
OWN_DRAW = re.compile(r"seed (\d+), ([^:]*): (.*)", re.S)  # an exercise check at the grade's own seed and sizes


def lms_column(part: str) -> str:
    """The scores.csv column of a part's points."""
    return f"sdpa-lab {part}"


def mistake_title(key: str) -> str:
    """A mistake in words: its title in sdpa_lab.grading.mistakes (a key it does not know, from an older record,
    spelled out)."""
    from sdpa_lab.grading.mistakes import MISTAKES

    if key in MISTAKES:
        return MISTAKES[key].title
    return key.replace("_", " ")


def check_name(what: str) -> str:
    """A check as the class shares it: an exercise's check at the grade's own seed and sizes (which differ from
    learner to learner) with those numbers written N."""
    m = OWN_DRAW.fullmatch(what)
    if m is None:
        return what
    drawn = set(re.findall(r"\d+", f"{m[1]} {m[2]}"))
    return "at the grade's own seed and sizes: " + re.sub(r"\b\d+\b", lambda n: "N" if n[0] in drawn else n[0],
                                                           m[3])


# -- the CSVs -------------------------------------------------------------------------

def gradebook_rows(records: list[dict], table: Mapping[str, float] = RUBRIC) -> list[dict]:
    """One row per learner and check, per learner and part (item "verdict"), and per learner (part "total"),
    with `passed` (1 or 0), and `points` and `max_points` on the part and total rows."""
    rows = []
    for r in records:
        base = {"learner": r["learner"], "file": r["file"], "seed": r["seed"]}
        s = score(r, table)
        by_hand = r.get("overrides", {})  # sdpa_lab.grading.overrides: the points are the instructor's
        for p in r["parts"]:
            worth = table.get(p["name"], 0.0)
            detail = p["lost"] if p["name"] not in by_hand else \
                f"points set by the instructor: {by_hand[p['name']]['comment'] or '(no comment)'}"
            rows.append({**base, "part": p["name"], "item": "verdict", "claim": "",
                         "verdict": "pass" if p["passed"] else p["verdict"], "passed": int(p["passed"]),
                         "points": s["parts"].get(p["name"], 0.0), "max_points": worth,
                         "mistakes": ";".join(p["mistakes"]), "detail": detail})
            rows += [{**base, "part": p["name"], "item": c["what"], "claim": c["claim"],
                      "verdict": "ok" if c["passed"] else "FAIL", "passed": int(c["passed"]), "points": None,
                      "max_points": None, "mistakes": "", "detail": c["detail"]} for c in p["checks"]]
        rows.append({**base, "part": "total", "item": "total", "claim": "", "verdict": s["verdict"],
                     "passed": int(r["exit_status"] == 0), "points": s["total"], "max_points": s["max"],
                     "mistakes": ";".join(dict.fromkeys(m for p in r["parts"] for m in p["mistakes"])),
                     "detail": r["unusable"]})
    return [{k: row[k] for k in COLUMNS} for row in rows]


def lms_columns(table: Mapping[str, float] = RUBRIC) -> list[str]:
    return [*LMS_ID_COLUMNS, LMS_TOTAL, *(lms_column(p) for p in table)]


def lms_rows(records: list[dict], table: Mapping[str, float] = RUBRIC) -> list[dict]:
    """One row per learner: the learner id (as Student and SIS Login ID), the total and the points per part."""
    rows = []
    for r in records:
        s = score(r, table)
        rows.append({"Student": r["learner"], "ID": "", "SIS User ID": "", "SIS Login ID": r["learner"],
                     "Section": "", LMS_TOTAL: s["total"], **{lms_column(p): s["parts"][p] for p in table}})
    return rows


# -- the overview -----------------------------------------------------------------------

def learner_row(r: dict, table: Mapping[str, float], href: str = "") -> dict:
    """A learner's row of the overview: score, points per part, mistakes in words, and what their grade says."""
    s = score(r, table)
    graded = {p["name"]: p for p in r["parts"]}
    by_hand = r.get("overrides", {})  # the instructor's (sdpa_lab.grading.overrides): points and comment
    parts = [{"name": name, "points": s["parts"][name], "max": worth, "held": s["statements"][name][0],
              "of": s["statements"][name][1],
              "passed": bool(graded.get(name, {}).get("passed")) and not s["unusable"],
              "verdict": "unusable" if s["unusable"] else graded[name]["verdict"] if name in graded else "missing",
              "overridden": name in by_hand, "comment": by_hand.get(name, {}).get("comment", "")}
             for name, worth in table.items()]
    mistakes = list(dict.fromkeys(mistake_title(m) for p in r["parts"] for m in p["mistakes"]))
    status = s["unusable"] if r.get("absent") else s["line"]
    return {"learner": r["learner"], "file": r["file"], "href": href, "total": s["total"], "max": s["max"],
            "parts": parts, "mistakes": mistakes, "status": status, "verdict": s["verdict"],
            "to_fix": s["to_fix"], "unusable": s["unusable"], "all_pass": r["exit_status"] == 0, "name": ""}


def check_rates(records: list[dict]) -> list[dict]:
    """The pass rate of each check over the usable submissions that reached it, part by part, in the grader's
    order."""
    rates: dict[tuple[str, str], dict] = {}
    for r in records:
        if r["exit_status"] == UNUSABLE:
            continue
        for p in r["parts"]:
            for c in p["checks"]:
                name = check_name(c["what"])
                row = rates.setdefault((p["name"], name), {"part": p["name"], "check": name, "claim": c["claim"],
                                                           "passed": 0, "of": 0})
                row["passed"] += bool(c["passed"])
                row["of"] += 1
    order = {name: i for i, name in enumerate(PARTS)}
    return sorted(rates.values(), key=lambda row: order.get(row["part"], len(order)))


def overview(records: list[dict], table: Mapping[str, float] = RUBRIC, page_href=lambda learner: "") -> dict:
    """The class at a glance: a row per learner (learner_row), the mean score, the pass rate per part and per
    check, the most common mistakes in words, and the unusable submissions and why."""
    import sdpa_lab.grading.mistakes as M

    usable = [r for r in records if r["exit_status"] != UNUSABLE]
    rates = []
    for name in table:
        graded = [p for r in usable for p in r["parts"] if p["name"] == name]
        rates.append({"part": name, "passed": sum(p["passed"] for p in graded), "of": len(graded)})
    counts = Counter(m for r in records for m in {m for p in r["parts"] for m in p["mistakes"]})  # per learner
    common = [{"key": k, "title": mistake_title(k), "learners": n,
               "reread": M.MISTAKES[k].reread if k in M.MISTAKES else ""}
              for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    unusable = [{"learner": r["learner"], "file": r["file"], "why": r["unusable"]}
                for r in records if r["exit_status"] == UNUSABLE]
    learners = [learner_row(r, table, page_href(r["learner"])) for r in records]
    mean = round(sum(row["total"] for row in learners) / len(learners), 2) if learners else 0.0
    return {"n": len(records), "all_pass": sum(r["exit_status"] == 0 for r in records), "rates": rates,
            "mistakes": common, "unusable": unusable, "learners": learners, "checks": check_rates(records),
            "mean": mean, "max": round(sum(table.values()), 2), "rubric": dict(table)}


# -- the job ----------------------------------------------------------------------------

def read_records(paths) -> list[dict]:
    return sorted((json.loads(Path(p).read_text(encoding="utf-8")) for p in paths), key=lambda r: r["learner"])


def feedback_page(record: dict, table: Mapping[str, float] = RUBRIC) -> str:
    """One learner's self-contained feedback page: their score and points per part, their verdicts, the mistakes
    named, the sections to reread."""
    from sdpa_lab.report.rendering import environment

    return environment().get_template("feedback.html.j2").render(r=record, s=learner_row(record, table))


def class_page(o: dict) -> str:
    """The class overview's self-contained page (reports/class.html), from overview()."""
    from sdpa_lab.report.rendering import environment

    return environment().get_template("class.html.j2").render(o=o)


def gradebook_job(records: list[str], csv_out: str, pages_dir: str, lms_out: str | None = None,
                  overview_out: str | None = None, points: Mapping[str, float] | None = None,
                  log_path: str | None = None, lms: Mapping | None = None) -> None:
    """The gradebook CSV, the LMS's CSV, one feedback page per learner and the class overview, from the
    submissions' grade records, with the rubric of config `grading_points` (`points`); `lms`
    (workflow/rules/common.smk lms_settings: roster, assignment, overrides, intake, import_out) adds the roster's
    learners and names, the overrides and results/class/lms_import.csv."""
    from sdpa_lab.grading.instructor import arrange, class_records, read_lms
    from sdpa_lab.grading.spreadsheet import write_spreadsheet_csv
    from sdpa_lab.io import write_text
    from sdpa_lab.joblog import job_log

    with job_log("gradebook", log_path) as logger:
        table = rubric(points)
        read = read_records(records)
        roster, overrides = read_lms(lms or {}, table, [r["learner"] for r in read])
        c = class_records(read, roster, overrides, (lms or {}).get("intake"))
        graded = c.graded
        write_spreadsheet_csv(gradebook_rows(graded, table), COLUMNS, csv_out)
        if lms_out is not None:
            write_spreadsheet_csv(lms_rows(graded, table), lms_columns(table), lms_out)
        if roster is not None:
            from sdpa_lab.grading.lms_import import import_columns, import_rows

            write_spreadsheet_csv(import_rows(roster, c.everyone, table), import_columns(roster), lms["import_out"])
        for r in graded:
            write_text(feedback_page(r, table), Path(pages_dir) / f"{r['learner']}.html")
        where = os.path.relpath(pages_dir, Path(overview_out).parent) if overview_out else pages_dir
        o = overview(graded, table, lambda learner: f"{quote(Path(where).as_posix())}/{quote(learner)}.html")
        o = arrange(o, c, [learner_row(r, table) for r in c.everyone.values() if r.get("absent")])
        if overview_out is not None:
            write_text(class_page(o), overview_out)
        logger.info("gradebook: %d learners, mean %.2f of %g points, %d pass everything, %d unusable: wrote %s, "
                    "%s, %s and %d pages in %s", o["n"], o["mean"], o["max"], o["all_pass"], len(o["unusable"]),
                    csv_out, lms_out, overview_out, len(graded), pages_dir)
