# Helpers shared by the rules: the config check, each experiment's declaration
# (sdpa_lab.experiments.registry) turned into inputs, outputs and params, and the
# workflow's hooks (sdpa_lab.workflow_support).

import shutil
import sys
from pathlib import Path

# Parsed by every snakemake call (a no-op too): the registry brings NumPy; pandas and matplotlib stay out.
from sdpa_lab.calibration.studies import (
    ARMS,
    BATCH,
    EXPECTATIONS,
    CALIBRATION_REPORT,
    CALIBRATION_DIR,
    STUDIES_DIR,
    SHARE,
    SUMMARIES,
    SWEEPS,
    batch_files,
    fixed_tables_files,
    is_calibration_target,
    load_study,
    load_studies,
    share_files,
    targets_cpu_s,
)
from sdpa_lab.config import (
    ConfigError,
    command_line_problems,
    config_errors,
    with_defaults,
)
from sdpa_lab.grading import limits as grading_limits
from sdpa_lab.grading.modules import COURSE_MODULES
from sdpa_lab.experiments import registry
from sdpa_lab.experiments.registry import EXPERIMENTS
from sdpa_lab.report.specs import FIGURE_JOBS, FIGURES, figure_files
from sdpa_lab.workflow_support.cluster import out_of_memory_report
from sdpa_lab.workflow_support import code_inputs
from sdpa_lab.workflow_support.code_inputs import code_files, data_files
from sdpa_lab.workflow_support import cost
from sdpa_lab.validation import other_dimensions
from sdpa_lab.workflow_support.hooks import cost_gate, sweep_temporaries

# The config is checked once, here, before any job: one line per bad setting, naming it (first, what
# Snakemake's reading of --config KEY=VALUE hides: an integer too long for Python reads as inf).
# Then `config` holds every setting, those the config files leave out at the schema's defaults.
_command_line = workflow.config_settings.config_args
_errors = command_line_problems(_command_line) or config_errors(config)
if _errors:
    raise ConfigError("invalid configuration:\n  " + "\n  ".join(_errors))
_filled = with_defaults(config)
config.clear()
config.update(_filled)


# Every rule's one software environment, environment.yml (relative to the rule's file): --software-deployment-method
# conda builds it; a pip install of the project, as the README's quick start, is the same software.
ENVIRONMENT = "../../environment.yml"


def settings_of(experiment):
    """The settings `experiment` reads: the seed and its config section (none for the lesson replications).

    A rule's `params:`: Snakemake reruns the job when they change.
    """
    return registry.settings_of(config, experiment)


def outputs_of(experiment):
    """An experiment's named outputs, as its registry entry declares them (flagged for `snakemake --report`)."""
    return {
        key: report(path, caption="../report/result.rst", category="Results")
        for key, path in registry.output_paths(experiment).items()
    }


def trial_scores_of(experiment):
    """The shared trial-score files (rule trial_scores) `experiment` reads, one per d_k."""
    return list(
        registry.trial_scores_files(experiment, settings_of(experiment)).values()
    )


# The imports found in the package's files by earlier calls (code_inputs): an unchanged file is not parsed again.
# Saved at the end of the Snakefile.
IMPORTS_STORE = ".snakemake/sdpa-lab/imports.json"
code_inputs.use_store(IMPORTS_STORE)


def code_of(*modules):
    """The package files `modules` run, with every sdpa_lab module they import: the rule reruns when one changes."""
    return list(code_files(*modules, workflow_dir=workflow.basedir))


def experiment_code(experiment):
    """The code an experiment's job runs: its own module and what it imports."""
    return code_of(EXPERIMENTS[experiment].module)


def log_of(rule):
    return f"logs/{rule}.log"


def benchmark_of(rule):
    """Where Snakemake writes a rule's runtime and peak memory (read by the report's runtime table)."""
    return f"logs/benchmarks/{rule}.tsv"


def experiment_outputs():
    """Every CSV the experiment rules write."""
    return [
        path for name in EXPERIMENTS for path in registry.output_paths(name).values()
    ]


def trial_scores_files():
    """Every trial-score file this config's experiments read."""
    return sorted(
        {
            path
            for name in EXPERIMENTS
            for path in registry.trial_scores_files(name, settings_of(name)).values()
        }
    )


def figure_inputs(job):
    """The result CSVs the figures of a figure job (specs.FIGURE_JOBS) draw."""
    return sorted(
        {
            f"{registry.RESULTS_DIR}/{csv}"
            for name in FIGURE_JOBS[job]
            for csv in FIGURES[name].reads
        }
    )


