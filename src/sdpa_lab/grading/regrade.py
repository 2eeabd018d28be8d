"""`sdpa-lab regrade LEARNER --submissions DIR`: one learner of a graded class graded again, as before.

Their grade record (results/class/grades/LEARNER.json) holds what made their grade: the
seed of its inputs, Exercise 1's pairs, the time and memory limits, the modules given. The regrade reads them
(the modules from `grading_modules` of the --configfile given, where one sets it),
grades the learner's file in the folder again with them (in the sandbox, as the class was),
writes the new record in place of the old, and then runs `snakemake grade_class` with only
the gradebook rule allowed, so the gradebook, the scores, the overview and the pages follow
and no other learner is graded again (their records are untouched).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GRADES_DIR = Path("results/class/grades")


class RegradeError(ValueError):
    """A learner that cannot be regraded; the message is one line saying why."""


def stored_record(learner: str, grades_dir: str | os.PathLike = GRADES_DIR) -> dict:
    """The learner's grade record, as the class's grading wrote it (RegradeError if there is none)."""
    path = Path(grades_dir) / f"{learner}.json"
    if not path.is_file():
        raise RegradeError(f"no grade record {path}: grade the class first (snakemake grade_class --config "
                           "submissions=DIR), from the folder it ran in")
    return json.loads(path.read_text(encoding="utf-8"))


def configured_modules(configfiles) -> tuple[str, ...] | None:
    """`grading_modules` as the config files set it (the last that sets it, as Snakemake merges them), validated;
    None where none sets it (RegradeError naming the setting where it is bad)."""
    import yaml

    from sdpa_lab.grading.modules import SETTING, ModulesError, site_entries

    modules = None
    for f in configfiles or ():
        config = yaml.safe_load(Path(f).read_text(encoding="utf-8")) or {}
        if isinstance(config, dict) and SETTING in config:
            modules = config[SETTING]
    if modules is None:
        return None
    try:
        site_entries(tuple(modules) if isinstance(modules, list) else modules)
    except (ModulesError, TypeError) as exc:
        raise RegradeError(str(exc)) from None
    return tuple(modules)


def regrade(learner: str, submissions_dir: str | os.PathLike, grades_dir: str | os.PathLike = GRADES_DIR,
            modules: tuple[str, ...] | None = None) -> dict:
    """Grade the learner's file in `submissions_dir` again on their stored seed, pairs and limits, and write the
    new record over the old; returns it. modules: the course's modules now (None: those of the stored grade)."""
    from sdpa_lab.grading.classroom import grade_submission
    from sdpa_lab.grading.modules import COURSE_MODULES
    from sdpa_lab.io import write_text

    old = stored_record(learner, grades_dir)
    path = Path(submissions_dir) / old["file"]
    if not path.is_file():
        raise RegradeError(f"{learner}'s file {path} is not there (the record names {old['file']})")
    new = grade_submission(path, learner, seed=old["seed"], time_limit=old["time_limit"],
                           memory_mib=old["memory_mib"], n_samples=old["n_samples"],
                           modules=modules or tuple(old.get("modules", COURSE_MODULES)))
    write_text(json.dumps(new, indent=1, sort_keys=True) + "\n", Path(grades_dir) / f"{learner}.json")
    return new


def snakemake_update(submissions_dir: str | os.PathLike, cores: int = 1, configfiles=()) -> list[str]:
    """The Snakemake command that brings the class's tables and pages up to date with the new record."""
    extra = [arg for f in configfiles for arg in ("--configfile", str(f))]
    # Only the gradebook rule may run, and only because a record is newer than its outputs: a setting given on the
    # class's command line and not here (grading_n_samples=...) would otherwise regrade every learner.
    return [sys.executable, "-m", "snakemake", "--cores", str(cores), "grade_class", "--allowed-rules", "gradebook",
            "--rerun-triggers", "mtime", *extra, "--config", f"submissions={submissions_dir}"]


def main(args) -> int:
    """The `regrade` subcommand: 0 when the learner was regraded and the class's outputs updated, 2 when they
    could not be, else Snakemake's exit status."""
    from sdpa_lab.grading.grade import SandboxUnavailable

    try:
        record = regrade(args.learner, args.submissions, modules=configured_modules(args.configfile))
    except (RegradeError, SandboxUnavailable) as exc:
        print(f"sdpa-lab regrade: {exc}", file=sys.stderr)
        return 2
    print(f"{args.learner}: regraded on seed {record['seed']} ({record['passed']} of {len(record['parts'])} pass, "
          f"exit {record['exit_status']}): wrote {GRADES_DIR / (args.learner + '.json')}")
    if args.no_update:
        return 0
    command = snakemake_update(args.submissions, args.cores, args.configfile or ())
    print("updating the class's gradebook, scores, overview and pages: " + " ".join(command[2:]))
    return subprocess.run(command, check=False).returncode
