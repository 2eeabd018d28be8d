"""B5, B8 (entropy): the unscaled softmax collapses as d_k grows; the scaled one stays spread.

Each trial draws one query and T keys (sdpa_lab.experiments.trial_scores); its
softmax weights under each scale give an entropy and a max weight. Many
independent trials per d_k give a mean with a standard error. Trials are
streamed in chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention, entropy, lesson_entropy, softmax
from sdpa_lab.chunks import chunk_rows
from sdpa_lab.experiments.declaration import SWEEP_COLUMNS, SWEEP_RECORDS, Experiment, Output
from sdpa_lab.experiments.sizes import EXERCISE2_D_K, EXERCISE2_T
from sdpa_lab.experiments.trial_scores import REFERENCE_SCALE, TrialScores, trial_scale, trial_scores
from sdpa_lab.moments import Moments
from sdpa_lab.rows import row_max
from sdpa_lab.scales import SCALES, scale_difference, scale_factor
from sdpa_lab.seeding import lesson_legacy_stream, stream
from sdpa_lab.tables import Rows
from sdpa_lab.validation import check_int, check_int_list, check_seed

ENTROPY_SCALES = (*SCALES, REFERENCE_SCALE)  # the three scales, and their d_k -> infinity limit
QUANTITIES = ("entropy", "max_weight")

# The scales B5 and B8 compare on the same trials: their entropies' per-trial difference
# is recorded too (scale `<a>_minus_<b>`), for its own standard error.
PAIRED_SCALES = (("inv_sqrt_dk", REFERENCE_SCALE), ("inv_dk", "inv_sqrt_dk"))

# The lesson's Exercise 2, literally: one continuing seeded stream, one draw per d_k (EXERCISE2_D_K, EXERCISE2_T:
# sdpa_lab.experiments.sizes, where the cost model reads them too).
SINGLE_DRAW_SCALES = ("none", "inv_sqrt_dk")
EXERCISE2_QUANTITIES = ("sequences", "falls_at_every_step")


def entropy_sweep_rows(seed: int, d_k_values: Sequence[int], T: int, trials: int,
                      scores: Mapping[int, TrialScores] | None = None, attention: Attention = SHIPPED) -> Rows:
    """Mean (and standard error) of the entropy and max weight of `attention`'s weights
    (Attention.weights) per d_k and scale.

    The trials' raw scores are read from scores[d_k] (an .npy file of trial_scores.write_trial_scores,
    or an array of trial_scores.hold_trial_scores) where given, else drawn here: same numbers.
    """
    seed, d_k_values = check_seed(seed), check_int_list(d_k_values, "d_k_values")
    T, trials = check_int(T, "T", minimum=2), check_int(trials, "trials", minimum=2)
    rows = []
    for d_k in d_k_values:
        acc = {(s, quantity): Moments() for s in ENTROPY_SCALES for quantity in QUANTITIES}
        acc |= {(scale_difference(a, b), "entropy"): Moments() for a, b in PAIRED_SCALES}
        path = (scores or {}).get(d_k)
        for raw, q_norm in trial_scores(seed, d_k, T, trials, chunk_rows(T), path):  # (m, T) scores per chunk
            h = {}  # scale -> per-trial entropy (m,)
            for scale in ENTROPY_SCALES:
                w = attention.weights(raw, d_k, trial_scale(scale, d_k, q_norm))  # (m, T)
                h[scale] = entropy(w)
                acc[scale, "entropy"] = acc[scale, "entropy"].merge(Moments.of(h[scale]))
                acc[scale, "max_weight"] = acc[scale, "max_weight"].merge(Moments.of(row_max(w)[:, 0]))
            for a, b in PAIRED_SCALES:
                key = (scale_difference(a, b), "entropy")
                acc[key] = acc[key].merge(Moments.of(h[a] - h[b]))
        for (scale, quantity), m in acc.items():
            for statistic, value in m.summary().items():
                rows.append({"seed": seed, "d_k": d_k, "T": T, "trials": trials, "scale": scale,
                             "quantity": quantity, "statistic": statistic, "value": float(value)})
    return rows


def entropy_single_draw_rows() -> Rows:
    """Exercise 2 as the lesson words it: np.random.seed(42), then for each d_k one query vs 8 keys."""
    rs = lesson_legacy_stream()
    rows = []
    for d_k in EXERCISE2_D_K:
        q = rs.randn(d_k)  # (d_k,)
        K = rs.randn(EXERCISE2_T, d_k)  # (T, d_k)
        raw = K @ q  # (T,)
        for scale in SINGLE_DRAW_SCALES:
            w = softmax(raw * scale_factor(scale, d_k))
            rows.append({"d_k": d_k, "T": EXERCISE2_T, "scale": scale,
                         "entropy": float(lesson_entropy(w))})
    return rows


def exercise2_falls(seed: int, trials: int) -> int:
    """Exercise 2 as many learners would run it: `trials` sequences, each one fresh query vs 8 keys per d_k of
    [4, 16, 64, 256] (the lesson's entropy); how many fall at every step, as the lesson says one will."""
    seed, trials = check_seed(seed), check_int(trials, "trials", minimum=1)
    rng = stream(seed, "exercise2")
    per_sequence = sum(d_k * (EXERCISE2_T + 1) for d_k in EXERCISE2_D_K)  # normals of one sequence
    rows_per_chunk = chunk_rows(per_sequence)
    falls = 0
    for start in range(0, trials, rows_per_chunk):
        m = min(rows_per_chunk, trials - start)
        h = []  # per d_k: (m,) entropies, one draw per sequence
        for d_k in EXERCISE2_D_K:
            q = rng.standard_normal((m, d_k))  # (m, d_k)
            K = rng.standard_normal((m, EXERCISE2_T, d_k))  # (m, T, d_k)
            h.append(lesson_entropy(softmax(np.einsum("mtd,md->mt", K, q))))  # (m,)
        falls += int(np.sum(np.all(np.diff(np.stack(h), axis=0) < 0, axis=0)))
    return falls


def exercise2_rows(seed: int, trials: int, falls: int | None = None) -> Rows:
    """Exercise 2's table (exercise2_falls), its falls counted here unless given (made already: the attention
    plays no part in them)."""
    seed, trials = check_seed(seed), check_int(trials, "trials", minimum=1)
    falls = exercise2_falls(seed, trials) if falls is None else int(falls)
    return [{"seed": seed, "T": EXERCISE2_T, "trials": trials, "quantity": quantity, "count": count,
             "fraction": count / trials}
            for quantity, count in zip(EXERCISE2_QUANTITIES, (trials, falls), strict=True)]


def entropy_sweep_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows entropy_sweep_tables makes from `settings`: per d_k, one per statistic of each (scale, quantity)
    and of each paired difference; the single draw's per lesson d_k and scale; one per Exercise 2 quantity."""
    per_d_k = (len(ENTROPY_SCALES) * len(QUANTITIES) + len(PAIRED_SCALES)) * len(Moments().summary())
    return {"table": len(settings["d_k"]) * per_d_k, "single_draw": len(EXERCISE2_D_K) * len(SINGLE_DRAW_SCALES),
            "exercise2": len(EXERCISE2_QUANTITIES)}


def entropy_sweep_tables(settings: Mapping, trial_scores: Mapping[int, TrialScores],
                         attention: Attention = SHIPPED) -> dict[str, Rows]:
    """The entropy sweep's tables (registry.EXPERIMENTS["entropy_sweep"]) of `attention`'s weights, and the
    lesson's single draw."""
    s = settings
    return {"table": entropy_sweep_rows(s["seed"], s["d_k"], s["T"], s["trials"], trial_scores, attention),
            "single_draw": entropy_single_draw_rows(), "exercise2": exercise2_rows(s["seed"], s["trials"])}


# The experiment this module declares: the registry (experiments/registry.py) gathers it.
def entropy_sweep_work(settings: Mapping) -> dict[str, float]:
    """The cost model's work (DECLARED's `work`): each trial's keys at each d_k, Exercise 2's normals, the call."""
    return {"trial_key": settings["trials"] * settings["T"] * len(settings["d_k"]), "call": 1,
            "exercise2_normal": settings["trials"] * sum(d_k * (EXERCISE2_T + 1) for d_k in EXERCISE2_D_K)}


DECLARED = (
    Experiment(
        "entropy_sweep", "sdpa_lab.experiments.entropy_sweep:entropy_sweep_tables",
        {"table": Output("entropy_sweep.csv",
                         {**SWEEP_COLUMNS, "scale": "str", "quantity": "str", "statistic": "str", "value": "float"},
                         SWEEP_RECORDS),
         "single_draw": Output("entropy_single_draw.csv",
                               {"d_k": "int", "T": "int", "scale": "str", "entropy": "float"}),
         "exercise2": Output("entropy_exercise2.csv",
                             {"seed": "int", "T": "int", "trials": "int", "quantity": "str", "count": "int",
                              "fraction": "float"},
                             {"seed": "seed", "trials": "trials"})},
        claims=("B5", "B8"), section="entropy_sweep", shares_trial_scores=True,
        row_counts="sdpa_lab.experiments.entropy_sweep:entropy_sweep_row_counts",
        work="sdpa_lab.experiments.entropy_sweep:entropy_sweep_work",
        ns_per={"trial_key": 64.9, "exercise2_normal": 8.69, "call": 1.8e+06}),
)
