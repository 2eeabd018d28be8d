"""Thin Snakemake entry point: the class's grade records into results/class/gradebook.csv and one page per learner."""

from pathlib import Path

from sdpa_lab.grading.classroom import gradebook_job

gradebook_job(
    list(snakemake.input.grades),  # noqa: F821 (injected by Snakemake)
    snakemake.output.csv,  # noqa: F821
    str(Path(snakemake.output.pages[0]).parent),  # noqa: F821 (reports/class: a class has one learner at least)
    snakemake.log[0],  # noqa: F821
)
