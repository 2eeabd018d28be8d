"""Grade a class: every submission in a folder, each in its own sandbox, into one gradebook and one page per learner.

- `submissions(folder)`: {learner: file} for every .py and .ipynb in the folder (the learner
  is the file's name without its suffix);
- `submission_job`: one learner's grade (always sandboxed) as JSON, written whatever their
  file does: a broken submission never stops the others;
- `gradebook_job`: the grades into results/class/gradebook.csv (one row per learner and
  check, one per learner and part, one per learner with the totals and the grade's seed)
  and one self-contained feedback page per learner, reports/class/<learner>.html;
- `overview`: the class at a glance for the main report (pass rate per part, the most
  common mistakes, the unusable submissions and why).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from sdpa_lab.grading.limits import MEMORY_MIB, N_SAMPLES, TIME_LIMIT
from sdpa_lab.grading.modules import COURSE_MODULES

if TYPE_CHECKING:
    from sdpa_lab.grading.grade import Grade

# Parse-time light (the Snakefile lists the class with `submissions`): NumPy and the checks load in the jobs.
UNUSABLE = 2  # sdpa_lab.grading.grade.UNUSABLE: the exit status of a file that could not be used
SUFFIXES = (".py", ".ipynb")
LEARNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # a learner id a path and a wildcard can hold
# The same limits as `sdpa-lab grade` (sdpa_lab.grading.limits): one file, one grade.
CLASS_TIME_LIMIT, CLASS_MEMORY_MIB, CLASS_N_SAMPLES = TIME_LIMIT, MEMORY_MIB, N_SAMPLES
COLUMNS = ("learner", "file", "seed", "part", "item", "claim", "verdict", "mistakes", "detail")
PARTS = ("softmax", "scaled_dot_product_attention", "exercise_1", "exercise_2", "exercise_3")


class ClassError(ValueError):
    """A class folder that cannot be graded; the message is one line."""


def submissions(folder: str | os.PathLike) -> dict[str, Path]:
    """{learner: file} for every .py and .ipynb directly in `folder`, sorted (ClassError when there are none,
    or two files of one learner, or a name no wildcard can hold)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ClassError(f"submissions: {folder} is not a folder")
    out: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix not in SUFFIXES or not path.is_file() or path.name.startswith("."):
            continue
        learner = path.stem
        if not LEARNER.match(learner):
            raise ClassError(f"submissions: {path.name}: a learner's file name must be letters, digits, '_', '-' "
                             "or '.'")
        if learner in out:
            raise ClassError(f"submissions: two files for learner {learner}: {out[learner].name} and {path.name}")
        out[learner] = path
    if not out:
        raise ClassError(f"submissions: no .py or .ipynb file in {folder}")
    return out


# -- one learner ------------------------------------------------------------------

def unusable_reason(g: Grade) -> str:
    """Why a grade could not use the file, in one line: the load's error (an exception raised at import as its
    last line and where), or the first reply that broke the protocol and in how many more functions one did."""
    if not g.usable and g.load.message:
        return error_line(g.load.message) if g.load.status == "error" else g.load.message.splitlines()[0]
    forged = [p.lost.message for p in g.forged]
    if not forged:
        return g.load.status
    more = len(forged) - 1
    return forged[0] + (f" (and in {more} more function{'s' if more > 1 else ''})" if more else "")


def error_line(traceback: str) -> str:
    """A learner's traceback in one line: its exception, and the file and line it was raised at."""
    lines = [line for line in traceback.strip().splitlines() if line.strip()]
    if not lines:
        return "an error"
    places = [m for line in lines if (m := re.match(r'\s*File "([^"]+)", line (\d+)', line))]
    where = f" ({places[-1][1]}, line {places[-1][2]})" if places else ""
    return lines[-1].strip() + where


