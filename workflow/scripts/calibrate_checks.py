"""Thin Snakemake entry point: the calibration batches copied into checks.csv (sdpa_lab.calibration.tables_jobs)."""

from sdpa_lab.calibration.tables_jobs import checks_job

checks_job(snakemake.input.batches, snakemake.output[0], snakemake.log[0])  # noqa: F821 (injected by Snakemake)
