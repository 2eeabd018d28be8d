"""Thin Snakemake entry point: write reports/report.html from this run's CSVs, figures and benchmarks."""

from pathlib import Path

from sdpa_lab.report.jobs import report_job

report_job(
    Path(snakemake.input.claims).parent,  # noqa: F821 (injected by Snakemake)
    Path(snakemake.input.figures[0]).parent,  # noqa: F821
    snakemake.params.config,  # noqa: F821
    snakemake.output.html,  # noqa: F821
    snakemake.input.benchmarks,  # noqa: F821
    snakemake.log[0],  # noqa: F821
    solutions=next(iter(snakemake.input.solutions), None),  # noqa: F821 (results/solutions.csv, if graded)
    grades=list(snakemake.input.grades),  # noqa: F821 (a class's grade records, if config `submissions`)
)
