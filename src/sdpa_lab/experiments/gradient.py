"""B7 (gradient): a saturated softmax passes almost no gradient; the scaled one stays responsive.

Each trial draws one query q ~ N(0, I_dk), T keys K ~ N(0, I) (the trial scores
B5 and B6 use too: sdpa_lab.experiments.trial_scores), values V ~ N(0, I)
of shape (T, d_v) and an upstream gradient g_out ~ N(0, I_dv) standing for
dL/d(out). With the attention's weights p = softmax(scale * K q)
(Attention.weights) and the softmax Jacobian J = diag(p) - p p^T
(Attention.jacobian, Attention.backward), per trial:

- jacobian_norm:       ||J||_F, how much gradient the softmax can pass at all;
- score_grad_norm:     ||J V g_out||_2, the gradient reaching the (scaled) scores;
- raw_score_grad_norm: scale * ||J V g_out||_2, the gradient reaching the raw
  scores K q (and, through them, q and K), so the 1/sqrt(d_k) factor on the
  backward pass is visible too;
- log10_jacobian_norm, log10_score_grad_norm, log10_raw_score_grad_norm: the
  same norms on a log scale. A mean of norms is carried by the rare trials whose
  top two scores nearly tie; the mean of log10 (a geometric mean) shows the
  typical trial. Norms are floored at the smallest normal float64 (LOG_FLOOR)
  before the log.

d_v = min(d_k, D_V_MAX) keeps the values cheap at large d_k; V g_out only sets the
direction and size of dL/dp, not whether the softmax passes it. Trials are
streamed in chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention
from sdpa_lab.chunks import chunk_rows
from sdpa_lab.experiments.declaration import SWEEP_COLUMNS, SWEEP_RECORDS, Experiment, Output
from sdpa_lab.experiments.sizes import D_V_MAX
from sdpa_lab.experiments.trial_scores import REFERENCE_SCALE, TrialScores, trial_scale, trial_scores
from sdpa_lab.moments import Moments
from sdpa_lab.scales import scale_difference
from sdpa_lab.seeding import stream
from sdpa_lab.tables import Rows
from sdpa_lab.validation import check_int, check_int_list, check_seed

# Values are (T, d_v) with d_v = min(d_k, D_V_MAX) (sdpa_lab.experiments.sizes).

# Besides the two scales, their d_k -> infinity limit: scores of unit variance (as in B5).
GRADIENT_SCALES = ("none", "inv_sqrt_dk", REFERENCE_SCALE)
QUANTITIES = ("jacobian_norm", "score_grad_norm", "raw_score_grad_norm",
              "log10_jacobian_norm", "log10_score_grad_norm", "log10_raw_score_grad_norm")

# The scales and quantities B7 compares on the same trials: their per-trial difference is
# recorded too (scale `<a>_minus_<b>`), for its own standard error (of a difference, or of a
# ratio of the two means, whose covariance it gives).
PAIRED = (("inv_sqrt_dk", REFERENCE_SCALE, "jacobian_norm"), ("inv_sqrt_dk", "none", "jacobian_norm"),
          ("inv_sqrt_dk", "none", "log10_jacobian_norm"), ("inv_sqrt_dk", "none", "score_grad_norm"))

# log10 of a norm that underflowed to exactly 0 would be -inf: floor the norms here first.
LOG_FLOOR = float(np.finfo(np.float64).tiny)


def value_dim(d_k: int) -> int:
    """The value width d_v used with head size d_k."""
    return min(d_k, D_V_MAX)


def trial_draws(seed: int, d_k: int, T: int, trials: int, d_v: int,
                scores: TrialScores | None = None) -> Iterator[tuple]:
    """`trials` independent draws in chunks: raw scores K q (m, T), values V (m, T, d_v), g_out (m, d_v), |q| (m,).

    The scores and |q| are the shared trial scores (trial_scores), read from `scores` (a file or a
    held array) if given, else drawn; V and g_out come from this experiment's own streams.
    """
    rows = chunk_rows(T * max(d_v, T))  # bounds both the values (m, T, d_v) and the Jacobians (m, T, T)
    rng_v, rng_g = stream(seed, "gradient", d_k, T).spawn(2)  # separate streams: the draws do not depend on rows
    for raw, q_norm in trial_scores(seed, d_k, T, trials, rows, scores):
        m = len(raw)
        V = rng_v.standard_normal((m, T, d_v))  # (m, T, d_v)
        g_out = rng_g.standard_normal((m, d_v))  # (m, d_v)
        yield raw, V, g_out, q_norm  # (m, T), (m, T, d_v), (m, d_v), (m,)


def gradient_norms(raw: np.ndarray, V: np.ndarray, g_out: np.ndarray, d_k: int, scale,
                   attention: Attention = SHIPPED) -> dict[str, np.ndarray]:
    """Per trial (m,): ||J||_F, ||J V g_out||, c ||J V g_out|| and the log10 of each, for `attention`'s
    weights p = softmax(c * raw) of a head of size d_k and its backward; `scale` as Attention.weights takes it
    (None: the attention's own), c the number it stands for, one or one per trial (m,)."""
    c = np.asarray(attention.score_scale(d_k, scale) if np.ndim(scale) == 0 else scale, dtype=float)
    p = attention.weights(raw, d_k, scale)  # (m, T)
    J = attention.jacobian(p)  # (m, T, T)
    g_p = np.einsum("mtv,mv->mt", V, g_out)  # (m, T): dL/dp = V g_out
    g_scores = attention.backward(p, g_p)  # (m, T): dL/ds = J dL/dp
    jac_norm = np.sqrt(np.sum(J * J, axis=(-2, -1)))  # (m,) Frobenius norm
    score_norm = np.linalg.norm(g_scores, axis=-1)  # (m,)
    return {
        "jacobian_norm": jac_norm,
        "score_grad_norm": score_norm,
        "raw_score_grad_norm": c * score_norm,  # dL/d(raw) = c dL/ds
        "log10_jacobian_norm": np.log10(np.maximum(jac_norm, LOG_FLOOR)),
        "log10_score_grad_norm": np.log10(np.maximum(score_norm, LOG_FLOOR)),
        "log10_raw_score_grad_norm": np.log10(np.maximum(c * score_norm, LOG_FLOOR)),
    }


def gradient_rows(seed: int, d_k_values: Sequence[int], T: int, trials: int,
                 scores: Mapping[int, TrialScores] | None = None, attention: Attention = SHIPPED) -> Rows:
    """Mean, std and standard error of the softmax Jacobian norm and score gradient norms of `attention`'s
    weights per d_k and scale.

    The trials' raw scores are read from scores[d_k] (an .npy file of trial_scores.write_trial_scores,
    or an array of trial_scores.hold_trial_scores) where given, else drawn here: same numbers.
    """
    seed, d_k_values = check_seed(seed), check_int_list(d_k_values, "d_k_values")
    T, trials = check_int(T, "T", minimum=2), check_int(trials, "trials", minimum=2)  # a std needs two trials
    rows = []
    for d_k in d_k_values:
        acc = {(s, q): Moments() for s in GRADIENT_SCALES for q in QUANTITIES}
        acc |= {(scale_difference(a, b), q): Moments() for a, b, q in PAIRED}
        draws = trial_draws(seed, d_k, T, trials, value_dim(d_k), (scores or {}).get(d_k))
        for raw, V, g_out, q_norm in draws:
            norms = {}  # (scale, quantity) -> per-trial norm (m,)
            for scale in GRADIENT_SCALES:
                c = trial_scale(scale, d_k, q_norm)
                for quantity, x in gradient_norms(raw, V, g_out, d_k, c, attention).items():
                    acc[scale, quantity] = acc[scale, quantity].merge(Moments.of(x))
                    norms[scale, quantity] = x
            for a, b, q in PAIRED:
                key = (scale_difference(a, b), q)
                acc[key] = acc[key].merge(Moments.of(norms[a, q] - norms[b, q]))
        for (scale, quantity), m in acc.items():
            for statistic, value in m.summary().items():
                rows.append({"seed": seed, "d_k": d_k, "T": T, "trials": trials, "scale": scale,
                             "quantity": quantity, "statistic": statistic, "value": float(value)})
    return rows


def gradient_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows gradient_tables makes from `settings`: per d_k, one per statistic of each (scale, quantity)
    and of each paired difference."""
    per_d_k = (len(GRADIENT_SCALES) * len(QUANTITIES) + len(PAIRED)) * len(Moments().summary())
    return {"table": len(settings["d_k"]) * per_d_k}


def gradient_tables(settings: Mapping, trial_scores: Mapping[int, TrialScores],
                   attention: Attention = SHIPPED) -> dict[str, Rows]:
    """The gradient experiment's table (registry.EXPERIMENTS["gradient"]), of `attention`'s weights and backward."""
    s = settings
    return {"table": gradient_rows(s["seed"], s["d_k"], s["T"], s["trials"], trial_scores, attention)}


# The experiment this module declares: the registry (experiments/registry.py) gathers it.
def gradient_work(settings: Mapping) -> dict[str, float]:
    """The cost model's work (DECLARED's `work`): the values and upstream gradients drawn, each trial's (T, T)
    Jacobian, the trials, a call per d_k."""
    trials, T, d_ks = settings["trials"], settings["T"], settings["d_k"]
    return {"value_normal": trials * sum((T + 1) * value_dim(d_k) for d_k in d_ks),
            "jacobian_entry": trials * T**2 * len(d_ks), "trial": trials * len(d_ks), "d_k": len(d_ks)}


DECLARED = (
    Experiment(
        "gradient", "sdpa_lab.experiments.gradient:gradient_tables",
        {"table": Output("gradient.csv",
                         {**SWEEP_COLUMNS, "scale": "str", "quantity": "str", "statistic": "str", "value": "float"},
                         SWEEP_RECORDS)},
        claims=("B7",), section="gradient", shares_trial_scores=True,
        row_counts="sdpa_lab.experiments.gradient:gradient_row_counts",
        work="sdpa_lab.experiments.gradient:gradient_work",
        ns_per={"value_normal": 11.1, "jacobian_entry": 17.4, "trial": 816.0, "d_k": 7.06e+05}),
)
