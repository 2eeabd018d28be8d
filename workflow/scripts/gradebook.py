"""Thin Snakemake entry point: the class's grade records into the gradebook, the LMS's scores (and, with a roster,
its import), the class overview and one page per learner."""

from pathlib import Path

from sdpa_lab.grading.gradebook import gradebook_job

gradebook_job(
    list(snakemake.input.grades),  # noqa: F821 (injected by Snakemake)
    snakemake.output.csv,  # noqa: F821
    str(Path(snakemake.output.pages[0]).parent),  # noqa: F821 (reports/class: a class has one learner at least)
    lms_out=snakemake.output.scores,  # noqa: F821
    overview_out=snakemake.output.overview,  # noqa: F821
    points=snakemake.params.points,  # noqa: F821
    log_path=snakemake.log[0],  # noqa: F821
    lms=snakemake.params.lms,  # noqa: F821 (roster, assignment, overrides, intake, import_out: None without a roster)
)
