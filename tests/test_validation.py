"""The experiment functions, called directly, refuse bad arguments with a ValueError naming the argument (not a
NumPy traceback), and run on the smallest good ones (sdpa_lab.validation's checks)."""

from __future__ import annotations

import pytest

from sdpa_lab.experiments.entropy_sweep import entropy_sweep_rows
from sdpa_lab.experiments.forward_shape import forward_shape_rows
from sdpa_lab.experiments.ranking_invariance import ranking_invariance_rows
from sdpa_lab.experiments.variance import variance_rows

GOOD = {
    variance_rows: {"seed": 1, "d_k_values": [4], "n_pairs": 100},
    entropy_sweep_rows: {"seed": 1, "d_k_values": [4], "T": 4, "trials": 10},
    ranking_invariance_rows: {"seed": 1, "d_k_values": [4], "T": 4, "trials": 10},
    forward_shape_rows: {"seed": 1, "shapes": [[1, 2, 3]]},
}

BAD_ARGS = [
    (variance_rows, {"seed": -1}, "seed"),
    (variance_rows, {"seed": True}, "seed"),
    (variance_rows, {"seed": 1.0}, "seed"),
    (variance_rows, {"d_k_values": [0]}, r"d_k_values\[0\]"),
    (variance_rows, {"d_k_values": [4, -2]}, r"d_k_values\[1\]"),
    (variance_rows, {"d_k_values": [2.5]}, r"d_k_values\[0\]"),
    (variance_rows, {"d_k_values": []}, "d_k_values must not be empty"),
    (variance_rows, {"d_k_values": 4}, "d_k_values must be a list"),
    (variance_rows, {"n_pairs": 0}, "n_pairs"),
    (variance_rows, {"n_pairs": 1}, "n_pairs"),
    (entropy_sweep_rows, {"T": 1}, "T must"),
    (entropy_sweep_rows, {"trials": 0}, "trials"),
    (entropy_sweep_rows, {"d_k_values": []}, "d_k_values"),
    (entropy_sweep_rows, {"seed": -5}, "seed"),
    (ranking_invariance_rows, {"T": 1}, "T must"),
    (ranking_invariance_rows, {"trials": 0}, "trials"),
    (ranking_invariance_rows, {"d_k_values": ["4"]}, r"d_k_values\[0\]"),
    (forward_shape_rows, {"shapes": []}, "shapes must not be empty"),
    (forward_shape_rows, {"shapes": [[1, 0, 3]]}, r"shapes\[0\]\[1\]"),
    (forward_shape_rows, {"shapes": [[1, 2]]}, r"shapes\[0\]"),
    (forward_shape_rows, {"shapes": [[1, 2, 3], [2, 3, -1]]}, r"shapes\[1\]\[2\]"),
    (forward_shape_rows, {"shapes": [[1, 2, 3], [64, 4096, 8]]}, r"shapes\[1\] = \[64, 4096, 8\]: .*bounded memory"),
    (forward_shape_rows, {"seed": -1}, "seed"),
]


@pytest.mark.parametrize(
    "func, override, named", BAD_ARGS,
    ids=[f"{f.__name__}-{list(o)[0]}={list(o.values())[0]!r}" for f, o, _ in BAD_ARGS]
)
def test_experiment_functions_refuse_bad_arguments(func, override, named):
    with pytest.raises(ValueError, match=named):
        func(**{**GOOD[func], **override})


@pytest.mark.parametrize("func", list(GOOD), ids=[f.__name__ for f in GOOD])
def test_experiment_functions_accept_good_arguments(func):
    assert len(func(**GOOD[func])) > 0  # rows
