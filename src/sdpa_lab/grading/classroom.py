"""Grade a class: every submission in a folder, each in its own sandbox, into one gradebook and one page per learner.

- `submissions(folder)`: {learner: file} for every .py and .ipynb in the folder: the learner
  is the file's name without its suffix where that is a safe id, else a safe id made from it
  (`learner_ids`), so that no file name stops the class;
- `submission_job`: one learner's grade (always sandboxed) as JSON, written whatever their
  file does: a broken submission never stops the others.

The class's tables, overview and pages from these records: sdpa_lab.grading.gradebook (one
learner graded again on their stored seed: sdpa_lab.grading.regrade).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from sdpa_lab.grading.learner_text import file_name
from sdpa_lab.grading.limits import MEMORY_MIB, N_SAMPLES, TIME_LIMIT, UNUSABLE
from sdpa_lab.grading.modules import COURSE_MODULES
from sdpa_lab.grading.record import grade_record

if TYPE_CHECKING:
    pass

# Parse-time light (the Snakefile lists the class with `submissions`): NumPy and the checks load in the jobs.
SUFFIXES = (".py", ".ipynb")
LEARNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # a file's stem used as is for its learner id
SAFE_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]*(~[0-9a-f]+)?"  # every learner id (class.smk's wildcard constraint)
HASH_DIGITS = 10  # of the sha256 of a file's name, in the id of a file whose stem cannot be one
MAX_PLAIN = 100  # characters of a stem used as an id (a longer one is hashed: a path's name within 255 bytes)
# The same limits as `sdpa-lab grade` (sdpa_lab.grading.limits): one file, one grade.
CLASS_TIME_LIMIT, CLASS_MEMORY_MIB, CLASS_N_SAMPLES = TIME_LIMIT, MEMORY_MIB, N_SAMPLES
PARTS = ("softmax", "scaled_dot_product_attention", "exercise_1", "exercise_2", "exercise_3")


class ClassError(ValueError):
    """A class folder that cannot be graded; the message is one line."""


def submissions(folder: str | os.PathLike) -> dict[str, Path]:
    """{learner id: file} for every .py and .ipynb directly in `folder` (links included: their grade refuses them),
    sorted by file name (ClassError when there are none, or the folder is not one)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ClassError(f"submissions: {folder} is not a folder")
    files = [p for p in sorted(folder.iterdir()) if p.suffix in SUFFIXES and not p.name.startswith(".")
             and not stat.S_ISDIR(p.lstat().st_mode)]
    if not files:
        raise ClassError(f"submissions: no .py or .ipynb file in {folder}")
    ids = learner_ids([p.name for p in files])
    return {ids[p.name]: p for p in files}


def learner_ids(names: list[str]) -> dict[str, str]:
    """{file name: learner id}: the name without its suffix where it is ASCII letters, digits, '_', '-' and '.'
    (at most MAX_PLAIN) and no other file has it; else (a space, a quote, a newline, a letter outside ASCII, two
    files of one learner) a slug of it, '~' and the first HASH_DIGITS hex digits of the sha256 of the whole name.
    An id is stable (it depends on that file's name and on whether another file shares its stem, whatever its
    case) and safe in a path, a URL and a Snakemake wildcard; no two files get ids that differ only by case ('~' is
    in no plain id; more digits on a clash of hashes)."""
    folded = [Path(n).stem.casefold() for n in names]  # two stems equal but for case share a page on macOS
    ids = {n: s if LEARNER.match(s) and len(s) <= MAX_PLAIN and folded.count(s.casefold()) == 1 else None
           for n, s in ((n, Path(n).stem) for n in names)}
    hashed = [n for n, i in ids.items() if i is None]
    digits = HASH_DIGITS
    while True:
        made = {n: _hashed_id(n, digits) for n in hashed}
        if len({i.casefold() for i in made.values()}) == len(made):
            return {**ids, **made}
        digits += 6


def _hashed_id(name: str, digits: int) -> str:
    raw = name.encode("utf-8", "surrogateescape")  # a name that is not UTF-8 has a hash too
    ascii_stem = unicodedata.normalize("NFKD", Path(name).stem).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", ascii_stem).lstrip("_.-")[:40] or "file"
    return f"{slug}~{hashlib.sha256(raw).hexdigest()[:digits]}"


def shown_name(path: str | os.PathLike) -> str:
    """A file's name as pages and the gradebook show it: its text, bytes that are not UTF-8 replaced by U+FFFD, its
    control characters escaped (sdpa_lab.grading.learner_text; pages and CSV escape it further)."""
    return file_name(path)


