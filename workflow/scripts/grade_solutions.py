"""Thin Snakemake entry point: grade the learner's solutions file into results/solutions.csv (never fails on it)."""

from sdpa_lab.grading.grade import solutions_job

solutions_job(
    snakemake.params.solutions,  # noqa: F821 (injected by Snakemake)
    snakemake.output.csv,  # noqa: F821
    snakemake.params.time_limit,  # noqa: F821
    snakemake.params.memory_mib,  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
