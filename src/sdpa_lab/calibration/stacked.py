"""The seeded experiments of several calibration runs at once: the runs stacked along the trials' axis.

The runs of one group share a sweep config and differ only in their seed. Each run draws exactly what it
draws alone, from its own streams (sdpa_lab.seeding.stream of its seed), in the same order; the draws are
put side by side, and the arithmetic after them (scores, softmax, entropies, Jacobians, descent steps) runs
once over the stack. Every such step works trial by trial (row by row), and each run's statistics are
reduced over its own rows, so a run's tables are the tables it makes alone, to the bit
(tests/calibration/test_stacked.py holds every arm to that at several configs).

An experiment is stacked only where each run's trials are one chunk of the experiment's own chunking
(the small runs, where the per-call overhead is the cost); otherwise None is returned and the caller runs
it alone (sdpa_lab.pipeline.run_experiment), where the arrays are large enough to pay for their calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sdpa_lab.attention import Attention, entropy
from sdpa_lab.chunks import CHUNK_ELEMENTS, chunk_rows
from sdpa_lab.experiments import entropy_sweep, gradient, learning, ranking_invariance, variance
from sdpa_lab.experiments.trial_scores import trial_scale
from sdpa_lab.moments import Moments
from sdpa_lab.rows import row_max
from sdpa_lab.scales import SCALES, scale_arg, scale_difference
from sdpa_lab.seeding import stream
from sdpa_lab.tables import Rows

# The most runs stacked at once: enough that the per-call overhead is small beside the arithmetic (100 makes a
# `smallest` batch no faster, and holds 60 MiB more of rows).
MAX_GROUP = 25


def row_moments(x: np.ndarray) -> list[Moments]:
    """Moments.of of each row of x (R, m): the same numbers as Moments.of(x[r]) (a contiguous row's mean and
    sum are reduced as the 1-d array's are)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    mean = x.mean(axis=1)
    m2 = np.sum((x - mean[:, None]) ** 2, axis=1)
    return [Moments(x.shape[1], float(a), float(b)) for a, b in zip(mean, m2, strict=True)]


def row_summaries(x: np.ndarray) -> list[dict[str, float]]:
    """Moments.summary of each row's moments (row_moments) of x (R, m), made for every row at once: the same
    numbers, each the same IEEE operation (a division, a square root) on the same operands, elementwise."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    n = x.shape[1]
    mean = x.mean(axis=1)
    m2 = np.sum((x - mean[:, None]) ** 2, axis=1)
    sd = np.sqrt(m2 / (n - 1)) if n > 1 else np.full(len(x), np.nan)
    se = sd / np.sqrt(n)
    return [{"mean": a, "std": b, "se": c} for a, b, c in zip(mean.tolist(), sd.tolist(), se.tolist(), strict=True)]


def summary_rows(head: Mapping, summaries: Mapping[tuple, Mapping[str, float]]) -> Rows:
    """The rows of one run and d_k: `head` then scale, quantity, statistic, value, per row_summaries' summary."""
    return [{**head, "scale": scale, "quantity": quantity, "statistic": statistic, "value": value}
            for (scale, quantity), summary in summaries.items() for statistic, value in summary.items()]


def variance_stacked(seeds: Sequence[int], settings: Mapping, attention: Attention,
                     moments: Sequence[Mapping[int, Moments]] | None = None) -> list[dict[str, Rows]] | None:
    """variance.variance_rows of each seed, stacked (None where a d_k's pairs are more than one chunk); of each
    seed's raw moments by d_k (variance.raw_moments) where given, whatever their size: nothing is drawn."""
    d_k_values, n = settings["d_k"], settings["n_pairs"]
    if moments is not None:
        return [{"table": variance.variance_rows(seed, d_k_values, n, attention, given)}
                for seed, given in zip(seeds, moments, strict=True)]
    if any(n > chunk_rows(d) for d in d_k_values):
        return None
    runs: list[Rows] = [[] for _ in seeds]
    for d_k in d_k_values:
        q, k = np.empty((len(seeds), n, d_k)), np.empty((len(seeds), n, d_k))
        for r, seed in enumerate(seeds):  # variance.score_chunks's draws: its streams, one chunk
            rng_q, rng_k = stream(seed, "variance", d_k).spawn(2)
            q[r], k[r] = rng_q.standard_normal((n, d_k)), rng_k.standard_normal((n, d_k))
        raw = row_moments(np.einsum("rij,rij->ri", q, k))  # (R, n) scores
        for r, seed in enumerate(seeds):
            for scale in SCALES:
                c = attention.score_scale(d_k, scale_arg(scale, d_k))
                stats = {"mean": raw[r].mean * c, "variance": raw[r].variance * c * c}
                stats["std"] = float(np.sqrt(stats["variance"]))
                runs[r] += [{"seed": seed, "d_k": d_k, "n_pairs": n, "scale": scale, "statistic": statistic,
                             "value": float(value)} for statistic, value in stats.items()]
    return [{"table": rows} for rows in runs]


def held_stack(held: Sequence[Mapping[int, np.ndarray]], d_k: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs' held trial scores at d_k (each (trials, T + 1)), stacked: raw scores (R * trials, T) and
    query norms (R * trials,), as trial_scores.trial_scores gives one run's single chunk."""
    scores = np.concatenate([h[d_k] for h in held])
    T = scores.shape[1] - 1
    return scores[:, :T], scores[:, T]


def entropy_stacked(seeds: Sequence[int], settings: Mapping, held: Sequence[Mapping[int, np.ndarray]],
                    attention: Attention, falls: Sequence[int] | None = None) -> list[dict[str, Rows]] | None:
    """entropy_sweep.entropy_sweep_tables of each seed from its held trial scores, stacked (None where a run's
    trials are more than one chunk); Exercise 2's falls of each seed (entropy_sweep.exercise2_falls) where given."""
    T, trials = settings["T"], settings["trials"]
    if trials > chunk_rows(T):
        return None
    R = len(seeds)
    tables = [[] for _ in seeds]
    keys = [(s, q) for s in entropy_sweep.ENTROPY_SCALES for q in entropy_sweep.QUANTITIES]
    keys += [(scale_difference(a, b), "entropy") for a, b in entropy_sweep.PAIRED_SCALES]
    for d_k in settings["d_k"]:
        raw, q_norm = held_stack(held, d_k)
        found, h = {}, {}
        for scale in entropy_sweep.ENTROPY_SCALES:
            w = attention.weights(raw, d_k, trial_scale(scale, d_k, q_norm))  # (R * trials, T)
            h[scale] = entropy(w)
            found[scale, "entropy"] = row_summaries(h[scale].reshape(R, trials))
            found[scale, "max_weight"] = row_summaries(row_max(w).reshape(R, trials))
        for a, b in entropy_sweep.PAIRED_SCALES:
            found[scale_difference(a, b), "entropy"] = row_summaries((h[a] - h[b]).reshape(R, trials))
        for r, seed in enumerate(seeds):
            head = {"seed": seed, "d_k": d_k, "T": T, "trials": trials}
            tables[r] += summary_rows(head, {key: found[key][r] for key in keys})
    single = entropy_sweep.entropy_single_draw_rows()  # the lesson's own draw: the same in every run
    falls = [None] * R if falls is None else falls
    return [{"table": table, "single_draw": [dict(row) for row in single],
             "exercise2": entropy_sweep.exercise2_rows(seed, trials, fell)}
            for seed, table, fell in zip(seeds, tables, falls, strict=True)]


def ranking_stacked(seeds: Sequence[int], settings: Mapping, held: Sequence[Mapping[int, np.ndarray]],
                    attention: Attention) -> list[dict[str, Rows]] | None:
    """ranking_invariance.ranking_invariance_tables of each seed from its held trial scores, stacked (None where
    a run's trials are more than one chunk): every count is a sum of per-trial booleans, per run."""
    T, trials = settings["T"], settings["trials"]
    if trials > chunk_rows(T):
        return None
    R = len(seeds)
    tables = [[] for _ in seeds]
    for d_k in settings["d_k"]:
        raw64, _ = held_stack(held, d_k)
        counts = {key: x.reshape(R, trials).sum(axis=1)
                  for key, x in ranking_invariance.ranking_flags(raw64, d_k, attention).items()}
        for r, seed in enumerate(seeds):
            for (dtype, quantity), n in counts.items():
                tables[r].append({"seed": seed, "d_k": d_k, "T": T, "trials": trials, "dtype": dtype,
                                  "quantity": quantity, "count": int(n[r]), "fraction": int(n[r]) / trials})
    return [{"table": table} for table in tables]


def gradient_stacked(seeds: Sequence[int], settings: Mapping, held: Sequence[Mapping[int, np.ndarray]],
                     attention: Attention) -> list[dict[str, Rows]] | None:
    """gradient.gradient_tables of each seed from its held trial scores, stacked (None where a run's trials are
    more than one chunk of gradient.trial_draws)."""
    T, trials = settings["T"], settings["trials"]
    if any(trials > chunk_rows(T * max(gradient.value_dim(d), T)) for d in settings["d_k"]):
        return None
    R = len(seeds)
    tables = [[] for _ in seeds]
    keys = [(s, q) for s in gradient.GRADIENT_SCALES for q in gradient.QUANTITIES]
    keys += [(scale_difference(a, b), q) for a, b, q in gradient.PAIRED]
    for d_k in settings["d_k"]:
        d_v = gradient.value_dim(d_k)
        raw, q_norm = held_stack(held, d_k)
        V, g_out = np.empty((R, trials, T, d_v)), np.empty((R, trials, d_v))
        for r, seed in enumerate(seeds):  # gradient.trial_draws's own streams, one chunk
            rng_v, rng_g = stream(seed, "gradient", d_k, T).spawn(2)
            V[r], g_out[r] = rng_v.standard_normal((trials, T, d_v)), rng_g.standard_normal((trials, d_v))
        V, g_out = V.reshape(R * trials, T, d_v), g_out.reshape(R * trials, d_v)
        norms, found = {}, {}
        for scale in gradient.GRADIENT_SCALES:
            c = trial_scale(scale, d_k, q_norm)
            for quantity, x in gradient.gradient_norms(raw, V, g_out, d_k, c, attention).items():
                norms[scale, quantity] = x
                found[scale, quantity] = row_summaries(x.reshape(R, trials))
        for a, b, q in gradient.PAIRED:
            found[scale_difference(a, b), q] = row_summaries((norms[a, q] - norms[b, q]).reshape(R, trials))
        for r, seed in enumerate(seeds):
            head = {"seed": seed, "d_k": d_k, "T": T, "trials": trials}
            tables[r] += summary_rows(head, {key: found[key][r] for key in keys})
    return [{"table": table} for table in tables]


def follow_stacked(losses, loss_threshold: float, at: Sequence[int], R: int) -> dict:
    """learning.follow of R runs whose rows are stacked in the losses (R * runs, L), as learning_rows merges one
    chunk (learning.merge_tracks): "initial", "final", "reach" (R, runs, L) and "curve" (R, len(at), L), each
    run's curve the mean over its own rows."""
    wanted, curve = {int(a) for a in at}, []
    for t, loss in enumerate(losses):
        if t == 0:
            loss0, reach = loss, np.full(loss.shape, -1)
        rel = learning.relative_loss(loss, loss0)  # (R * runs, L)
        reach = np.where((reach < 0) & (rel < loss_threshold) & (loss0 > 0), t, reach)
        if t in wanted:
            curve.append(rel.reshape(R, -1, rel.shape[-1]).mean(axis=1))  # (R, L)
    n = float(len(loss0) // R)
    # merge_tracks of one chunk: its curve times its size, over the sizes' sum
    return {"initial": loss0.reshape(R, -1, loss0.shape[-1]), "final": loss.reshape(R, -1, loss.shape[-1]),
            "reach": np.where(reach < 0, t + 1, reach).reshape(R, -1, reach.shape[-1]), "steps": t,
            "curve": np.stack(curve, axis=1) * n / n}


def lr_statistics_stacked(track: dict) -> dict[str, np.ndarray]:
    """learning.lr_statistics of each run of follow_stacked's result: each statistic (R, L), reduced over each
    run's own rows."""
    return {
        "success_fraction": np.mean(track["reach"] <= track["steps"], axis=1),
        "mean_final_relative_loss": learning.relative_loss(track["final"], track["initial"]).mean(axis=1),
        "median_steps_to_threshold": np.median(track["reach"], axis=1),
        "mean_initial_loss": track["initial"].mean(axis=1),
        "mean_final_loss": track["final"].mean(axis=1),
        "starts_on_target": np.mean(track["initial"] == 0, axis=1),
    }


def learning_draws(seeds: Sequence[int], key: str, settings: Mapping, d_k: int) -> tuple[np.ndarray, ...]:
    """learning.run_chunks's one chunk of each seed's stream `key`, stacked: q0, K, V, target (R * runs, ...)."""
    T, runs, n_lrs = settings["T"], settings["runs"], len(settings["learning_rates"])
    draws = [next(learning.run_chunks(stream(seed, key, d_k, T), runs, T, d_k, learning.value_dim(d_k), n_lrs))
             for seed in seeds]
    return tuple(np.concatenate(parts) for parts in zip(*draws, strict=True))


def follow_scales(draws: tuple[np.ndarray, ...], d_k: int, settings: Mapping, attention: Attention,
                  R: int) -> dict[str, dict]:
    """follow_stacked of the descent of R stacked runs' draws (learning_draws) under each of learning's
    LEARNING_SCALES: one descent of both (learning.descent's leading axis of scales) where its scores are at most a
    chunk, as in a small run, where the calls' overhead is the cost; else one descent each. The same tracks."""
    lrs, steps = [float(lr) for lr in settings["learning_rates"]], settings["steps"]
    threshold, at = float(settings["loss_threshold"]), learning.checkpoints(steps)
    scales = learning.LEARNING_SCALES
    if len(scales) * len(draws[0]) * len(lrs) * settings["T"] > CHUNK_ELEMENTS:
        return {scale: follow_stacked(learning.descent(*draws, scale_arg(scale, d_k), lrs, steps, attention),
                                      threshold, at, R) for scale in scales}
    numbers = [attention.score_scale(d_k, scale_arg(scale, d_k)) for scale in scales]  # as the descent alone takes
    losses = (loss.reshape(-1, loss.shape[-1]) for loss in learning.descent(*draws, numbers, lrs, steps, attention))
    track = follow_stacked(losses, threshold, at, len(scales) * R)  # the groups: each scale's R runs in turn
    return {scale: {key: value if key == "steps" else value[i * R:(i + 1) * R] for key, value in track.items()}
            for i, scale in enumerate(scales)}


def learning_stacked(seeds: Sequence[int], settings: Mapping, attention: Attention) -> list[dict[str, Rows]] | None:
    """learning.learning_tables of each seed, stacked (None where a run's runs are more than one chunk of
    learning.run_chunks)."""
    s = settings
    T, runs, steps, n_lrs = s["T"], s["runs"], s["steps"], len(s["learning_rates"])
    if any(runs > chunk_rows(max(n_lrs, T) * max(d, T)) for d in s["d_k"]):  # as learning.run_chunks
        return None
    lrs, threshold = [float(lr) for lr in s["learning_rates"]], float(s["loss_threshold"])
    at, R = learning.checkpoints(steps), len(seeds)
    rows, curves = [[] for _ in seeds], [[] for _ in seeds]
    for d_k in s["d_k"]:
        best = {}  # scale -> each run's best learning rate (R,)
        selection = follow_scales(learning_draws(seeds, "learning-selection", s, d_k), d_k, s, attention, R)
        for scale, track in selection.items():
            chosen = lr_statistics_stacked(track)
            best[scale] = [learning.best_lr_index(chosen["success_fraction"][r], chosen["mean_final_relative_loss"][r],
                                                  lrs) for r in range(R)]
        draws = learning_draws(seeds, "learning", s, d_k)
        tracks = follow_scales(draws, d_k, s, attention, R)
        # the premises per run of each seed, its largest over that seed's runs (a maximum: the same in any order)
        starts = {key: values.reshape(R, -1).max(axis=1).tolist() for key, values in
                  learning.premises_at_start(*draws, d_k, attention).items()}
        # each statistic and curve as Python numbers once (R, L) and (R, len(at), L): the rows' values, not indexed
        stats = {scale: {k: v.tolist() for k, v in lr_statistics_stacked(track).items()}
                 for scale, track in tracks.items()}
        curve_values = {scale: track["curve"].tolist() for scale, track in tracks.items()}
        steps_at = at.tolist()
        for r, seed in enumerate(seeds):
            head = {"seed": seed, "d_k": d_k, "T": T, "runs": runs, "steps": steps, "loss_threshold": threshold}
            succeeded = {}
            for scale in learning.LEARNING_SCALES:
                track, b = tracks[scale], best[scale][r]
                succeeded[scale] = track["reach"][r, :, b] <= track["steps"]
                rows[r] += [{**head, "scale": scale, "lr": lr, "best_lr": int(i == b), "statistic": statistic,
                             "value": float(stats[scale][statistic][r][i])}
                            for i, lr in enumerate(lrs) for statistic in learning.STATISTICS]
                curves[r] += [{"seed": seed, "d_k": d_k, "T": T, "runs": runs, "scale": scale, "lr": lrs[b],
                               "step": step, "mean_relative_loss": values[b]}
                              for step, values in zip(steps_at, curve_values[scale][r], strict=True)]
            only = {"only_scaled_succeeds": succeeded["inv_sqrt_dk"] & ~succeeded["none"],
                    "only_unscaled_succeeds": succeeded["none"] & ~succeeded["inv_sqrt_dk"]}
            rows[r] += [{**head, "scale": learning.PAIRED_SCALE, "lr": lrs[best["inv_sqrt_dk"][r]], "best_lr": 1,
                         "statistic": statistic, "value": float(np.sum(only[statistic]))}
                        for statistic in learning.PAIRED_STATISTICS]
            rows[r] += learning.premise_rows(head, {key: values[r] for key, values in starts.items()},
                                             {sc: lrs[best[sc][r]] for sc in learning.LEARNING_SCALES})
    return [{"table": table, "curves": curve} for table, curve in zip(rows, curves, strict=True)]


# The stacked experiments: name -> (function, whether it reads the shared trial scores).
STACKED = {"variance": (variance_stacked, False), "entropy_sweep": (entropy_stacked, True),
           "ranking_invariance": (ranking_stacked, True), "gradient": (gradient_stacked, True),
           "learning": (learning_stacked, False)}


def run_elements(config: Mapping) -> int:
    """About the most floats one run holds in a group: its largest draw of an experiment that is stacked (one
    larger than a chunk is not), or its held trial scores (every d_k's, held for the whole group), or the
    learning descent's Gram matrices and scores (runs x T x T, runs x learning rates x T: not chunked at all)."""
    v, lrn = config["variance"], config["learning"]
    drawn = [2 * v["n_pairs"] * max(v["d_k"]),
             lrn["runs"] * max(len(lrn["learning_rates"]), lrn["T"]) * max(lrn["d_k"])]
    held = [lrn["runs"] * lrn["T"] * max(lrn["T"], len(lrn["learning_rates"]))]  # the descent's Gram matrices
    for name in ("entropy_sweep", "ranking_invariance", "gradient"):
        s = config[name]
        drawn.append(s["trials"] * s["T"] * max(gradient.value_dim(max(s["d_k"])), s["T"]))
        held.append(s["trials"] * (s["T"] + 1) * len(s["d_k"]))
    return max([size for size in drawn if size <= 4 * CHUNK_ELEMENTS] + held)


def group_size(config: Mapping, most: int = MAX_GROUP) -> int:
    """How many runs of `config`'s sweep to stack: as many as keep a stacked array near a chunk, at most `most`."""
    return max(1, min(most, CHUNK_ELEMENTS // max(run_elements(config), 1)))
