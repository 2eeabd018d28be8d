"""Thin Snakemake entry point: write reports/report.html from this run's CSVs, figures and benchmarks."""

from pathlib import Path

from sdpa_lab.report.jobs import report_job
from sdpa_lab.shutdown import skip_final_collection

skip_final_collection()  # a job's process: no last garbage collection at exit (sdpa_lab.shutdown)

report_job(
    Path(snakemake.input.claims).parent,  # noqa: F821 (injected by Snakemake)
    Path(snakemake.input.figures[0]).parent,  # noqa: F821
    snakemake.config,  # noqa: F821
    snakemake.output.html,  # noqa: F821
    snakemake.input.benchmarks,  # noqa: F821
    snakemake.log[0],  # noqa: F821
)
