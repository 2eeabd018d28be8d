"""Sweeps the calibration tests share."""

from sdpa_lab.config import check_config

# The schema's smallest sizes (as config/calibration/smallest.yaml), a cheap run: what it changes from the
# defaults, filled in.
SMALLEST = check_config({
    "seed": 11,
    "variance": {"d_k": [1, 2, 4], "n_pairs": 1000},
    "entropy_sweep": {"d_k": [1, 2, 4], "T": 2, "trials": 100},
    "ranking_invariance": {"d_k": [1, 2, 4], "T": 2, "trials": 100},
    "forward_shape": {"shapes": [[1, 1, 1]]},
    "gradient": {"d_k": [1, 2, 4], "T": 2, "trials": 100},
    "learning": {"d_k": [1, 2, 4], "T": 2, "runs": 10, "steps": 1, "learning_rates": [0.1, 1.0]},
})
