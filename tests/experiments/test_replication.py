"""A1-A3: the replication experiments reproduce the lesson's printed numbers at its printed precision.

The expected numbers below are copied from the lesson's printed output: they
are the lesson's, not ours, and the experiments must recompute them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdpa_lab import chunks
from sdpa_lab.experiments import replication

from tests.conftest import lesson_rows


def test_streamed_legacy_draws_equal_the_lessons_global_stream(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_ELEMENTS", 64)  # many chunks
    n, dims = 500, (4, 16)
    rs = np.random.RandomState(42)
    got = [replication.lesson_variance_scores(rs, n, d) for d in dims]
    np.random.seed(42)
    for d, scores in zip(dims, got, strict=True):
        Q = np.random.randn(n, d)
        K = np.random.randn(n, d)
        np.testing.assert_array_equal(scores, np.sum(Q * K, axis=1))  # bit-exact
    assert rs.randn() == np.random.randn()  # the stream continues where the lesson's does


def test_a1_variance_table():
    t = pd.DataFrame(lesson_rows("lesson_variance")["table"])  # the experiment's table, made once per session
    v = t.set_index(["d_k", "quantity"])["value"]
    printed_raw = {4: 3.988, 16: 15.891, 64: 64.249, 256: 256.391}
    printed_scaled = {4: 0.9971, 16: 0.9932, 64: 1.0039, 256: 1.0015}
    for d in printed_raw:
        assert round(v[d, "raw_variance"], 3) == printed_raw[d]
        assert round(v[d, "scaled_variance"], 4) == printed_scaled[d]


def test_b4_exercise_1_continues_the_lessons_stream(monkeypatch):
    # Exercise 1 as written: the lesson's loop with d_k = 1024 appended, on the same seed-42 stream
    monkeypatch.setattr(replication, "A1_N_SAMPLES", 500)
    t = pd.DataFrame(replication.replicate_variance_rows()).set_index(["d_k", "quantity"])["value"]
    np.random.seed(42)
    for d in (4, 16, 64, 256, 1024):
        scores = np.sum(np.random.randn(500, d) * np.random.randn(500, d), axis=1)
        assert t[d, "raw_variance"] == scores.var()
        assert t[d, "scaled_variance"] == (scores / np.sqrt(d)).var()


def test_a2_softmax_collapse():
    t = pd.DataFrame(replication.replicate_softmax_collapse_rows())
    raw = t[t.quantity == "raw_score"].sort_values("key").value.to_numpy()
    np.testing.assert_array_equal(np.round(raw, 2), [-3.12, 13.41, -27.0, 12.41, 2.39, 24.29, -1.23, -2.77])
    v = t.set_index("quantity")["value"]
    assert v["unscaled_argmax"] == 5
    assert round(v["unscaled_max_weight"], 4) == 1.0
    assert round(v["unscaled_entropy"], 4) == 0.0003
    assert round(v["scaled_max_weight"], 4) == 0.3514
    assert round(v["scaled_entropy"], 4) == 1.7909
    assert round(v["uniform_entropy"], 4) == 2.0794


def test_exercise3_argsort_rows_are_decided_in_each_dtype(monkeypatch):
    # at the lesson's d_k = 256 both dtypes agree; at d_k = 32768 the scores spread so far that float32 weights
    # underflow to exact ties (float64 ones do not), so the float32 row must come from float32 weights
    monkeypatch.setattr(replication, "A2_D_K", 32768)
    rows = replication.replicate_softmax_collapse_rows()
    raw = np.array([r["value"] for r in rows if r["quantity"] == "raw_score"])  # (T,) float64, as drawn
    got = {r["quantity"]: r["value"] for r in rows}
    agrees = {}
    for dtype in (np.float64, np.float32):
        r = raw.astype(dtype)
        w_u, w_s = (np.exp(x - x.max()) / np.exp(x - x.max()).sum() for x in (r, r / dtype(np.sqrt(32768))))
        assert w_u.dtype == dtype
        agrees[dtype] = float(np.array_equal(np.argsort(w_u), np.argsort(w_s)))
        assert got[f"weight_argsort_agrees_{np.dtype(dtype).name}"] == agrees[dtype]
    assert agrees[np.float64] != agrees[np.float32]  # the two rows differ here: the test can fail


def test_a3_forward():
    t = pd.DataFrame(replication.replicate_forward_rows())
    w = t[t.quantity == "weight"].sort_values(["row", "col"]).value.to_numpy().reshape(6, 6)
    printed = [
        [0.057, 0.41, 0.13, 0.21, 0.104, 0.09],
        [0.072, 0.606, 0.025, 0.089, 0.079, 0.128],
        [0.172, 0.162, 0.096, 0.093, 0.185, 0.291],
        [0.116, 0.108, 0.216, 0.123, 0.173, 0.263],
        [0.056, 0.104, 0.27, 0.301, 0.05, 0.219],
        [0.1, 0.083, 0.496, 0.134, 0.107, 0.081],
    ]
    np.testing.assert_array_equal(np.round(w, 3), printed)
    shape_rows = t[t.quantity.str.endswith("_shape")]
    shapes = {q: tuple(int(x) for x in g.sort_values("col").value) for q, g in shape_rows.groupby("quantity")}
    assert shapes == {"input_shape": (1, 6, 16), "weights_shape": (1, 6, 6), "output_shape": (1, 6, 16)}
    np.testing.assert_allclose(t[t.quantity == "row_sum"].value, 1.0, rtol=1e-12)
