# Config checking and small helpers shared by the rules.

from snakemake.io import report as for_report  # below, `report` is sdpa_lab.previous.report
import hashlib
import json
from pathlib import Path

from snakemake.utils import validate

import sdpa_lab

# Parse-time imports stay light (no pandas, no matplotlib): every snakemake call, a no-op too, pays for them.
from sdpa_lab.config import ConfigError, config_errors
from sdpa_lab.io import write_text_if_changed
from sdpa_lab.layout import OUTPUTS, TRIAL_SCORES, TRIAL_SCORES_JOB, trial_scores_files
from sdpa_lab.report.specs import FIGURES, figure_files

# Our own check first: one clear line per bad setting, before any job runs.
_errors = config_errors(config)
if _errors:
    raise ConfigError("invalid configuration:\n  " + "\n  ".join(_errors))
validate(config, schema="../schemas/config.schema.yaml")


# The package code each kind of job runs: a job reruns when its code changes, as it does
# when its script changes (Snakemake's own code trigger only sees the script).
PACKAGE = Path(sdpa_lab.__file__).parent
NOT_EXPERIMENT_CODE = {"claims.py", "cli.py", "results.py", "previous.py"}
EXPERIMENT_CODE = sorted(
    str(p) for p in [*PACKAGE.glob("*.py"), *(PACKAGE / "experiments").glob("*.py")]
    if p.name not in NOT_EXPERIMENT_CODE
)
TRIAL_SCORES_CODE = [str(PACKAGE / name) for name in
                     ("experiments/trial_scores.py", "seeding.py", "validation.py", "joblog.py", "io.py")]
CLAIMS_CODE = sorted(str(p) for p in (PACKAGE / "claims").glob("*.py")) + [str(PACKAGE / "results.py")]


def outputs_of(experiment):
    """The named outputs of an experiment rule, as the package declares them (flagged for `snakemake --report`)."""
    return {key: for_report(path, caption="../report/result.rst", category="Results")
            for key, path in OUTPUTS[experiment].items()}


def settings_of(experiment):
    """The settings `experiment` reads: the seed and its own section (none for the lesson replications)."""
    if experiment not in config:
        return {}
    return {"seed": config["seed"], experiment: config[experiment]}


# Beside sdpa_lab.previous's store: not a result, only the settings some results were made with.
SETTINGS = ".snakemake/sdpa-lab-settings/{experiment}-{digest}.json"


def settings_file(experiment):
    """A file holding the settings `experiment` reads, named after their digest.

    It is an input of the experiment's rule: editing a section of config/config.yaml
    changes the name, and Snakemake reruns a job whose set of inputs changed, so
    exactly that experiment reruns; going back to settings already run finds their
    file, and their results, up to date. (Not Snakemake's `params:` trigger, which
    does the same but imports pandas on every call, a quarter of a second on a no-op.)
    """
    text = json.dumps(settings_of(experiment), sort_keys=True, indent=2) + "\n"
    path = SETTINGS.format(experiment=experiment, digest=hashlib.sha256(text.encode()).hexdigest()[:16])
    write_text_if_changed(text, path)  # written once: an existing file keeps its time
    return path


def trial_scores_inputs(experiment):
    """The shared trial-score files (rule trial_scores) `experiment` reads, one per d_k."""
    return list(trial_scores_files(config, experiment).values())


def experiment_outputs():
    """Every CSV the experiment rules write."""
    return [path for outs in OUTPUTS.values() for path in outs.values()]


REPORT_HTML = "reports/report.html"


def report_outputs():
    """The report's figures (workflow/rules/report.smk) and the HTML report."""
    return [path for name in FIGURES for path in figure_files(name).values()] + [REPORT_HTML]


def all_outputs():
    """Every file the default target builds."""
    return experiment_outputs() + ["results/claims.csv"] + report_outputs()


# A failed or interrupted run must not lose results. Snakemake deletes a job's
# outputs before running it and again if it fails; sdpa_lab.previous links
# every output aside at the start and, at the end, gives each output the run
# removed but did not rebuild back as <path>.previous (never under its own
# name, where it would pass for a result of the current config).
import sys

from sdpa_lab.previous import report, settle, snapshot, sweep_temporaries
from sdpa_lab.shutdown import cancel_pending_timers, skip_final_collection

skip_final_collection()  # every snakemake call, a no-op too, exits without a last garbage collection (a third of a second)


def declared_outputs():
    """Every output file a rule of this workflow declares (without wildcards)."""
    return sorted({str(f) for r in workflow.rules for f in r.output if "{" not in str(f)})


onstart:
    sweep_temporaries(declared_outputs())
    snapshot(declared_outputs())


onsuccess:
    settle(declared_outputs())
    cancel_pending_timers()  # else Snakemake idles up to a second before it exits (sdpa_lab.shutdown)


onerror:
    for line in report(settle(declared_outputs())):
        print(line, file=sys.stderr)
    cancel_pending_timers()