def refusal(path: str | os.PathLike) -> str:
    """Why a class's file is not read ("" if it is read): a symbolic link (its target, outside the folder maybe, is
    never followed), a hard link (a file with another name, which may be outside the folder), or anything that is not
    a regular file."""
    try:
        status = os.lstat(path)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if stat.S_ISLNK(status.st_mode):
        return "it is a symbolic link, not a file: a class's links are never followed, so it was not read"
    if not stat.S_ISREG(status.st_mode):
        return "it is not a regular file, so it was not read"
    if status.st_nlink > 1:
        return (f"it is a hard link (the file has {status.st_nlink} names, one maybe outside the class folder): a "
                "class's links are never followed, so it was not read")
    return ""


# -- one learner ------------------------------------------------------------------

def grade_submission(path: str | os.PathLike, learner: str, seed: int | None = None,
                     time_limit: float = CLASS_TIME_LIMIT, memory_mib: int = CLASS_MEMORY_MIB,
                     n_samples: int | None = CLASS_N_SAMPLES, modules: tuple[str, ...] = COURSE_MODULES) -> dict:
    """One learner's grade record, always in a sandbox, never raising for anything their file does; a link or
    anything but a regular file is refused unread (`refusal`)."""
    from sdpa_lab.grading.grade import SandboxUnavailable, grade

    def unusable(status: str, why: str) -> dict:
        return {"learner": learner, "file": shown_name(path), "seed": seed, "isolation": "", "time_limit": time_limit,
                "memory_mib": memory_mib, "peak_mib": 0.0, "written_mib": 0.0, "seconds": 0.0, "exit_status": UNUSABLE,
                "usable": False, "load_status": status, "unusable": why, "load_message": "", "passed": 0,
                "parts": [], "n_samples": n_samples, "modules": list(modules), "notes": []}

    if why := refusal(path):
        return unusable("refused", why)
    if Path(path).suffix.lower() == ".zip":  # the one notebook or .py it holds (sdpa_lab.grading.archive)
        return _grade_zip(path, learner, seed, time_limit, memory_mib, n_samples, modules, unusable)
    try:
        g = grade(path, time_limit=time_limit, memory_mib=memory_mib, n_samples=n_samples, seed=seed,
                  isolation="sandbox", helpers=False, follow_links=False, modules=tuple(modules))
    except SandboxUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - a failure of the grader on this file is recorded, not raised
        return unusable("grader", f"the grader could not run: {type(exc).__name__}: {exc}")
    # with the seed, what reproduces the grade
    return {**grade_record(g, learner), "n_samples": n_samples, "modules": list(modules)}


def _grade_zip(path, learner, seed, time_limit, memory_mib, n_samples, modules, unusable) -> dict:
    """A zip's grade: its one notebook or .py unpacked (safely) to a folder of the grader's and graded; the record
    names the zip and, in `member`, the file graded."""
    import tempfile

    from sdpa_lab.grading.archive import ArchiveError, extract_member, graded_member

    with tempfile.TemporaryDirectory(prefix="sdpa-lab-zip-") as folder:
        try:
            member = graded_member(path)
            inner = extract_member(path, member, folder)
        except ArchiveError as exc:
            return unusable("refused", str(exc))
        record = grade_submission(inner, learner, seed, time_limit, memory_mib, n_samples, modules)
    return {**record, "file": shown_name(path), "member": member}


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
                   log_path: str | None = None, modules: tuple[str, ...] = COURSE_MODULES,
                   shown: str | None = None) -> None:
    """The workflow's job for one submission: its grade record to `out` (JSON); `shown`, the file's path in the
    class folder, names it in the record where its name alone would not find it again (a Moodle folder's file)."""
    from sdpa_lab.io import write_text
    from sdpa_lab.joblog import job_log

    with job_log("grade_submission", log_path) as logger:
        logger.info("%s: grading on %s", learner, where_graded())
        record = grade_submission(path, learner, seed, time_limit, memory_mib, n_samples, modules)
        if shown:
            record["file"] = shown
        write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", out)
        logger.info("%s: %d of %d pass, exit %d, seed %s, peak %.0f MiB, %.1f s: wrote %s", learner, record["passed"],
                    len(record["parts"]), record["exit_status"], record["seed"], record["peak_mib"],
                    record["seconds"], out)