def figure_outputs(job):
    """A figure job's PNGs (flagged for `snakemake --report`, with their captions), SVGs and the phone's variants,
    named <figure>_<format> (<figure>_narrow)."""
    outputs = {}
    for name in FIGURE_JOBS[job]:
        files = figure_files(name)
        caption = f"../report/figures/{name}.rst"
        outputs[f"{name}_png"] = report(
            files["png"],
            caption=caption,
            category="Figures",
            subcategory=", ".join(FIGURES[name].claims),
        )
        outputs[f"{name}_svg"] = files["svg"]
        outputs[f"{name}_narrow"] = files["narrow"]
    return outputs


def figure_captions(job):
    """A figure job's captions, as Snakemake's report shows them: the job reruns when one changes."""
    return {name: FIGURES[name].caption_generic() for name in FIGURE_JOBS[job]}


def figure_pngs():
    """The PNGs the report embeds: each figure, and its phone's variant."""
    return [figure_files(name)[kind] for name in FIGURES for kind in ("png", "narrow")]


REPORT_HTML = "reports/report.html"

# The claims' finite-d_k expectations (theory, computed once per config by the expectations rule).
EXPECTATIONS_CSV = "results/expectations.csv"


def all_outputs():
    """Every file the default target builds."""
    figures = [path for name in FIGURES for path in figure_files(name).values()]
    return [
        *experiment_outputs(),
        "results/claims.csv",
        *figures,
        REPORT_HTML,
        *solutions_outputs(),
        *class_outputs(),
    ]


# A learner's solutions (config `solutions`, optional; graded by solutions.smk) and how a learner's
# code is graded, alone or in a class: one seed, one set of limits, one list of modules (the
# defaults are `sdpa-lab grade`'s, sdpa_lab.grading.limits): one file, one grade.
SOLUTIONS_CSV = "results/solutions.csv"
GRADING_SEED = config.get("grading_seed")
GRADING_TIME_LIMIT = config.get("grading_time_limit", grading_limits.TIME_LIMIT)
GRADING_MEMORY_MIB = config.get("grading_memory_mib", grading_limits.MEMORY_MIB)
GRADING_N_SAMPLES = config.get("grading_n_samples", grading_limits.N_SAMPLES)
GRADING_MODULES = list(config.get("grading_modules", COURSE_MODULES))


def grading_resources():
    """A grade's resources: the learner's processes (their cgroup's limit) and the grader, about 300 MiB; each of
    the ten calls may run into the time limit once, and the process restarts after it.
    """
    return {
        "mem_mb": job_mem_mb(GRADING_MEMORY_MIB + 300),
        "runtime": int(10 * (GRADING_TIME_LIMIT + 5) / 60) + 2,
    }


def solutions_outputs():
    """results/solutions.csv when the config names a solutions file, else nothing."""
    return [SOLUTIONS_CSV] if "solutions" in config else []


def solutions_file():
    """The solutions file as an input when it exists (a missing one is graded as missing, not a missing input)."""
    path = Path(config["solutions"])
    return [str(path)] if path.is_file() else []


def sweep_config():
    """The config without `solutions`: what the claims depend on (naming a solutions file reruns no claim)."""
    return {key: value for key, value in config.items() if key not in NOT_SWEEP}


# Settings no experiment reads: a learner's or a class's solutions and how they are graded.
NOT_SWEEP = (
    "solutions",
    "submissions",
    "grading_seed",
    "grading_time_limit",
    "grading_n_samples",
    "grading_points",
    "grading_memory_mib",
    "grading_modules",
    "roster",
    "grading_assignment",
    "grading_overrides",
)


# A class (config `submissions`, a folder; graded by class.smk): one job per learner, then
# the gradebook and a page per learner. Class grading refuses, before any job, where the
# sandbox cannot start (sdpa_lab.grading.sandbox.unavailable says why, in one line).
GRADEBOOK_CSV = "results/class/gradebook.csv"
SCORES_CSV = "results/class/scores.csv"  # one row per learner, for Canvas and Moodle
LMS_IMPORT_CSV = "results/class/lms_import.csv"  # with a roster: in its own format
CLASS_HTML = "reports/class.html"  # the class overview, the instructor's first page


