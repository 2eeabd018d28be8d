# sdpa-lab: every claim of the scaled dot-product attention lesson, re-measured.
# This file is a table of contents; the rules live in workflow/rules/.

from snakemake.utils import min_version

min_version("9.0")


from pathlib import Path

from sdpa_lab.config_file import read_config_file

# Read the config safely first: a YAML syntax error is reported with its line and column. So is
# one in a --configfile, which Snakemake has read already (keeping the last of a duplicate key).
if Path("config/config.yaml").exists():
    read_config_file("config/config.yaml")
for _configfile in workflow.overwrite_configfiles:
    read_config_file(_configfile)


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/calibration.smk"


if "solutions" in config:

    include: "workflow/rules/solutions.smk"


if "submissions" in config:

    include: "workflow/rules/class.smk"


code_inputs.save_store(IMPORTS_STORE)  # every rule's code inputs are known now


# On a cluster (profiles/slurm) these run on the submitting machine. The lesson's three
# replications are the same few seconds of work whatever the config (the lesson's own
# sizes), so a cluster never makes them faster; the claims, figures and report take
# seconds each after every experiment. As SLURM jobs they would add a job's start-ups
# and status checks to every run.
localrules:
    lesson_variance,
    lesson_softmax_collapse,
    lesson_forward,
    expectations,
    claims,
    figures_plain,
    figures_intervals,
    report,


rule all:
    default_target: True
    input:
        all_outputs(),


# A class alone (config `submissions`, workflow/rules/class.smk): its gradebook and pages,
# without the experiments and the report; nothing without a class.
rule grade_class:
    input:
        class_outputs(),


# The calibration study of the tolerances (workflow/rules/calibration.smk), not part of `all`.
rule calibration:
    input:
        CALIBRATION_REPORT,
        f"{CALIBRATION_DIR}/checks.csv",
