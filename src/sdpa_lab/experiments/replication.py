"""A1-A3: the lesson's printed numbers, recomputed with the lesson's own parameters and seeding."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention, lesson_entropy, softmax
from sdpa_lab.chunks import chunk_rows
from sdpa_lab.experiments.declaration import Experiment, Output
from sdpa_lab.seeding import lesson_default_rng, lesson_legacy_stream
from sdpa_lab.tables import Rows

# The lesson's parameters: fixed, whatever the sweep config says.
A1_D_K = (4, 16, 64, 256)
EXERCISE1_D_K = 1024  # B4, Exercise 1: the same loop with d_k = 1024 appended (the stream continues)
A1_N_SAMPLES = 100_000
A2_D_K, A2_T = 256, 8
A3_SHAPE = (1, 6, 16)  # (B, T, d_k)


def _legacy_normal_chunks(rs: np.random.RandomState, n: int, d: int):
    """rs.randn(n, d) delivered in row chunks; concatenated, they are bit-identical to it."""
    rows = chunk_rows(d)  # rows of Q (or K) drawn at a time
    for start in range(0, n, rows):
        yield rs.randn(min(rows, n - start), d)


def lesson_variance_scores(rs: np.random.RandomState, n: int, d_k: int) -> np.ndarray:
    """The lesson's scores sum(Q * K, axis=1) for Q = randn(n, d_k), K = randn(n, d_k), streamed.

    Q's draws come first in the stream and K's right after them, so a copy
    of the stream is advanced past Q to read K alongside it. `rs` is left
    where the lesson's global stream would be: after K.
    """
    rs_k = np.random.RandomState()
    rs_k.set_state(rs.get_state())
    for _ in _legacy_normal_chunks(rs_k, n, d_k):  # skip Q's draws
        pass
    scores = np.empty(n)  # (n,): n floats, not n * d_k
    pos = 0
    for q, k in zip(_legacy_normal_chunks(rs, n, d_k), _legacy_normal_chunks(rs_k, n, d_k), strict=True):
        scores[pos : pos + len(q)] = np.sum(q * k, axis=1)  # same arithmetic as the lesson
        pos += len(q)
    rs.set_state(rs_k.get_state())
    return scores


def replicate_variance_rows() -> Rows:
    """A1: raw and scaled score variance for d_k = 4, 16, 64, 256 on one global seeded stream; then B4, the
    lesson's Exercise 1: the same stream continued with d_k = 1024."""
    rs = lesson_legacy_stream()
    rows = []
    for d_k in (*A1_D_K, EXERCISE1_D_K):
        scores = lesson_variance_scores(rs, A1_N_SAMPLES, d_k)
        rows.append({"d_k": d_k, "n_samples": A1_N_SAMPLES, "quantity": "raw_variance",
                     "value": float(scores.var())})
        rows.append({"d_k": d_k, "n_samples": A1_N_SAMPLES, "quantity": "scaled_variance",
                     "value": float((scores / np.sqrt(d_k)).var())})
    return rows


def replicate_softmax_collapse_rows() -> Rows:
    """A2: one query against T = 8 keys at d_k = 256, softmax of raw vs scaled scores; and B6, Exercise 3 on them."""
    rs = lesson_legacy_stream()
    q = rs.randn(A2_D_K)  # (d_k,)
    K = rs.randn(A2_T, A2_D_K)  # (T, d_k)
    raw = K @ q  # (T,) one query vs T keys
    scaled = raw / np.sqrt(A2_D_K)
    w_unscaled, w_scaled = softmax(raw), softmax(scaled)
    rows = []
    for j in range(A2_T):
        rows += [
            {"quantity": "raw_score", "key": j, "value": float(raw[j])},
            {"quantity": "scaled_score", "key": j, "value": float(scaled[j])},
            {"quantity": "unscaled_weight", "key": j, "value": float(w_unscaled[j])},
            {"quantity": "scaled_weight", "key": j, "value": float(w_scaled[j])},
        ]
    rows += [
        {"quantity": "unscaled_argmax", "key": "", "value": float(np.argmax(w_unscaled))},
        {"quantity": "unscaled_max_weight", "key": "", "value": float(w_unscaled.max())},
        {"quantity": "unscaled_entropy", "key": "", "value": float(lesson_entropy(w_unscaled))},
        {"quantity": "scaled_max_weight", "key": "", "value": float(w_scaled.max())},
        {"quantity": "scaled_entropy", "key": "", "value": float(lesson_entropy(w_scaled))},
        {"quantity": "uniform_entropy", "key": "", "value": float(np.log(A2_T))},
    ]
    # B6, Exercise 3 on this query and these keys: do the two softmaxes' weights give the same argsort? In the
    # lesson's float64, and in float32 (where exp underflows sooner and weights can tie)
    for dtype in ("float64", "float32"):
        r = raw.astype(dtype)
        w_u, w_s = softmax(r), softmax(r / r.dtype.type(np.sqrt(A2_D_K)))
        rows.append({"quantity": f"weight_argsort_agrees_{dtype}", "key": "",
                     "value": float(np.array_equal(np.argsort(w_u), np.argsort(w_s)))})
    return [{"d_k": A2_D_K, "T": A2_T, **row} for row in rows]


