"""B6: a positive scale changes how sharp the weights are, never the order of the keys.

The order is decided on the logits (scores), where a positive scale is
monotone. A naive argsort of the *weights* is measured separately: once exp
underflows to exactly 0, several keys tie and the argsort order is arbitrary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention, softmax
from sdpa_lab.chunks import chunk_rows
from sdpa_lab.experiments.declaration import SWEEP_COLUMNS, SWEEP_RECORDS, Experiment, Output
from sdpa_lab.experiments.trial_scores import TrialScores, trial_scores
from sdpa_lab.tables import Rows
from sdpa_lab.validation import check_int, check_int_list, check_seed

DTYPES = ("float64", "float32")
# What is counted per d_k and dtype, one row each.
QUANTITIES = ("logit_rank_agrees", "weight_argsort_agrees", "unscaled_weight_ties",
              "weight_argsort_disagrees_without_ties", "unscaled_weight_underflow", "top1_agrees")


def _has_ties(w: np.ndarray) -> np.ndarray:
    """Per row of w (m, T): whether two entries are exactly equal."""
    s = np.sort(w, axis=-1)
    return np.any(s[:, 1:] == s[:, :-1], axis=-1)


def ranking_invariance_rows(seed: int, d_k_values: Sequence[int], T: int, trials: int,
                           scores: Mapping[int, TrialScores] | None = None, attention: Attention = SHIPPED) -> Rows:
    """Per d_k: fraction of trials whose scaled (by `attention`'s own scale) and unscaled rankings agree,
    on logits and on weights (Attention.weights).

    The trials' raw scores are read from scores[d_k] (an .npy file of trial_scores.write_trial_scores,
    or an array of trial_scores.hold_trial_scores) where given, else drawn here: same numbers.
    """
    seed, d_k_values = check_seed(seed), check_int_list(d_k_values, "d_k_values")
    T, trials = check_int(T, "T", minimum=2), check_int(trials, "trials", minimum=1)
    rows = []
    for d_k in d_k_values:
        counts = {(dtype, quantity): 0 for dtype in DTYPES for quantity in QUANTITIES}

        def add(dtype: str, quantity: str, n: int, counts: dict = counts) -> None:
            counts[dtype, quantity] += int(n)

        for raw64, _ in trial_scores(seed, d_k, T, trials, chunk_rows(T), (scores or {}).get(d_k)):
            for dtype in DTYPES:
                raw = raw64.astype(dtype)  # (m, T)
                scaled = raw * raw.dtype.type(attention.score_scale(d_k))  # the attention's scaled logits, in dtype
                same_logit_rank = np.all(
                    np.argsort(raw, axis=-1, kind="stable") == np.argsort(scaled, axis=-1, kind="stable"),
                    axis=-1,
                )
                w_unscaled, w_scaled = softmax(raw), attention.weights(raw, d_k)
                same_naive_rank = np.all(np.argsort(w_unscaled, axis=-1) == np.argsort(w_scaled, axis=-1), axis=-1)
                add(dtype, "logit_rank_agrees", same_logit_rank.sum())
                add(dtype, "weight_argsort_agrees", same_naive_rank.sum())
                ties = _has_ties(w_unscaled) | _has_ties(w_scaled)
                add(dtype, "unscaled_weight_ties", _has_ties(w_unscaled).sum())
                # Distinct weights sort like their logits: a disagreement needs a tie.
                add(dtype, "weight_argsort_disagrees_without_ties", (~same_naive_rank & ~ties).sum())
                add(dtype, "unscaled_weight_underflow", np.any(w_unscaled == 0, axis=-1).sum())
                add(dtype, "top1_agrees", (w_unscaled.argmax(-1) == w_scaled.argmax(-1)).sum())
        for (dtype, quantity), n in counts.items():
            rows.append({"seed": seed, "d_k": d_k, "T": T, "trials": trials, "dtype": dtype,
                         "quantity": quantity, "count": n, "fraction": n / trials})
    return rows


def ranking_invariance_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows ranking_invariance_tables makes from `settings`: one per d_k, dtype and quantity."""
    return {"table": len(settings["d_k"]) * len(DTYPES) * len(QUANTITIES)}


def ranking_invariance_tables(settings: Mapping, trial_scores: Mapping[int, TrialScores],
                              attention: Attention = SHIPPED) -> dict[str, Rows]:
    """The ranking experiment's table (registry.EXPERIMENTS["ranking_invariance"]) of `attention`'s weights."""
    s = settings
    return {"table": ranking_invariance_rows(s["seed"], s["d_k"], s["T"], s["trials"], trial_scores, attention)}


# The experiment this module declares: the registry (experiments/registry.py) gathers it.
DECLARED = (
    Experiment(
        "ranking_invariance", "sdpa_lab.experiments.ranking_invariance:ranking_invariance_tables",
        {"table": Output("ranking_invariance.csv",
                         {**SWEEP_COLUMNS, "dtype": "str", "quantity": "str", "count": "int", "fraction": "float"},
                         SWEEP_RECORDS)},
        claims=("B6",), section="ranking_invariance", shares_trial_scores=True,
        row_counts="sdpa_lab.experiments.ranking_invariance:ranking_invariance_row_counts"),
)
