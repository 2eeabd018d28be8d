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


def _rows_where(flat: np.ndarray, T: int) -> np.ndarray:
    """Per row of an (m, T) array raveled into `flat` (booleans): whether any of its entries is True. From the True
    entries' positions (usually few), as NumPy's reduction over a few contiguous entries per row is slow."""
    found = np.zeros(len(flat) // T, dtype=bool)
    found[np.flatnonzero(flat) // T] = True
    return found


def _increasing(x: np.ndarray) -> np.ndarray:
    """Per row of x (m, T): whether it is strictly increasing (a NaN is not)."""
    m, T = x.shape
    flat, step_down = x.ravel(), np.empty(m * T, dtype=bool)
    np.greater(flat[1:], flat[:-1], out=step_down[:-1])
    np.logical_not(step_down, out=step_down)
    step_down.reshape(m, T)[:, -1] = False  # a row's last entry against the next row's first: not compared
    return ~_rows_where(step_down, T)


def trial_flags(raw: np.ndarray, scaled: np.ndarray, w_unscaled: np.ndarray, w_scaled: np.ndarray,
                order: np.ndarray) -> dict[str, np.ndarray]:
    """Per trial (row) of the logits raw and scaled (m, T) and their weights: each QUANTITY's boolean, counted by
    ranking_invariance_rows. `order` (m, T) is a guess at each row's sorting permutation (any permutation gives the
    same booleans; a good guess makes them cheap).

    Where a row is strictly increasing along its `order`, that is its only sorting permutation: every argsort of it
    (stable or not) is `order`, and it has no tie. So a row whose raw and scaled logits both increase along it has
    the same stable ranking, and one whose two weight rows both do has the same naive argsort, no tie and the same
    top weight. Every other row (a tie, a NaN, a disagreement, a wrong guess) is decided by the sorts themselves,
    on those rows alone (an argsort orders each row by its own values: the same order in any stack of rows)."""
    m, T = raw.shape
    flat = order + np.arange(0, m * T, T)[:, None]  # each row's `order` as indices into the raveled (m, T)
    logit = _increasing(np.ravel(raw).take(flat)) & _increasing(np.ravel(scaled).take(flat))
    doubt = ~logit
    if doubt.any():
        a, b = raw[doubt], scaled[doubt]
        logit[doubt] = np.all(np.argsort(a, axis=-1, kind="stable") == np.argsort(b, axis=-1, kind="stable"), axis=-1)
    naive = _increasing(np.ravel(w_unscaled).take(flat)) & _increasing(np.ravel(w_scaled).take(flat))
    unscaled_ties, ties, top1 = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool), naive.copy()
    doubt = ~naive
    if doubt.any():
        a, b = w_unscaled[doubt], w_scaled[doubt]
        naive[doubt] = np.all(np.argsort(a, axis=-1) == np.argsort(b, axis=-1), axis=-1)  # the sort's own tie order
        unscaled_ties[doubt] = _has_ties(a)
        ties[doubt] = unscaled_ties[doubt] | _has_ties(b)
        top1[doubt] = a.argmax(-1) == b.argmax(-1)
    return {"logit_rank_agrees": logit, "weight_argsort_agrees": naive, "unscaled_weight_ties": unscaled_ties,
            # Distinct weights sort like their logits: a disagreement needs a tie.
            "weight_argsort_disagrees_without_ties": ~naive & ~ties,
            "unscaled_weight_underflow": _rows_where(np.ravel(w_unscaled) == 0, T), "top1_agrees": top1}


def ranking_flags(raw64: np.ndarray, d_k: int, attention: Attention = SHIPPED) -> dict[tuple[str, str], np.ndarray]:
    """Per trial of the raw float64 scores raw64 (m, T), in each dtype: trial_flags of the raw and `attention`'s
    scaled logits and weights (Attention.weights), by (dtype, quantity)."""
    # One argsort for every dtype and array: a positive scale, a softmax and a rounding keep the order of distinct
    # values, so it is almost always each row's order (trial_flags checks it, row by row).
    order = np.argsort(raw64, axis=-1)
    flags = {}
    for dtype in DTYPES:
        raw = raw64.astype(dtype)  # (m, T)
        scaled = raw * raw.dtype.type(attention.score_scale(d_k))  # the attention's scaled logits, in dtype
        found = trial_flags(raw, scaled, softmax(raw), attention.weights(raw, d_k), order)
        flags.update({(dtype, quantity): found[quantity] for quantity in QUANTITIES})
    return flags


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
        counts = dict.fromkeys(((dtype, quantity) for dtype in DTYPES for quantity in QUANTITIES), 0)
        for raw64, _ in trial_scores(seed, d_k, T, trials, chunk_rows(T), (scores or {}).get(d_k)):
            for key, x in ranking_flags(raw64, d_k, attention).items():
                counts[key] += int(np.count_nonzero(x))
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
def ranking_invariance_work(settings: Mapping) -> dict[str, float]:
    """The cost model's work (DECLARED's `work`): each trial's keys at each d_k, and the call."""
    return {"trial_key": settings["trials"] * settings["T"] * len(settings["d_k"]), "call": 1}


DECLARED = (
    Experiment(
        "ranking_invariance", "sdpa_lab.experiments.ranking_invariance:ranking_invariance_tables",
        {"table": Output("ranking_invariance.csv",
                         {**SWEEP_COLUMNS, "dtype": "str", "quantity": "str", "count": "int", "fraction": "float"},
                         SWEEP_RECORDS)},
        claims=("B6",), section="ranking_invariance", shares_trial_scores=True,
        row_counts="sdpa_lab.experiments.ranking_invariance:ranking_invariance_row_counts",
        work="sdpa_lab.experiments.ranking_invariance:ranking_invariance_work",
        ns_per={"trial_key": 181.0, "call": 6.14e+05}),
)
