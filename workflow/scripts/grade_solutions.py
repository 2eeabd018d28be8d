"""Thin Snakemake entry point: grade the learner's solutions file into results/solutions.csv (never fails on it)."""

from sdpa_lab.grading.grade import solutions_job

solutions_job(
    snakemake.params.solutions,  # noqa: F821 (injected by Snakemake)
    snakemake.output.csv,  # noqa: F821
    snakemake.params.time_limit,  # noqa: F821
    snakemake.params.memory_mib,  # noqa: F821
    snakemake.log[0],  # noqa: F821
    seed=snakemake.params.seed,  # noqa: F821
    n_samples=snakemake.params.n_samples,  # noqa: F821
    modules=tuple(snakemake.params.modules),  # noqa: F821
    points=snakemake.params.points,  # noqa: F821
)
