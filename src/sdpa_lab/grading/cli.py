"""`sdpa-lab new-solutions FILE`, `sdpa-lab new-assignment FILE.ipynb` and `sdpa-lab grade FILE`: the subcommands
for a learner's own solutions;
`sdpa-lab regrade LEARNER --submissions DIR`: one learner of a graded class, again (sdpa_lab.grading.regrade)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def _write_new(command: str, write, file: str, then: str) -> int:
    """Write a file a learner starts from with `write` (never over an existing one), and say what to do next."""
    try:
        path = write(file)
    except FileExistsError:
        print(f"sdpa-lab {command}: error: {file} exists; not overwriting it", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"sdpa-lab {command}: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}: {then.format(path=path)}")
    return 0


def new_solutions(args: argparse.Namespace) -> int:
    from sdpa_lab.grading.skeleton import write_skeleton

    return _write_new("new-solutions", write_skeleton, args.file,
                      "fill in its five functions, then run `sdpa-lab grade {path}`")


def new_assignment(args: argparse.Namespace) -> int:
    from sdpa_lab.grading.assignment import write_assignment

    return _write_new("new-assignment", write_assignment, args.file,
                      "open it in Jupyter, fill in each function and run the check cell under it")


def grade(args: argparse.Namespace) -> int:
    from sdpa_lab.grading.grade import UNUSABLE, SandboxUnavailable, format_grade
    from sdpa_lab.grading.grade import grade as run
    from sdpa_lab.grading.modules import COURSE_MODULES, ModulesError, site_entries
    from sdpa_lab.terminal import fit

    modules = tuple(dict.fromkeys((*COURSE_MODULES, *args.module)))
    try:
        table = class_rubric(args.configfile)
    except ValueError as exc:  # ConfigError, RubricError: one line naming the file or the setting
        print(f"sdpa-lab grade: {exc}", file=sys.stderr)
        return UNUSABLE
    try:
        site_entries(modules)
        g = run(args.file, time_limit=args.time_limit, memory_mib=args.memory_limit, n_samples=args.n_samples,
                seed=args.seed, isolation=args.isolation, modules=modules)
    except (SandboxUnavailable, ModulesError) as exc:
        print(f"sdpa-lab grade: {exc}".replace("config setting grading_modules", "--module"), file=sys.stderr)
        return UNUSABLE
    print(fit(format_grade(g, table)))  # every line to the terminal's width (sdpa_lab.terminal)
    return g.exit_status


def class_rubric(configfiles) -> dict[str, float]:
    """The rubric of the config files a class is graded with (their `grading_points`, later files first, as
    Snakemake merges them), so that a learner's own grade shows the class's points; the default without any."""
    from sdpa_lab.config_file import ConfigError, read_config_file
    from sdpa_lab.grading.points import SETTING, rubric

    points = {}
    for path in configfiles or ():
        value = read_config_file(path).get(SETTING, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {SETTING} must be a mapping of part to points, got {type(value).__name__}")
        points.update(value)
    return rubric(points)


def regrade(args: argparse.Namespace) -> int:
    from sdpa_lab.grading.regrade import main

    return main(args)


def _positive(kind):
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    return parse


def _seed(text: str) -> int:
    value = int(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2**32 - 1, got {text}")
    return value


def add_commands(subparsers) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `new-solutions`, `new-assignment`, `grade` and `regrade` to the CLI's subparsers; returns
    {command: handler}."""
    from sdpa_lab.experiments.replication import A1_N_SAMPLES
    from sdpa_lab.grading.checks import QUICK_N_SAMPLES
    from sdpa_lab.grading.grade import DEFAULT_MEMORY_MIB, DEFAULT_TIME_LIMIT, ISOLATIONS

    new = subparsers.add_parser("new-solutions", help="write a skeleton of the lesson's functions and exercises")
    new.add_argument("file", help="the file to write (never overwritten)")
    nb = subparsers.add_parser("new-assignment", help="write the assignment notebook: the lesson's tasks, a cell "
                               "per function to fill in, and a check cell under each")
    nb.add_argument("file", help="the notebook to write, e.g. hw2.ipynb (never overwritten)")
    g = subparsers.add_parser("grade", help="check your own solutions file: a verdict per function and exercise",
                              description="Exit status: 0 all pass, 1 some fail, 2 the file could not be used.")
    g.add_argument("file", help="your solutions file (start from `sdpa-lab new-solutions FILE`)")
    g.add_argument("--time-limit", type=_positive(float), default=DEFAULT_TIME_LIMIT,
                   help=f"seconds each call of your code may take (default {DEFAULT_TIME_LIMIT:g})")
    g.add_argument("--memory-limit", type=_positive(int), default=DEFAULT_MEMORY_MIB,
                   help=f"MiB of memory your code may use (default {DEFAULT_MEMORY_MIB})")
    g.add_argument("--n-samples", type=_positive(int), default=None,
                   help=f"pairs Exercise 1 is asked to draw at its two calls (default: {QUICK_N_SAMPLES:,}; the "
                        f"lesson's is {A1_N_SAMPLES:,}; the grade says what it drew)")
    g.add_argument("--seed", type=_seed, default=None,
                   help="the seed of the grade's inputs (default: a fresh one, printed; give it to grade again the "
                        "same way)")
    g.add_argument("--module", action="append", default=[], metavar="NAME",
                   help="a module your code may import beyond numpy and matplotlib, as a class's config "
                        "grading_modules (repeat for more)")
    g.add_argument("--configfile", action="append", default=[], metavar="FILE",
                   help="a config file the class is graded with: its grading_points give the points (repeatable; "
                        "default: the rubric of sdpa_lab.grading.points)")
    g.add_argument("--isolation", choices=ISOLATIONS, default="auto",
                   help="auto: in a bubblewrap sandbox where one starts, else a plain process (default); sandbox: "
                        "only in a sandbox; none: a plain process")
    r = subparsers.add_parser("regrade", help="grade one learner of a graded class again, on their stored seed",
                              description="Grades LEARNER's file in the class folder again with the seed, pairs and "
                              "limits of their record (results/class/grades/LEARNER.json), writes the new record, "
                              "then runs `snakemake grade_class` to update the gradebook, scores, overview and "
                              "pages. Run it where the class was graded. Exit status: 2 if the learner could not "
                              "be regraded, else Snakemake's.")
    r.add_argument("learner", help="the learner id (their file's name without .py or .ipynb)")
    r.add_argument("--submissions", required=True, help="the class folder, as given to snakemake --config "
                   "submissions=DIR")
    r.add_argument("--cores", type=_positive(int), default=1, help="Snakemake's --cores for the update (default 1)")
    r.add_argument("--configfile", action="append", help="a config file the class was graded with (for Snakemake; "
                   "repeatable)")
    r.add_argument("--no-update", action="store_true", help="write the new record only; do not run Snakemake")
    return {"new-solutions": new_solutions, "new-assignment": new_assignment, "grade": grade, "regrade": regrade}