def class_submissions():
    """({learner id: file} of the class folder, and with a `roster` what each of its files
    is, lms.Intake, else None); ({}, None) without `submissions`. ConfigError, one line,
    before any job, when it is no folder or holds no submission (an odd file name is
    graded under a safe id: classroom.learner_ids), or a roster or overrides file is bad.
    """
    if "submissions" not in config:
        return {}, None
    from sdpa_lab.grading.classroom import ClassError, submissions
    from sdpa_lab.grading.lms import IntakeError, class_intake
    from sdpa_lab.grading.overrides import OverridesError, read_overrides
    from sdpa_lab.grading.points import RubricError, rubric
    from sdpa_lab.grading.roster import RosterError
    from sdpa_lab.grading.sandbox import unavailable

    intake = None
    if config.get("grading_assignment") and not config.get("roster"):
        raise ConfigError(
            "grading_assignment: names a column of the roster's Canvas export: set roster too"
        )
    try:
        table = rubric(config.get("grading_points"))
        if config.get("roster"):
            intake = class_intake(
                config["submissions"],
                config["roster"],
                config.get("grading_assignment"),
                table,
            )
            found, learners = intake.graded, intake.learners
        else:
            found = submissions(config["submissions"])
            learners = list(found)
        if config.get("grading_overrides"):
            read_overrides(config["grading_overrides"], learners, table)
    except (ClassError, RubricError, RosterError, IntakeError, OverridesError) as exc:
        raise ConfigError(str(exc)) from None
    why = unavailable()
    if why is not None:
        raise ConfigError(
            f"class grading refuses to run learners' code unsandboxed: {why}"
        )
    return found, intake


CLASS, INTAKE = class_submissions()


def submission_input(wildcards):
    """The learner's file, if its name is its id: Snakemake reads '<x>' in a path as a
    variable, so an odd name is not an input (its digest reruns its grade); nor is a link
    (or anything but a file): its job refuses it unread, and Snakemake must not follow it.
    """
    from sdpa_lab.grading.classroom import refusal

    path = CLASS[wildcards.learner]
    return [str(path)] if wildcards.learner == path.stem and not refusal(path) else []


def learner_modules(wildcards):
    """The course's modules the learner's file names: what reruns its grade when the list changes (the job gives it
    the whole list), so a module added for one learner regrades only those whose file names it.
    """
    from sdpa_lab.grading.modules import named_modules

    return named_modules(CLASS[wildcards.learner], tuple(GRADING_MODULES))


def submission_digest(wildcards):
    """The sha256 of a file that is no input (a link: "", never read): a change reruns it."""
    from sdpa_lab.grading.files import digest

    path = CLASS[wildcards.learner]
    return "" if submission_input(wildcards) else digest(path)


def submission_shown(wildcards):
    """How the learner's record names their file: its path in the class folder with a
    roster (a Moodle folder's file, a zip), else "" (its name)."""
    if INTAKE is None:
        return ""
    return CLASS[wildcards.learner].relative_to(config["submissions"]).as_posix()


def lms_settings():
    """What the gradebook reads beside the grades: the roster, the assignment, the
    overrides (each None where unset), and with a roster what each file is and where the
    import goes."""
    return {
        "roster": config.get("roster"),
        "assignment": config.get("grading_assignment"),
        "overrides": config.get("grading_overrides"),
        "intake": INTAKE.as_params() if INTAKE is not None else None,
        "import_out": lms_outputs().get("lms_import"),
    }


def lms_outputs():
    """results/class/lms_import.csv with a roster, else nothing."""
    return {"lms_import": LMS_IMPORT_CSV} if INTAKE is not None else {}


def lms_inputs():
    """The roster and overrides files, so that editing one redoes the tables and pages."""
    return [
        path for path in (config.get("roster"), config.get("grading_overrides")) if path
    ]


def class_grades():
    """Each learner's grade record (rule grade_submission)."""
    return [f"results/class/grades/{learner}.json" for learner in CLASS]


def class_pages():
    return [f"reports/class/{learner}.html" for learner in CLASS]


def class_outputs():
    """The gradebook, the scores, the overview and the learners' pages when the config names a class, else nothing."""
    if not CLASS:
        return []
    return [
        GRADEBOOK_CSV,
        SCORES_CSV,
        *lms_outputs().values(),
        CLASS_HTML,
        *class_pages(),
    ]


def benchmarks_before_report():
    """The benchmark file of every job the report comes after: its runtime table shows them."""
    draws = [
        benchmark_of(f"trial_scores/{Path(path).stem}") for path in trial_scores_files()
    ]
    return [
        benchmark_of(rule)
        for rule in [*EXPERIMENTS, "expectations", "claims", *FIGURE_JOBS]
    ] + draws


