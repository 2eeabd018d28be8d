"""Thin Snakemake entry point: one batch of calibration runs (sdpa_lab.calibration.runner.batch_job)."""

from pathlib import Path

from sdpa_lab.calibration.runner import batch_job

batch_job(
    snakemake.wildcards.study,  # noqa: F821 (injected by Snakemake)
    snakemake.params.settings,  # noqa: F821
    snakemake.wildcards.arm,  # noqa: F821
    int(snakemake.wildcards.batch),  # noqa: F821
    snakemake.output[0],  # noqa: F821
    snakemake.input.expectations or None,  # noqa: F821 (none for a space study)
    Path(snakemake.input.fixed[0]).parent,  # noqa: F821
    snakemake.log[0],  # noqa: F821
    snakemake.input.sweeps or None,  # noqa: F821 (a space study's drawn sweeps)
    snakemake.output.share,  # noqa: F821
    snakemake.input.draws[0] if snakemake.input.draws else None,  # noqa: F821 (if the arms share the draws)
)
