"""Thin Snakemake entry point: the class's grade records into results/class/gradebook.csv and one page per learner."""

from sdpa_lab.grading.classroom import gradebook_job

gradebook_job(
    list(snakemake.input.grades),  # noqa: F821 (injected by Snakemake)
    snakemake.output.csv,  # noqa: F821
    snakemake.params.pages_dir,  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
