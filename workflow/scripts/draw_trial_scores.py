"""Thin Snakemake entry point: draw the trial scores of one (seed, d_k, T, trials) into an .npy file."""

from sdpa_lab.experiments.trial_scores import draw_job

w = snakemake.wildcards  # noqa: F821 (injected by Snakemake)
draw_job(int(w.seed), int(w.d_k), int(w.T), int(w.trials), snakemake.output[0], snakemake.log[0])  # noqa: F821
