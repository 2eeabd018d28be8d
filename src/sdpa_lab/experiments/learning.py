"""B10 (learning): without the scale, does a wide attention head stop learning?

The task, per run: one query q (d_k,), T keys K (T, d_k) and values V (T, d_v),
all N(0, 1), and a target key j* drawn uniformly; the target is V[j*]. The head
outputs out = softmax(scale * K q) V, with the attention's weights and scale
(Attention.weights; its Jacobian product Attention.backward),
and the loss is L(q) = 0.5 ||out - V[j*]||^2.
Plain gradient descent on q (K, V fixed) runs for a fixed number of steps from
the same initial q, K, V, j* under both scales, for every learning rate of a
grid. Each scale's best learning rate is picked on `runs` selection runs of their
own (a separate stream) and scored on the `runs` runs, so the score is not biased
by the pick; per d_k, the runs that only the scaled, or only the unscaled, head
learns at its best learning rate are counted too (a paired comparison).

A run succeeds when its loss falls below `loss_threshold` times its initial
loss at some step within the budget. d_v = min(d_k, D_V_MAX): the loss (and
its gradient) grows with d_v, and capping it keeps one learning-rate grid
meaningful across d_k.

Statistics per (d_k, scale, lr), over the runs:
- success_fraction: fraction of runs that succeed;
- mean_final_relative_loss: mean of L(final) / L(initial);
- median_steps_to_threshold: median number of steps to succeed, counting a run
  that never succeeds as steps + 1 (so a value of steps + 1 means "the median
  run did not succeed within the budget");
- mean_initial_loss, mean_final_loss: absolute losses, to show where the runs
  start (an unscaled wide head can start saturated on the right key, with a
  tiny loss it cannot improve on).
Per d_k and head, at the head's best lr, B10's premises at the scored runs'
start, the largest over the runs (experiments.learning_premises): the scaled
head's weights against softmax(K q / sqrt(d_k)), each head's derivative of the
loss along q against a central finite difference, and the sizes their rounding
bounds need.

A run whose initial loss is exactly 0 never succeeds: its loss cannot fall, and
it learned nothing (its relative loss is recorded as 0). In float64 that happens
when an unscaled head starts saturated on the target key (the output rounds to
V[j*] once the top score leads by more than about 37); counted as successes,
such runs made the saturated head look as if it learned (with one step and a
threshold near 0, only it could "succeed").

At the larger learning rates of the grid the descent is chaotic: changing q0 by
one part in 10^15 changes some runs' loss after the 200 steps by tens of percent
(d_k = 4 unscaled: up to 27% at lr = 1, 69% at lr = 3), where at lr = 0.01 it
stays at rounding level. The mean losses at such rates therefore depend on the
order of the floating-point operations: on the default config, following the
descent on the scores (see `descent`) instead of on q moves some mean final
losses by up to 7%, mean final relative losses by up to 5%, and the mean
relative-loss curves at the best learning rates (learning_curves.csv) by up to
4%. The success fractions, at every learning rate, and the best learning
rates, on which B10 is decided, come out the same both ways. The descent now
follows the raw scores K q, which the attention scales at every step, as the
forward does: with d_k a power of 4 (the default sweep) the scale is a power
of 2 and every number is the same bit for bit as following the scaled scores;
at other d_k they differ by rounding, which those rates amplify.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention
from sdpa_lab.chunks import chunk_rows
from sdpa_lab.experiments import learning_premises as premises
from sdpa_lab.experiments.declaration import Experiment, Output
from sdpa_lab.experiments.sizes import D_V_MAX, gram_fits
from sdpa_lab.rows import row_sum
from sdpa_lab.scales import scale_arg
from sdpa_lab.seeding import stream
from sdpa_lab.tables import Rows
from sdpa_lab.validation import check_int, check_int_list, check_seed

# Values are (T, d_v) with d_v = min(d_k, D_V_MAX) (sdpa_lab.experiments.sizes).

# The scales B10 compares: the lesson's and none.
LEARNING_SCALES = ("none", "inv_sqrt_dk")
STATISTICS = ("success_fraction", "mean_final_relative_loss", "median_steps_to_threshold",
              "mean_initial_loss", "mean_final_loss", "starts_on_target")

# Rows of the same runs under both scales at their best learning rates (scale `inv_sqrt_dk_minus_none`,
# lr = the scaled head's): how many runs only the scaled head, and only the unscaled head, learns; a
# paired difference of the success fractions needs them.
PAIRED_SCALE = "inv_sqrt_dk_minus_none"
PAIRED_STATISTICS = ("only_scaled_succeeds", "only_unscaled_succeeds")

# B10's premises at each scored run's start (experiments.learning_premises), per d_k and head, the largest over the
# runs: each head's scale argument and its scale as the lesson writes it ("d_k": 1/sqrt(d_k)); rows at the head's best
# learning rate (the premises do not depend on it).
PREMISE_SCALES = {"none": (1.0, None), "inv_sqrt_dk": (None, "d_k")}

# learning_curves.csv: step 0 and about this many log-spaced steps up to `steps`.
N_CHECKPOINTS = 20


def value_dim(d_k: int) -> int:
    """The value width d_v used with head size d_k."""
    return min(d_k, D_V_MAX)


def score_loss_and_grad(raw, V, target, d_k: int, scale=None, attention: Attention = SHIPPED):
    """The loss 0.5 ||softmax(z) V - target||^2 of `attention`'s weights of raw scores `raw` of a head of size
    d_k, z = c raw (c: Attention.score_scale of `scale`, None for the attention's own), and its gradient with
    respect to the scaled scores z (its backward).

    raw: (..., T) scores q.k, V: (..., T, d_v), target broadcasting against the output (..., d_v).
    Returns loss (...) and dL/dz (..., T); `raw` is not changed.
    """
    p = attention.weights(raw, d_k, scale)  # (..., T) attention weights
    r = p @ V  # (..., d_v)
    r -= target  # dL/d(out)
    g_p = r @ np.swapaxes(V, -1, -2)  # (..., T) dL/dp = V r
    return 0.5 * row_sum(r * r)[..., 0], attention.backward(p, g_p)  # dL/dz = J V r, J = diag(p) - p p^T


def run_chunks(rng: np.random.Generator, runs: int, T: int, d_k: int, d_v: int, n_lrs: int = 1):
    """The runs' initial queries q0 (m, d_k), keys K (m, T, d_k), values V (m, T, d_v) and targets V[j*]
    (m, d_v), in chunks of m runs, m * max(n_lrs, T) * max(d_k, T) near CHUNK_ELEMENTS.
    The draws do not depend on the chunk size."""
    rng_q, rng_k, rng_v, rng_j = rng.spawn(4)  # separate streams: changing d_v does not change q0 or K
    j_star = rng_j.integers(T, size=runs)  # (R,) target key, uniform: all at once, R integers
    # keys (m, T, d_k), the descent's Gram matrices (m, T, T) and scores (m, n_lrs, T): memory stays bounded
    per_chunk = chunk_rows(max(n_lrs, T) * max(d_k, T))
    for start in range(0, runs, per_chunk):
        m = min(per_chunk, runs - start)
        q0 = rng_q.standard_normal((m, d_k))
        K = rng_k.standard_normal((m, T, d_k))
        V = rng_v.standard_normal((m, T, d_v))
        yield q0, K, V, V[np.arange(m), j_star[start:start + m]]


def descent(q0, K, V, target, scale, lrs: Sequence[float], steps: int,
            attention: Attention = SHIPPED, through_gram: bool | None = None) -> Iterator[np.ndarray]:
    """Losses (R, L) after 0, 1, ..., steps steps of gradient descent on q, one step at a time,
    for R runs and each of L learning rates, the head's scale `scale` as Attention.weights takes it
    (None: `attention`'s own); or, for a sequence of S scales (numbers), the same runs under each, (S, R, L).

    q0: (R, d_k), K: (R, T, d_k), V: (R, T, d_v), target: (R, d_v). Entry [r, l] of the
    t-th yield is the loss of run r after t steps with learning rate lrs[l]. Each step goes through the runs'
    Gram matrices (R, T, T) if `through_gram` (None: where one fits the per-array bound, sizes.gram_fits),
    else through their keys: the same step, rounded otherwise, holding no (T, T) array.
    Under several scales every number is the one the descent under that scale alone makes: the scales are a
    leading axis the products broadcast over (each (L, T) product is the same call on the same operands).
    """
    # q enters the loss only through its raw scores s = K q (the attention scales them: z = c s), and a step
    # q <- q - lr dL/dq, dL/dq = c K^T dL/dz, moves them to s - lr G dL/dz with G = c K K^T (T, T): the
    # same descent, followed on the T raw scores instead of the d_k coordinates of q.
    d_k, T = q0.shape[-1], K.shape[-2]
    lr = np.asarray(lrs, dtype=np.float64)[None, :, None]  # (1, L, 1)
    if np.ndim(scale) == 1:  # (S,) scales: a leading axis, each scale's number as Attention.weights takes it
        c = np.asarray(scale, dtype=np.float64)[:, None, None, None]  # (S, 1, 1, 1)
        scale, lead = c[..., 0], (len(c),)  # (S, 1, 1): one per row of the (S, R, L) rows of scores
    else:
        c, lead = attention.score_scale(d_k, scale), ()
    K_t = np.swapaxes(K, -1, -2)
    through_gram = gram_fits(T) if through_gram is None else through_gram
    G = c * (K @ K_t) if through_gram else None  # ([S,] R, T, T), symmetric
    s0 = (K @ q0[:, :, None])[:, :, 0]  # (R, T) initial raw scores
    s = np.repeat(s0[:, None, :], lr.shape[1], axis=1)  # (R, L, T): one copy per lr
    s = np.broadcast_to(s, lead + s.shape).copy() if lead else s  # ([S,] R, L, T)
    target = target[:, None, :]  # (R, 1, d_v)
    for t in range(steps + 1):
        loss, g_z = score_loss_and_grad(s, V, target, d_k, scale, attention)  # ([S,] R, L), ([S,] R, L, T)
        yield loss
        if t < steps:
            # s <- s - lr G dL/dz: (R, L, T) @ (R, T, T), or as c (dL/dz K) K^T, two products through (R, L, d_k)
            step = g_z @ G if G is not None else c * ((g_z @ K) @ K_t)
            step *= lr
            s -= step


def relative_loss(loss: np.ndarray, loss0: np.ndarray) -> np.ndarray:
    """L(t) / L(0) per run; 0 where L(0) == 0 (a run that starts exactly on its target)."""
    return np.divide(loss, loss0, out=np.zeros_like(loss), where=loss0 > 0)


def follow(losses: Iterable[np.ndarray], loss_threshold: float, at: Sequence[int]) -> dict:
    """One pass over the losses (R, L) of steps 0, 1, ..., steps: per run the initial and final
    loss and the first step with L(t) / L(0) < loss_threshold (steps + 1 if none, or if L(0) = 0), all (R, L);
    the number of steps; and the mean relative loss over the runs at each step of `at`
    (increasing), as (len(at), L). Memory does not grow with the number of steps."""
    wanted, curve = set(int(a) for a in at), []
    for t, loss in enumerate(losses):
        if t == 0:
            loss0, reach = loss, np.full(loss.shape, -1)
        rel = relative_loss(loss, loss0)  # (R, L)
        # a run that starts on its target (L(0) = 0) has nothing to learn: never a success
        reach = np.where((reach < 0) & (rel < loss_threshold) & (loss0 > 0), t, reach)
        if t in wanted:
            curve.append(rel.mean(axis=0))
    steps = t
    return {"initial": loss0, "final": loss, "reach": np.where(reach < 0, steps + 1, reach),
            "steps": steps, "curve": np.array(curve)}


def merge_tracks(tracks: Sequence[dict]) -> dict:
    """`follow`'s results for consecutive chunks of runs, as one result over all the runs."""
    sizes = np.array([len(t["initial"]) for t in tracks], dtype=float)
    merged = {key: np.concatenate([t[key] for t in tracks]) for key in ("initial", "final", "reach")}
    merged["steps"] = tracks[0]["steps"]
    # the mean over all runs
    merged["curve"] = sum(t["curve"] * n for t, n in zip(tracks, sizes, strict=True)) / sizes.sum()
    return merged


def lr_statistics(track: dict) -> dict[str, np.ndarray]:
    """Each statistic of STATISTICS per learning rate (L,), over the runs, from `follow`'s result."""
    return {
        "success_fraction": np.mean(track["reach"] <= track["steps"], axis=0),
        "mean_final_relative_loss": relative_loss(track["final"], track["initial"]).mean(axis=0),
        "median_steps_to_threshold": np.median(track["reach"], axis=0),
        "mean_initial_loss": track["initial"].mean(axis=0),
        "mean_final_loss": track["final"].mean(axis=0),
        "starts_on_target": np.mean(track["initial"] == 0, axis=0),  # never succeed (see the docstring)
    }


def best_lr_index(success_fraction: np.ndarray, mean_final_relative_loss: np.ndarray, lrs: Sequence[float]) -> int:
    """Index of the best lr: highest success fraction, then lowest mean final relative loss, then smallest lr."""
    order = np.lexsort((np.asarray(lrs), mean_final_relative_loss, -success_fraction))  # last key sorts first
    return int(order[0])


def checkpoints(steps: int) -> np.ndarray:
    """Step 0 and about N_CHECKPOINTS log-spaced steps from 1 to `steps` (always including `steps`)."""
    if steps == 0:
        return np.array([0])
    logspaced = np.round(np.geomspace(1, steps, N_CHECKPOINTS)).astype(int)
    return np.unique(np.concatenate([[0], logspaced, [steps]]))


def learning_rows(seed: int, d_k_values: Sequence[int], T: int, runs: int, steps: int,
                  learning_rates: Sequence[float], loss_threshold: float,
                  attention: Attention = SHIPPED) -> tuple[Rows, Rows]:
    """Per (d_k, scale, lr): success fraction and losses of gradient descent on q through `attention`; and the
    mean relative-loss curve at the best lr of each (d_k, scale) ("inv_sqrt_dk": the attention's own scale)."""
    seed, d_k_values = check_seed(seed), check_int_list(d_k_values, "d_k_values")
    T, runs = check_int(T, "T", minimum=2), check_int(runs, "runs", minimum=1)
    steps = check_int(steps, "steps", minimum=0)
    lrs, loss_threshold = [float(lr) for lr in learning_rates], float(loss_threshold)
    if not lrs:  # the best learning rate is one of them
        raise ValueError("learning_rates must not be empty")
    at = checkpoints(steps)
    rows, curve_rows = [], []
    for d_k in d_k_values:
        # The best learning rate of each scale is picked on selection runs of their own (a separate stream),
        # and scored on the runs below: picking and scoring on the same runs would favour lucky rates.
        best = {}
        for scale in LEARNING_SCALES:
            c = scale_arg(scale, d_k)
            selection = [follow(descent(q0, K, V, target, c, lrs, steps, attention), loss_threshold, at)
                         for q0, K, V, target in run_chunks(stream(seed, "learning-selection", d_k, T), runs, T, d_k,
                                                            value_dim(d_k), len(lrs))]
            chosen = lr_statistics(merge_tracks(selection))
            best[scale] = best_lr_index(chosen["success_fraction"], chosen["mean_final_relative_loss"], lrs)
        tracks, starts = {scale: [] for scale in LEARNING_SCALES}, []
        for q0, K, V, target in run_chunks(stream(seed, "learning", d_k, T), runs, T, d_k, value_dim(d_k), len(lrs)):
            starts.append(premises_at_start(q0, K, V, target, d_k, attention))
            for scale in LEARNING_SCALES:  # the same runs under both scales
                c = scale_arg(scale, d_k)
                losses = descent(q0, K, V, target, c, lrs, steps, attention)  # (m, L) per step
                tracks[scale].append(follow(losses, loss_threshold, at))
        succeeded = {}  # scale -> per run, success at its best lr (R,)
        for scale in LEARNING_SCALES:
            track = merge_tracks(tracks[scale])
            stats = lr_statistics(track)
            succeeded[scale] = track["reach"][:, best[scale]] <= track["steps"]
            for i, lr in enumerate(lrs):
                for statistic in STATISTICS:
                    rows.append({"seed": seed, "d_k": d_k, "T": T, "runs": runs, "steps": steps,
                                 "loss_threshold": loss_threshold, "scale": scale, "lr": lr,
                                 "best_lr": int(i == best[scale]), "statistic": statistic,
                                 "value": float(stats[statistic][i])})
            for step, value in zip(at, track["curve"][:, best[scale]], strict=True):
                curve_rows.append({"seed": seed, "d_k": d_k, "T": T, "runs": runs, "scale": scale,
                                   "lr": lrs[best[scale]], "step": int(step), "mean_relative_loss": float(value)})
        only = {"only_scaled_succeeds": succeeded["inv_sqrt_dk"] & ~succeeded["none"],
                "only_unscaled_succeeds": succeeded["none"] & ~succeeded["inv_sqrt_dk"]}
        for statistic in PAIRED_STATISTICS:
            rows.append({"seed": seed, "d_k": d_k, "T": T, "runs": runs, "steps": steps,
                         "loss_threshold": loss_threshold, "scale": PAIRED_SCALE, "lr": lrs[best["inv_sqrt_dk"]],
                         "best_lr": 1, "statistic": statistic, "value": float(np.sum(only[statistic]))})
        largest = {key: float(np.max(np.concatenate([start[key] for start in starts]))) for key in starts[0]}
        rows += premise_rows({"seed": seed, "d_k": d_k, "T": T, "runs": runs, "steps": steps,
                              "loss_threshold": loss_threshold}, largest, {sc: lrs[best[sc]] for sc in LEARNING_SCALES})
    return rows, curve_rows


def premises_at_start(q0, K, V, target, d_k: int, attention: Attention = SHIPPED) -> dict:
    """B10's premises per run (R,) of the runs' draws q0 (R, d_k), K (R, T, d_k), V (R, T, d_v), target (R, d_v):
    learning_premises.premise_values under PREMISE_SCALES, with the descent's own loss and gradient."""
    return premises.premise_values(q0, K, V, target, d_k, PREMISE_SCALES, attention, score_loss_and_grad)


def premise_rows(head: Mapping, largest: Mapping, best_lr: Mapping) -> Rows:
    """The premise rows of one run and d_k: `head` then, per head of PREMISE_SCALES at its best learning rate
    `best_lr[head]`, each statistic's largest value over the runs (`largest[head, statistic]`)."""
    return [{**head, "scale": scale, "lr": best_lr[scale], "best_lr": 1, "statistic": statistic,
             "value": largest[scale, statistic]}
            for scale, (_, lesson) in PREMISE_SCALES.items() for statistic in premises.statistics_of(lesson == "d_k")]



def learning_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows learning_tables makes from `settings`: per d_k, one per scale, learning rate and statistic and
    one per paired statistic; one per premise statistic of each head; and the curves' one per scale and checkpoint."""
    per_d_k = (len(LEARNING_SCALES) * len(settings["learning_rates"]) * len(STATISTICS) + len(PAIRED_STATISTICS)
               + sum(len(premises.statistics_of(lesson == "d_k")) for _, lesson in PREMISE_SCALES.values()))
    return {"table": len(settings["d_k"]) * per_d_k,
            "curves": len(settings["d_k"]) * len(LEARNING_SCALES) * len(checkpoints(settings["steps"]))}


def learning_tables(settings: Mapping, trial_scores: Mapping[int, str],
                    attention: Attention = SHIPPED) -> dict[str, Rows]:
    """The learning experiment's tables (registry.EXPERIMENTS["learning"]) through `attention`: per learning
    rate, and the curves."""
    s = settings
    table, curves = learning_rows(s["seed"], s["d_k"], s["T"], s["runs"], s["steps"], s["learning_rates"],
                                  s["loss_threshold"], attention)
    return {"table": table, "curves": curves}


# The experiment this module declares: the registry (experiments/registry.py) gathers it.
# The cost model's ns of CPU per unit of each term of learning_work (benchmarks/cost.py --fit).
COST_NS_PER = {"descent_value": 0.435, "descent_key": 7.55, "descent_gram": 0.0442, "descent_gram_uncached": 0.0659,
               "descent_keys": 0.0408, "run_step": 79.3, "step": 23300.0, "normal": 8.8, "gram": 0.016,
               "gram_entry": 1.64, "d_k": 0.0, "descent_rate": 76.0, "call": 6.92e+06}

# A (T, T) Gram matrix up to this size (T = 362) stays in the CPU's cache through a descent's steps.
CACHED_GRAM_BYTES = 1 << 20


def learning_work(settings: Mapping) -> dict[str, float]:
    """The cost model's work (DECLARED's `work`). Per d_k it runs 4 descents (a selection pass and the scored pass,
    each under both scales) over `runs` runs and L learning rates: each builds the Gram matrices K K^T (runs, T, T)
    and evaluates the loss steps + 1 times on (runs, L, T) scores and values (T, d_v), and each step moves the
    scores through the Gram matrix, (runs, L, T) @ (runs, T, T): the term that grows as T^2 per step; where that
    matrix would pass the per-array bound (sizes.gram_fits) there is none, and each step goes through the keys
    (twice L T d_k per run). Each pass draws its queries, keys and values (the selection pass once per scale); the
    scored runs' premises (premises_at_start) go through their keys and values a few times more."""
    R, T, steps, L = settings["runs"], settings["T"], settings["steps"], len(settings["learning_rates"])
    terms = dict.fromkeys(COST_NS_PER, 0.0) | {"call": 1}  # the job's first call: imports, warm-up
    for d_k in settings["d_k"]:
        d_v = value_dim(d_k)
        chunks = -(-R // chunk_rows(max(L, T) * max(d_k, T)))  # as run_chunks
        terms["descent_value"] += 4 * R * L * (steps + 1) * T * d_v
        terms["descent_key"] += 4 * R * L * (steps + 1) * T
        terms["descent_rate"] += 4 * R * L * (steps + 1)  # each step's loss per run and rate, and `follow` on it
        terms["run_step"] += 4 * R * (steps + 1)
        terms["step"] += 4 * chunks * (steps + 1)
        terms["normal"] += 3 * R * ((T + 1) * d_k + T * d_v)
        terms["d_k"] += 1
        # B10's premises at the scored runs' start (premises_at_start): 8 passes through the keys (the own scores of
        # each head, sum |q_i k_i|, the descent's K q three times, dL/dz K per head) and 8 through the values (4 own
        # losses, and the descent's loss and gradient per head, each p V and V r)
        terms["gram"] += 8 * R * T * d_k
        terms["descent_value"] += 8 * R * T * d_v
        if not gram_fits(T):  # each step through the keys: (R, L, T) @ (R, T, d_k), then back through K^T
            terms["descent_keys"] += 4 * R * L * steps * 2 * T * d_k
            continue
        # a run's Gram matrix past the cache (CACHED_GRAM_BYTES) is read from memory at every step: far dearer
        gram = "descent_gram" if T * T * 8 <= CACHED_GRAM_BYTES else "descent_gram_uncached"
        terms[gram] += 4 * R * L * steps * T * T
        terms["gram"] += 4 * R * T * T * d_k
        terms["gram_entry"] += 4 * R * T * T
    return terms


DECLARED = (
    Experiment(
        "learning", "sdpa_lab.experiments.learning:learning_tables",
        {"table": Output("learning.csv",
                         {"seed": "int", "d_k": "int", "T": "int", "runs": "int", "steps": "int",
                          "loss_threshold": "float", "scale": "str", "lr": "float", "best_lr": "int",
                          "statistic": "str", "value": "float"},
                         {"seed": "seed", "d_k": "d_k", "T": "T", "runs": "runs", "steps": "steps",
                          "learning_rates": "lr", "loss_threshold": "loss_threshold"}),
         "curves": Output("learning_curves.csv",
                          {"seed": "int", "d_k": "int", "T": "int", "runs": "int", "scale": "str", "lr": "float",
                           "step": "int", "mean_relative_loss": "float"},
                          {"seed": "seed", "d_k": "d_k", "T": "T", "runs": "runs"})},
        claims=("B10",), section="learning",
        row_counts="sdpa_lab.experiments.learning:learning_row_counts",
        work="sdpa_lab.experiments.learning:learning_work", ns_per=COST_NS_PER),
)
