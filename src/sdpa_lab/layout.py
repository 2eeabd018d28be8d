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