def refuse_costly_run():
    """Print the run's estimated CPU time and disk use; refuse it, before any job, if the disk
    estimate exceeds the free space or if it exceeds an hour without --config confirm_long_run=true.
    """
    drawn = [path for path in trial_scores_files() if Path(path).is_file()]
    lines, problem = cost_gate(config, drawn, free_bytes=shutil.disk_usage(".").free)
    print("\n".join(lines), file=sys.stderr)
    if problem:
        raise WorkflowError(f"sdpa-lab: refused before any job: {problem}")


def calibration_targets():
    """The targets of this snakemake call if each asks for the calibration study (or part of it), else none."""
    targets = [str(t) for t in workflow.dag_settings.targets or ()]
    return targets if targets and all(is_calibration_target(t) for t in targets) else []


def calibration_estimate(targets):
    """The line a run of calibration `targets` prints before any job: the CPU time of the batches it still has to
    run (those the targets name, if they name batches), by each study's measured seconds_per_run.
    """
    seconds = targets_cpu_s(
        targets, load_studies(), done=lambda path: Path(path).is_file()
    )
    return (
        f"sdpa-lab: estimated cost of the calibration study: {cost.duration(seconds)} of CPU "
        "(its batches still to run, by each study's measured seconds_per_run)"
    )


def announce_cost():
    """A run of the calibration study alone prints its own estimate (its batches still to run); any other
    run, the sweep's (refuse_costly_run)."""
    if targets := calibration_targets():
        print(calibration_estimate(targets), file=sys.stderr)
    else:
        refuse_costly_run()


# Only when jobs are about to run: a dry run (-n) or an up-to-date target calls no handler.
# A failed job's outputs are removed by Snakemake; it reruns them next time (the results are
# deterministic), while the outputs of the jobs that succeeded stay.
onstart:
    announce_cost()
    # Temporaries of every file the rules write, by their output patterns: a killed draw of
    # trial scores leaves one under a name of its own settings, maybe no longer in the config.
    sweep_temporaries([*all_outputs(), *rules.trial_scores.output])


onerror:
    # On a cluster that killed a job for memory: the rule and its limit (SLURM says only FAILED).
    for line in out_of_memory_report(log):
        print(line, file=sys.stderr)


def templates():
    """The report's Jinja template and stylesheet: the report reruns when they change."""
    return data_files("report/templates", workflow_dir=workflow.basedir)


# What a job holds besides its own work when it runs as a SLURM job (profiles/slurm): the
# job's Snakemake (the batch step, 143 MB) and the one that runs the rule (its srun step,
# 130-150 MB before the rule's code), measured with sstat on the test cluster
# (tests/pipeline/slurm/cluster.sh). A cluster that enforces memory counts them against mem_mb.
SNAKEMAKE_IN_JOB_MB = 300


def job_mem_mb(own_mb):
    """A rule's mem_mb: its own peak memory and the Snakemake processes of its job on a cluster."""
    return own_mb + SNAKEMAKE_IN_JOB_MB


def mem_mb_forward(settings):
    """forward_shape's memory: a base, twice the weights and three times the inputs (float64) of its largest
    forward, the lesson-shaped one or the one where every dimension differs (other_dimensions).

    Measured peak RSS (forward_shape_rows, one shape): 33 MiB at (1, 6, 16), 132 MiB at (8, 1024, 64), 596 MiB at
    (1, 2048, 4096), 616 MiB at (2048, 1, 4096); this gives 100, 264, 740 and 868.
    """

    def floats(B, T, d_k):
        T_q, T_k, d_v = other_dimensions(T, d_k)
        weights = B * max(T * T, T_q * T_k)
        inputs = max(3 * B * T * d_k, B * (T_q * d_k + T_k * (d_k + d_v)))
        return 2 * weights + 3 * inputs

    return 100 + 8 * max(floats(*shape) for shape in settings["shapes"]) // 2**20


def calibration_study(wildcards):
    """The calibration study a job belongs to (config/calibration/<study>.yaml), checked: a bad
    study file stops the run before any job (workflow/rules/calibration.smk)."""
    return load_study(f"{STUDIES_DIR}/{wildcards.study}.yaml")


def schema_file():
    """The config schema: a space study's sweeps are drawn from it."""
    from sdpa_lab.config import schema_path

    return str(schema_path())