def grade_record(g: Grade, learner: str) -> dict:
    """A grade as plain data (the JSON a submission's job writes)."""
    from sdpa_lab.grading import mistakes as M

    parts = []
    for p in g.parts:
        parts.append({
            "name": p.name, "signature": p.signature, "verdict": p.verdict, "passed": bool(p.passed),
            "lost": p.lost.message if p.lost is not None else "", "lost_status": p.lost.status if p.lost else "",
            "checks": [{"claim": c.claim, "what": c.what, "passed": bool(c.passed), "detail": c.detail}
                       for c in p.checks],
            "notes": list(p.notes), "error": p.error, "diagnosis": list(p.diagnosis), "mistakes": list(p.mistakes),
            "reread": [M.MISTAKES[k].reread for k in p.mistakes if k in M.MISTAKES],
        })
    unusable = "" if g.exit_status != UNUSABLE else unusable_reason(g)
    return {"learner": learner, "file": g.path.name, "seed": g.seed, "isolation": g.isolation,
            "time_limit": g.time_limit, "memory_mib": g.memory_mib, "peak_mib": round(g.peak_mib, 1),
            "seconds": round(g.seconds, 3), "learner_cpu_seconds": round(g.learner_cpu_seconds, 3),
            "exit_status": g.exit_status, "usable": g.usable,
            "load_status": g.load.status, "load_message": g.load.message, "unusable": unusable,
            "passed": sum(bool(p.passed) for p in g.parts), "parts": parts, "notes": list(g.notes)}


def grade_submission(path: str | os.PathLike, learner: str, seed: int | None = None,
                     time_limit: float = CLASS_TIME_LIMIT, memory_mib: int = CLASS_MEMORY_MIB,
                     n_samples: int | None = CLASS_N_SAMPLES, modules: tuple[str, ...] = COURSE_MODULES) -> dict:
    """One learner's grade record, always in a sandbox, never raising for anything their file does."""
    from sdpa_lab.grading.grade import SandboxUnavailable, grade

    try:
        g = grade(path, time_limit=time_limit, memory_mib=memory_mib, n_samples=n_samples, seed=seed,
                  isolation="sandbox", helpers=False, modules=tuple(modules))
    except SandboxUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - a failure of the grader on this file is recorded, not raised
        return {"learner": learner, "file": Path(path).name, "seed": seed, "isolation": "", "time_limit": time_limit,
                "memory_mib": memory_mib, "peak_mib": 0.0, "seconds": 0.0, "exit_status": UNUSABLE,
                "usable": False, "load_status": "grader", "unusable": f"the grader could not run: "
                f"{type(exc).__name__}: {exc}", "load_message": "", "passed": 0, "parts": [], "n_samples": n_samples,
                "notes": []}
    return {**grade_record(g, learner), "n_samples": n_samples}  # with the seed, what reproduces the grade


def where_graded() -> str:
    """The host, the SLURM job and step when the grade runs in one, and the memory cgroup its grade's cgroup is made
    in: what an instructor needs to trace a grade on a cluster."""
    import socket

    from sdpa_lab.grading.sandbox import own_cgroups

    job, step = os.environ.get("SLURM_JOB_ID"), os.environ.get("SLURM_STEP_ID")
    slurm = f", SLURM job {job} step {step}" if job else ""
    own = own_cgroups()
    cgroup = f"memory:{own['memory']}" if "memory" in own else f"cgroup2:{own.get('', '/')}"
    return f"{socket.gethostname()}{slurm}, grade cgroups under {cgroup}"


def submission_job(path: str, learner: str, out: str, seed: int | None = None, time_limit: float = CLASS_TIME_LIMIT,
                   memory_mib: int = CLASS_MEMORY_MIB, n_samples: int | None = CLASS_N_SAMPLES,
                   log_path: str | None = None, modules: tuple[str, ...] = COURSE_MODULES) -> None:
    """The workflow's job for one submission: its grade record to `out` (JSON)."""
    from sdpa_lab.io import write_text
    from sdpa_lab.joblog import job_log

    with job_log("grade_submission", log_path) as logger:
        logger.info("%s: grading on %s", learner, where_graded())
        record = grade_submission(path, learner, seed, time_limit, memory_mib, n_samples, modules)
        write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", out)
        logger.info("%s: %d of %d pass, exit %d, seed %s, peak %.0f MiB, %.1f s: wrote %s", learner, record["passed"],
                    len(record["parts"]), record["exit_status"], record["seed"], record["peak_mib"],
                    record["seconds"], out)