def replicate_forward_rows(attention: Attention = SHIPPED) -> Rows:
    """A3: `attention`'s forward on (B, T, d_k) = (1, 6, 16) with default_rng(42): shapes, row sums, weights."""
    rng = lesson_default_rng()
    B, T, d_k = A3_SHAPE
    Q = rng.standard_normal((B, T, d_k))
    K = rng.standard_normal((B, T, d_k))
    V = rng.standard_normal((B, T, d_k))
    out, weights = attention.forward(Q, K, V)  # (B, T, d_k), (B, T, T)
    rows = []
    for name, shape in (("input", Q.shape), ("weights", weights.shape), ("output", out.shape)):
        for axis, size in enumerate(shape):
            rows.append({"quantity": f"{name}_shape", "row": "", "col": axis, "value": float(size)})
    row_sums = weights.sum(axis=-1)[0]  # (T,)
    for i in range(T):
        rows.append({"quantity": "row_sum", "row": i, "col": "", "value": float(row_sums[i])})
    for i in range(T):
        for j in range(T):
            rows.append({"quantity": "weight", "row": i, "col": j, "value": float(weights[0, i, j])})
    return [{"B": B, "T": T, "d_k": d_k, **row} for row in rows]


def lesson_variance_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows lesson_variance_tables makes: a raw and a scaled variance per d_k."""
    return {"table": len((*A1_D_K, EXERCISE1_D_K)) * 2}


def lesson_softmax_collapse_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows lesson_softmax_collapse_tables makes: four per key (scores, weights), six summaries, and the
    argsort agreement in two dtypes."""
    return {"table": 4 * A2_T + 6 + 2}


def lesson_forward_row_counts(settings: Mapping) -> dict[str, int]:
    """The rows lesson_forward_tables makes: each axis of the input, weights and output shapes, a row sum per
    query and the (T, T) weights."""
    T = A3_SHAPE[1]
    return {"table": 3 * len(A3_SHAPE) + T + T * T}


def lesson_variance_tables(settings: Mapping, trial_scores: Mapping[int, str]) -> dict[str, Rows]:
    """A1's and B4's table (registry.EXPERIMENTS["lesson_variance"]): the lesson's own parameters, no settings."""
    return {"table": replicate_variance_rows()}


def lesson_softmax_collapse_tables(settings: Mapping, trial_scores: Mapping[int, str]) -> dict[str, Rows]:
    """A2's table (registry.EXPERIMENTS["lesson_softmax_collapse"])."""
    return {"table": replicate_softmax_collapse_rows()}


def lesson_forward_tables(settings: Mapping, trial_scores: Mapping[int, str],
                          attention: Attention = SHIPPED) -> dict[str, Rows]:
    """A3's table (registry.EXPERIMENTS["lesson_forward"]), of `attention`'s forward."""
    return {"table": replicate_forward_rows(attention)}


# The experiments this module declares (the registry, experiments/registry.py, gathers them).
DECLARED = (
    Experiment(
        "lesson_variance", "sdpa_lab.experiments.replication:lesson_variance_tables",
        {"table": Output("lesson_variance.csv",
                         {"d_k": "int", "n_samples": "int", "quantity": "str", "value": "float"})},
        claims=("A1", "B4"),
        row_counts="sdpa_lab.experiments.replication:lesson_variance_row_counts"),
    Experiment(
        "lesson_softmax_collapse", "sdpa_lab.experiments.replication:lesson_softmax_collapse_tables",
        {"table": Output("lesson_softmax_collapse.csv",
                         {"d_k": "int", "T": "int", "quantity": "str", "key": "num", "value": "float"})},
        claims=("A2", "B6"),
        row_counts="sdpa_lab.experiments.replication:lesson_softmax_collapse_row_counts"),
    Experiment(
        "lesson_forward", "sdpa_lab.experiments.replication:lesson_forward_tables",
        {"table": Output("lesson_forward.csv",
                         {"B": "int", "T": "int", "d_k": "int", "quantity": "str", "row": "num", "col": "num",
                          "value": "float"})},
        claims=("A3",),
        row_counts="sdpa_lab.experiments.replication:lesson_forward_row_counts"),
)
