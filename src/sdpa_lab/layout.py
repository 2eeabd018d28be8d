"""Where every experiment's tables land: standard library only.

The Snakefile imports this at parse time (workflow/rules/common.smk), so it must stay
light: no pandas, no matplotlib. `sdpa_lab.pipeline` re-exports `OUTPUTS`.
"""

from __future__ import annotations

# Experiment name -> {output name: path}, relative to the working directory.
# The output names are the keys of each rule's `output:` in workflow/rules/experiments.smk.
OUTPUTS: dict[str, dict[str, str]] = {
    "variance": {"table": "results/variance.csv"},
    "entropy_sweep": {"table": "results/entropy_sweep.csv", "single_draw": "results/entropy_single_draw.csv"},
    "ranking_invariance": {"table": "results/ranking_invariance.csv"},
    "forward_shape": {"table": "results/forward_shape.csv"},
    "gradient": {"table": "results/gradient.csv"},
    "learning": {"table": "results/learning.csv", "curves": "results/learning_curves.csv"},
    "lesson_variance": {"table": "results/lesson_variance.csv"},
    "lesson_softmax_collapse": {"table": "results/lesson_softmax_collapse.csv"},
    "lesson_forward": {"table": "results/lesson_forward.csv"},
}

# The trial scores (query against T keys) that B5, B6 and B7 share: drawn once per
# (seed, d_k, T, trials) by their own job (rule trial_scores), read by these experiments.
TRIAL_SCORES_JOB = "seed{seed}_T{T}_trials{trials}_dk{d_k}"  # names the file, and its job's log and benchmark
TRIAL_SCORES = f"results/trial_scores/{TRIAL_SCORES_JOB}.npy"
SHARES_TRIAL_SCORES = ("entropy_sweep", "ranking_invariance", "gradient")


def trial_scores_files(config: dict, experiment: str) -> dict[int, str]:
    """The trial-score file of each d_k `experiment` sweeps under `config` (no file for other experiments)."""
    if experiment not in SHARES_TRIAL_SCORES:
        return {}
    section = config[experiment]
    return {d_k: TRIAL_SCORES.format(seed=config["seed"], T=section["T"], trials=section["trials"], d_k=d_k)
            for d_k in section["d_k"]}