# -- the class ----------------------------------------------------------------------

def gradebook_rows(records: list[dict]) -> list[dict]:
    """One row per learner and check, per learner and part (item "verdict"), and per learner (part "total")."""
    rows = []
    for r in records:
        base = {"learner": r["learner"], "file": r["file"], "seed": r["seed"]}
        for p in r["parts"]:
            rows.append({**base, "part": p["name"], "item": "verdict", "claim": "",
                         "verdict": "pass" if p["passed"] else p["verdict"], "mistakes": ";".join(p["mistakes"]),
                         "detail": p["lost"]})
            rows += [{**base, "part": p["name"], "item": c["what"], "claim": c["claim"],
                      "verdict": "ok" if c["passed"] else "FAIL", "mistakes": "", "detail": c["detail"]}
                     for c in p["checks"]]
        total = "unusable" if r["exit_status"] == UNUSABLE else f"{r['passed']} of {len(r['parts'])} pass"
        rows.append({**base, "part": "total", "item": "total", "claim": "", "verdict": total,
                     "mistakes": ";".join(m for p in r["parts"] for m in p["mistakes"]), "detail": r["unusable"]})
    return [{k: ("" if row[k] is None else row[k]) for k in COLUMNS} for row in rows]


def overview(records: list[dict]) -> dict:
    """The class at a glance: pass rate per part, the most common mistakes, and the unusable submissions and why."""
    from sdpa_lab.grading import mistakes as M

    usable = [r for r in records if r["usable"]]
    rates = []
    for name in PARTS:
        graded = [p for r in usable for p in r["parts"] if p["name"] == name]
        rates.append({"part": name, "passed": sum(p["passed"] for p in graded), "of": len(graded)})
    counts = Counter(m for r in records for p in r["parts"] for m in set(p["mistakes"]))
    common = [{"key": k, "title": M.MISTAKES[k].title if k in M.MISTAKES else k, "learners": n,
               "reread": M.MISTAKES[k].reread if k in M.MISTAKES else ""}
              for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    unusable = [{"learner": r["learner"], "file": r["file"], "why": r["unusable"]}
                for r in records if r["exit_status"] == UNUSABLE]
    all_pass = sum(r["exit_status"] == 0 for r in records)
    return {"n": len(records), "all_pass": all_pass, "rates": rates, "mistakes": common, "unusable": unusable}


def read_records(paths) -> list[dict]:
    return sorted((json.loads(Path(p).read_text(encoding="utf-8")) for p in paths), key=lambda r: r["learner"])


def feedback_page(record: dict) -> str:
    """One learner's self-contained feedback page: their verdicts, the mistakes named, the sections to reread."""
    from sdpa_lab.report.rendering import environment

    return environment().get_template("feedback.html.j2").render(r=record)


def gradebook_job(records: list[str], csv_out: str, pages_dir: str, log_path: str | None = None) -> None:
    """The gradebook CSV and one feedback page per learner, from the submissions' grade records."""
    from sdpa_lab.io import write_csv, write_text
    from sdpa_lab.joblog import job_log

    with job_log("gradebook", log_path) as logger:
        graded = read_records(records)
        write_csv(gradebook_rows(graded), csv_out)
        for r in graded:
            write_text(feedback_page(r), Path(pages_dir) / f"{r['learner']}.html")
        o = overview(graded)
        logger.info("gradebook: %d learners, %d pass everything, %d unusable: wrote %s and %d pages in %s", o["n"],
                    o["all_pass"], len(o["unusable"]), csv_out, len(graded), pages_dir)
