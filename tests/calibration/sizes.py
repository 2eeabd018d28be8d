"""Sweeps the calibration tests share."""

from sdpa_lab.calibration import space
from sdpa_lab.config import check_config, load_schema

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

# The tests' space studies draw their configs just above the cheapest one (every size at its lowest, priced by the
# cost model), so their draws stay quick; derived, so an experiment's lowest sizes move it instead of breaking it.
SPACE_STUDY_HEADROOM = 0.03
SPACE_STUDY_BUDGET = round(space.cpu_seconds(space.lowest(load_schema(), load_schema())) + SPACE_STUDY_HEADROOM, 2)
