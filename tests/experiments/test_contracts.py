"""The experiments' contracts with the rest of the pipeline, written to kill mutmut's survivors
(CONTRIBUTING.md, "Mutation testing"): each table has exactly the columns and kinds the results
schema declares (the checker reads them by name); bad arguments are refused naming the argument,
and the smallest valid ones accepted; a trial-scores file, when given, is what is read; the draws
come from the documented streams."""

from __future__ import annotations

import importlib
import logging
import math
from pathlib import Path

import numpy as np
import pytest

from sdpa_lab import chunks, scales
from sdpa_lab.attention import entropy, softmax
from sdpa_lab.experiments import (
    entropy_sweep,
    forward_shape,
    gradient,
    learning,
    ranking_invariance,
    replication,
    trial_scores,
    variance,
)
from sdpa_lab.experiments.registry import EXPERIMENTS
from sdpa_lab.moments import Moments
from sdpa_lab.pipeline import run_experiment
from sdpa_lab.results import COLUMNS
from sdpa_lab.seeding import stream

SMALL = {  # file -> rows of a small run
    "variance.csv": lambda: variance.variance_rows(7, [4, 9], 50),
    "entropy_sweep.csv": lambda: entropy_sweep.entropy_sweep_rows(7, [4], 4, 5),
    "entropy_single_draw.csv": entropy_sweep.entropy_single_draw_rows,
    "entropy_exercise2.csv": lambda: entropy_sweep.exercise2_rows(7, 3),
    "ranking_invariance.csv": lambda: ranking_invariance.ranking_invariance_rows(7, [4], 4, 5),
    "forward_shape.csv": lambda: forward_shape.forward_shape_rows(7, [[2, 3, 4]]),
    "gradient.csv": lambda: gradient.gradient_rows(7, [4], 4, 5),
    "learning.csv": lambda: learning.learning_rows(7, [4], 3, 2, 3, [0.1, 1.0], 0.5)[0],
    "learning_curves.csv": lambda: learning.learning_rows(7, [4], 3, 2, 3, [0.1, 1.0], 0.5)[1],
    "lesson_softmax_collapse.csv": replication.replicate_softmax_collapse_rows,
    "lesson_forward.csv": replication.replicate_forward_rows,
}


def _kind_ok(kind: str, value) -> bool:
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str) and value != ""
    if kind == "int":
        return number and float(value) == int(value)
    if kind == "float":
        return number and math.isfinite(value)
    return number or value == ""  # "num": a number, or empty where it does not apply


@pytest.mark.parametrize("name", SMALL)
def test_each_table_has_the_schema_columns_and_kinds(name):
    rows = SMALL[name]()
    assert rows
    for row in rows:
        assert list(row) == list(COLUMNS[name]), name
        for column, kind in COLUMNS[name].items():
            assert _kind_ok(kind, row[column]), (name, column, row[column])


def test_lesson_variance_table_has_the_schema_columns(monkeypatch):
    monkeypatch.setattr(replication, "A1_N_SAMPLES", 1000)  # the schema, not the lesson's numbers
    for row in replication.replicate_variance_rows():
        assert list(row) == list(COLUMNS["lesson_variance.csv"])
        assert row["n_samples"] == 1000 and row["quantity"] in ("raw_variance", "scaled_variance")


BAD_ARGUMENTS = [
    # (function, good keyword arguments, argument, bad value)
    (variance.variance_rows, dict(seed=1, d_k_values=[4], n_pairs=2), "d_k_values", []),
    (variance.variance_rows, dict(seed=1, d_k_values=[4], n_pairs=2), "n_pairs", 1),
    (entropy_sweep.entropy_sweep_rows, dict(seed=1, d_k_values=[4], T=2, trials=2), "d_k_values", []),
    (entropy_sweep.entropy_sweep_rows, dict(seed=1, d_k_values=[4], T=2, trials=2), "T", 1),
    (entropy_sweep.entropy_sweep_rows, dict(seed=1, d_k_values=[4], T=2, trials=2), "trials", 1),
    (entropy_sweep.exercise2_rows, dict(seed=1, trials=1), "trials", 0),
    (ranking_invariance.ranking_invariance_rows, dict(seed=1, d_k_values=[4], T=2, trials=1), "d_k_values", []),
    (ranking_invariance.ranking_invariance_rows, dict(seed=1, d_k_values=[4], T=2, trials=1), "T", 1),
    (ranking_invariance.ranking_invariance_rows, dict(seed=1, d_k_values=[4], T=2, trials=1), "trials", 0),
    (gradient.gradient_rows, dict(seed=1, d_k_values=[4], T=2, trials=2), "d_k_values", []),
    (gradient.gradient_rows, dict(seed=1, d_k_values=[4], T=2, trials=2), "T", 1),
    (gradient.gradient_rows, dict(seed=1, d_k_values=[4], T=2, trials=2), "trials", 1),
    (forward_shape.forward_shape_rows, dict(seed=1, shapes=[[1, 1, 1]]), "shapes", []),
    (trial_scores.draw_trial_scores, dict(seed=1, d_k=1, T=1, trials=1), "d_k", 0),
    (trial_scores.draw_trial_scores, dict(seed=1, d_k=1, T=1, trials=1), "T", 0),
    (trial_scores.draw_trial_scores, dict(seed=1, d_k=1, T=1, trials=1), "trials", 0),
    (trial_scores.trial_scores, dict(seed=1, d_k=1, T=1, trials=1, rows=1), "rows", 0),
]
LEARNING = dict(seed=1, d_k_values=[2], T=2, runs=1, steps=0, learning_rates=[0.5], loss_threshold=0.5)
BAD_ARGUMENTS += [(learning.learning_rows, LEARNING, name, bad) for name, bad in [
    ("d_k_values", []), ("T", 1), ("runs", 0), ("steps", -1), ("learning_rates", [])]]


def _run(fn, kwargs):
    out = fn(**kwargs)
    return list(out) if hasattr(out, "__next__") else out


@pytest.mark.parametrize("fn, good, name, bad", BAD_ARGUMENTS,
                         ids=[f"{f.__name__}-{n}-{b!r}" for f, _, n, b in BAD_ARGUMENTS])
def test_bad_argument_is_refused_by_name_and_the_smallest_good_one_runs(fn, good, name, bad):
    assert _run(fn, good)  # the smallest valid values (minimum T, trials, runs, steps...) run
    with pytest.raises(ValueError, match=rf"^{name}(\[\d+\])? must "):
        _run(fn, {**good, name: bad})


def test_forward_shape_too_large_is_refused_naming_the_shape():
    with pytest.raises(ValueError, match=r"^shapes\[1\] = \[100000, 100000, 100000\]: "):
        forward_shape.forward_shape_rows(1, [[1, 1, 1], [100000, 100000, 100000]])


def test_unknown_scale_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^unknown scale 'sqrt'; expected one of \('none', 'inv_sqrt_dk', 'inv_dk'\)"):
        scales.scale_factor("sqrt", 4)


def _doubled_scores_file(tmp_path: Path, seed, d_k, T, trials) -> tuple[Path, np.ndarray]:
    """A trial-scores file whose raw scores are twice the drawn ones (|q| kept): reading it must show."""
    drawn = np.concatenate(list(trial_scores.draw_trial_scores(seed, d_k, T, trials)))
    drawn[:, :T] *= 2
    path = tmp_path / f"scores_{d_k}.npy"
    np.save(path, drawn)
    return path, drawn


@pytest.mark.parametrize("via_run", [False, True])
def test_experiments_read_the_given_trial_scores(tmp_path, via_run):
    seed, d_k, T, trials = 3, 4, 5, 40
    path, drawn = _doubled_scores_file(tmp_path, seed, d_k, T, trials)
    raw, q_norm = drawn[:, :T], drawn[:, T]

    if via_run:  # as the registry runs it: <experiment>_tables(settings, {d_k: path})
        def rows(fn_name, seed, d_k_values, T, trials, scores):
            module, tables = _RUN[fn_name]
            return getattr(module, tables)({"seed": seed, "d_k": d_k_values, "T": T, "trials": trials}, scores)["table"]
    else:
        def rows(fn_name, *args):
            return getattr(_RUN[fn_name][0], fn_name)(*args)

    got = {(r["scale"], r["quantity"], r["statistic"]): r["value"]
           for r in rows("entropy_sweep_rows", seed, [d_k], T, trials, {d_k: path})}
    assert got["none", "entropy", "mean"] == pytest.approx(entropy(softmax(raw)).mean(), rel=1e-12)

    g = {(r["scale"], r["quantity"], r["statistic"]): r["value"]
         for r in rows("gradient_rows", seed, [d_k], T, trials, {d_k: path})}
    p = softmax(raw / q_norm[:, None])
    J = p[:, :, None] * np.eye(T) - p[:, :, None] * p[:, None, :]
    assert g[trial_scores.REFERENCE_SCALE, "jacobian_norm", "mean"] == pytest.approx(
        np.sqrt((J * J).sum(axis=(1, 2))).mean(), rel=1e-12)

    big = tmp_path / "big.npy"  # scores times 100: float32 weights underflow in some trials, not in the drawn ones
    np.save(big, np.column_stack([100 * raw, q_norm]))
    r = {(x["dtype"], x["quantity"]): x["count"] for x in rows("ranking_invariance_rows", seed, [d_k], T, trials,
                                                                 {d_k: big})}
    w = softmax((100 * raw).astype(np.float32))
    assert r["float32", "unscaled_weight_underflow"] == int(np.any(w == 0, axis=-1).sum()) > 0


_RUN = {"entropy_sweep_rows": (entropy_sweep, "entropy_sweep_tables"), "gradient_rows": (gradient, "gradient_tables"),
        "ranking_invariance_rows": (ranking_invariance, "ranking_invariance_tables")}


def _count_ties(w: np.ndarray) -> np.ndarray:
    return np.array([len(set(row.tolist())) < len(row) for row in w])


@pytest.mark.parametrize("d_k", [4, 4096])
def test_ranking_invariance_counts_against_direct_computation(tmp_path, d_k):
    """Every count of B6's table, recomputed here from the trial scores, row by row."""
    seed, T, trials = 2, 8, 120
    rows = ranking_invariance.ranking_invariance_rows(seed, [d_k], T, trials)
    got = {(r["dtype"], r["quantity"]): (r["count"], r["fraction"]) for r in rows}
    raw64 = np.concatenate([r for r, _ in trial_scores.trial_scores(seed, d_k, T, trials, rows=50)])
    for dtype in ("float64", "float32"):
        raw = raw64.astype(dtype)
        scaled = raw / np.dtype(dtype).type(math.sqrt(d_k))
        w_u, w_s = softmax(raw), softmax(scaled)
        logit = [list(np.argsort(a, kind="stable")) == list(np.argsort(b, kind="stable"))
                 for a, b in zip(raw, scaled, strict=True)]
        naive = np.array([list(np.argsort(a)) == list(np.argsort(b)) for a, b in zip(w_u, w_s, strict=True)])
        ties = _count_ties(w_u) | _count_ties(w_s)
        expected = {
            "logit_rank_agrees": sum(logit),
            "weight_argsort_agrees": int(naive.sum()),
            "unscaled_weight_ties": int(_count_ties(w_u).sum()),
            "weight_argsort_disagrees_without_ties": int((~naive & ~ties).sum()),
            "unscaled_weight_underflow": int(sum((row == 0).any() for row in w_u)),
            "top1_agrees": int(sum(a.argmax() == b.argmax() for a, b in zip(w_u, w_s, strict=True))),
        }
        for quantity, n in expected.items():
            assert got[dtype, quantity] == (n, n / trials), (dtype, quantity)
    if d_k == 4096:  # the case that matters: float32 weights underflow and tie
        assert got["float32", "unscaled_weight_ties"][0] > 0


def test_ties_are_found_per_row():
    w = np.array([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2], [0.1, 0.45, 0.45]])
    assert ranking_invariance._has_ties(w).tolist() == [False, True, True]
    w = np.array([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2]])
    assert ranking_invariance._has_ties(w.T.copy()).tolist() == [False, False, True]


def test_variance_rows_scale_mean_and_variance():
    rows = variance.variance_rows(5, [9], 400)
    v = {(r["scale"], r["statistic"]): r["value"] for r in rows}
    q, k = stream(5, "variance", 9).spawn(2)
    s = np.einsum("ij,ij->i", q.standard_normal((400, 9)), k.standard_normal((400, 9)))
    for scale, c in (("none", 1.0), ("inv_sqrt_dk", 1 / 3), ("inv_dk", 1 / 9)):
        assert v[scale, "mean"] == pytest.approx(s.mean() * c, rel=1e-12)
        assert v[scale, "variance"] == pytest.approx(s.var() * c * c, rel=1e-12)
        assert v[scale, "std"] == pytest.approx(s.std() * c, rel=1e-12)


@pytest.mark.parametrize("n_pairs", [1, 5, 6, 7, 13])
def test_score_chunks_draw_exactly_n_pairs(monkeypatch, n_pairs):
    monkeypatch.setattr(chunks, "CHUNK_ELEMENTS", 3 * 4)  # 3 rows of d_k = 4 per chunk
    drawn = list(variance.score_chunks(stream(1, "variance", 4), n_pairs, 4))
    assert [len(c) for c in drawn] == [3] * (n_pairs // 3) + ([n_pairs % 3] if n_pairs % 3 else [])
    assert variance.score_moments(stream(1, "variance", 4), n_pairs, 4).count == n_pairs


def test_rechunk_regroups_exactly():
    chunks = [np.arange(5), np.arange(5, 7), np.arange(7, 16)]
    out = list(trial_scores.rechunk(iter(chunks), 4))
    assert [len(c) for c in out] == [4, 4, 4, 4]
    np.testing.assert_array_equal(np.concatenate(out), np.arange(16))
    out = list(trial_scores.rechunk(iter([np.arange(4)]), 4))
    assert [len(c) for c in out] == [4]


def test_trial_scores_file_is_float64_and_read_lazily(tmp_path):
    path = tmp_path / "s.npy"
    trial_scores.write_trial_scores(3, 4, 5, 7, path)
    arr = np.load(path)
    assert arr.dtype == np.float64 and arr.shape == (7, 6)
    drawn = np.concatenate(list(trial_scores.draw_trial_scores(3, 4, 5, 7)))
    np.testing.assert_array_equal(arr, drawn)
    np.testing.assert_allclose(arr[:, 5], np.linalg.norm(
        stream(3, "trial_scores", 4, 5).spawn(2)[0].standard_normal((7, 4)), axis=-1), rtol=1e-15)


def test_draw_job_writes_the_scores_and_logs_them(tmp_path):
    path, log = tmp_path / "s.npy", tmp_path / "logs" / "s.log"
    trial_scores.draw_job(3, 4, 5, 7, path, str(log))
    np.testing.assert_array_equal(np.load(path), np.concatenate(list(trial_scores.draw_trial_scores(3, 4, 5, 7))))
    text = log.read_text()
    assert f" INFO trial_scores: wrote 7 trials (seed 3, d_k 4, T 5) to {path}\n" in text
    assert "trial_scores: done in" in text
    logging.getLogger("sdpa_lab").handlers.clear()


def test_entropy_single_draw_scales_the_raw_scores():
    rows = entropy_sweep.entropy_single_draw_rows()
    rs = np.random.RandomState(42)
    for d_k in entropy_sweep.EXERCISE2_D_K:
        q, K = rs.randn(d_k), rs.randn(entropy_sweep.EXERCISE2_T, d_k)
        for scale, c in (("none", 1.0), ("inv_sqrt_dk", 1 / math.sqrt(d_k))):
            (row,) = [r for r in rows if r["d_k"] == d_k and r["scale"] == scale]
            w = softmax(K @ q * c)
            assert row["entropy"] == pytest.approx(-(w * np.log(w + 1e-12)).sum(), rel=1e-12)


def test_gradient_rows_use_the_gradient_streams():
    seed, d_k, T, trials = 4, 3, 4, 6
    rows = gradient.gradient_rows(seed, [d_k], T, trials)
    got = {(r["scale"], r["quantity"], r["statistic"]): r["value"] for r in rows}
    raw = np.concatenate([r for r, _ in trial_scores.trial_scores(seed, d_k, T, trials, rows=trials)])
    rng_v, rng_g = stream(seed, "gradient", d_k, T).spawn(2)
    V, g_out = rng_v.standard_normal((trials, T, d_k)), rng_g.standard_normal((trials, d_k))
    norms = gradient.gradient_norms(raw, V, g_out, d_k, 1.0)
    m = Moments.of(norms["score_grad_norm"]).summary()
    assert got["none", "score_grad_norm", "mean"] == pytest.approx(m["mean"], rel=1e-12)
    assert got["none", "score_grad_norm", "se"] == pytest.approx(m["se"], rel=1e-12)


def test_learning_rows_use_the_learning_stream():
    """B10's runs are drawn from stream(seed, "learning", d_k, T): their initial losses, recomputed."""
    seed, d_k, T, runs = 6, 3, 4, 5
    rows, _ = learning.learning_rows(seed, [d_k], T, runs, 0, [0.5], 0.5)
    got = {(r["scale"], r["statistic"]): r["value"] for r in rows}
    rng_q, rng_k, rng_v, rng_j = stream(seed, "learning", d_k, T).spawn(4)
    j_star = rng_j.integers(T, size=runs)
    q0, K = rng_q.standard_normal((runs, d_k)), rng_k.standard_normal((runs, T, d_k))
    V = rng_v.standard_normal((runs, T, learning.value_dim(d_k)))
    for scale, c in (("none", 1.0), ("inv_sqrt_dk", 1 / math.sqrt(d_k))):
        loss0 = [0.5 * np.sum((softmax(c * K[r] @ q0[r]) @ V[r] - V[r, j_star[r]]) ** 2) for r in range(runs)]
        assert got[scale, "mean_initial_loss"] == pytest.approx(np.mean(loss0), rel=1e-12)


def test_success_needs_a_relative_loss_strictly_below_the_threshold_within_the_budget():
    # two runs, one lr: run 0 reaches exactly the threshold (0.5) at step 1, below it at the last step (2);
    # run 1 goes below it at step 1
    losses = [np.array([[1.0], [4.0]]), np.array([[0.5], [1.0]]), np.array([[0.25], [1.0]])]
    track = learning.follow(iter(losses), 0.5, at=[0, 2])
    assert track["steps"] == 2
    assert track["reach"][:, 0].tolist() == [2, 1]
    stats = learning.lr_statistics(track)
    assert stats["success_fraction"].tolist() == [1.0]  # reached at the last step counts
    track = learning.follow(iter(losses[:2]), 0.5, at=[0])
    assert track["reach"][:, 0].tolist() == [2, 1]  # not reached: steps + 1 = 2
    assert learning.lr_statistics(track)["success_fraction"].tolist() == [0.5]


def test_relative_loss_is_zero_where_the_initial_loss_is():
    for _ in range(3):  # a freed buffer of the same size, full of 7s, must not leak into the result
        np.full(4, 7.0)
        got = learning.relative_loss(np.array([3.0, 2.0, 5.0, 1.0]), np.array([0.0, 4.0, 0.0, 2.0]))
        assert got.tolist() == [0.0, 0.5, 0.0, 0.5]


def test_checkpoints_at_zero_and_one_step():
    assert learning.checkpoints(0).tolist() == [0]
    assert learning.checkpoints(1).tolist() == [0, 1]
    assert learning.checkpoints(50).dtype.kind == "i"


def test_ranking_counts_add_up_over_chunks(monkeypatch):
    whole = ranking_invariance.ranking_invariance_rows(3, [4, 4096], 8, 50)
    monkeypatch.setattr(ranking_invariance, "chunk_rows", lambda T: 7)  # 8 chunks, the last of one trial
    assert ranking_invariance.ranking_invariance_rows(3, [4, 4096], 8, 50) == whole


def dtype_sqrt(dtype, d):
    return np.sqrt(np.array(d, dtype=dtype))


def test_replication_quantities_are_the_ones_a2_and_a3_read():
    a2 = replication.replicate_softmax_collapse_rows()
    per_key = {"raw_score", "scaled_score", "unscaled_weight", "scaled_weight"}
    assert {r["quantity"] for r in a2} == per_key | {
        "unscaled_argmax", "unscaled_max_weight", "unscaled_entropy", "scaled_max_weight", "scaled_entropy",
        "uniform_entropy", "weight_argsort_agrees_float64", "weight_argsort_agrees_float32"}
    for quantity in per_key:
        assert sorted(r["key"] for r in a2 if r["quantity"] == quantity) == list(range(replication.A2_T))
    for quantity in ("unscaled_weight", "scaled_weight"):
        assert sum(r["value"] for r in a2 if r["quantity"] == quantity) == pytest.approx(1.0, abs=1e-12)
    raw = {r["key"]: r["value"] for r in a2 if r["quantity"] == "raw_score"}
    scaled = {r["key"]: r["value"] for r in a2 if r["quantity"] == "scaled_score"}
    assert all(scaled[j] == pytest.approx(raw[j] / math.sqrt(replication.A2_D_K), rel=1e-12) for j in raw)
    # Exercise 3 on this draw: exp of the raw scores (less their max), unscaled and scaled, in each dtype, ranked;
    # this draw has no tied weights in either dtype, so any sort gives the one order
    for dtype in ("float64", "float32"):
        r = np.array([raw[j] for j in sorted(raw)], dtype=dtype)
        w_u, w_s = np.exp(r - r.max()), np.exp((r - r.max()) / dtype_sqrt(dtype, replication.A2_D_K))
        assert len(set(w_u)) == len(set(w_s)) == replication.A2_T
        same = float(list(np.argsort(-w_u, kind="stable")) == list(np.argsort(-w_s, kind="stable")))
        (row,) = [x for x in a2 if x["quantity"] == f"weight_argsort_agrees_{dtype}"]
        assert row["key"] == "" and row["value"] == same
    a3 = replication.replicate_forward_rows()
    sums = [r for r in a3 if r["quantity"] == "row_sum"]
    assert sums and all(r["col"] == "" and r["value"] == pytest.approx(1.0, abs=1e-12) for r in sums)
    assert sorted(r["row"] for r in sums) == list(range(len(sums)))


def test_trial_scores_are_read_a_chunk_at_a_time(tmp_path):
    """read_trial_scores maps the file and copies one chunk at a time: peak memory ~ one chunk, not the file."""
    import tracemalloc

    trials, T, rows = 40_000, 7, 1000  # file: 40000 x 8 float64 = 2.5 MB; a chunk: 64 kB
    path = tmp_path / "s.npy"
    np.save(path, np.zeros((trials, T + 1)))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        n = sum(len(c) for c in trial_scores.read_trial_scores(path, T, trials, rows))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == trials
    assert peak < 10 * rows * (T + 1) * 8 < trials * (T + 1) * 8 / 2, peak


def test_each_experiment_runs_as_the_registry_declares(tiny_config, monkeypatch):
    """<experiment>_tables(settings, trial scores) gives the declared outputs, with the settings' rows."""
    from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of
    from sdpa_lab.pipeline import run_experiment

    monkeypatch.setattr(replication, "A1_N_SAMPLES", 1000)  # the outputs, not the lesson's numbers (seconds)

    expected_rows = {
        "variance": lambda s: {"table": variance.variance_rows(s["seed"], s["d_k"], s["n_pairs"])},
        "entropy_sweep": lambda s: {"table": entropy_sweep.entropy_sweep_rows(s["seed"], s["d_k"], s["T"], s["trials"]),
                                    "single_draw": entropy_sweep.entropy_single_draw_rows(),
                                    "exercise2": entropy_sweep.exercise2_rows(s["seed"], s["trials"])},
        "ranking_invariance": lambda s: {"table": ranking_invariance.ranking_invariance_rows(
            s["seed"], s["d_k"], s["T"], s["trials"])},
        "forward_shape": lambda s: {"table": forward_shape.forward_shape_rows(s["seed"], s["shapes"])},
        "gradient": lambda s: {"table": gradient.gradient_rows(s["seed"], s["d_k"], s["T"], s["trials"])},
        "learning": lambda s: dict(zip(("table", "curves"), learning.learning_rows(
            s["seed"], s["d_k"], s["T"], s["runs"], s["steps"], s["learning_rates"], s["loss_threshold"]),
            strict=True)),
        "lesson_variance": lambda s: {"table": replication.replicate_variance_rows()},
        "lesson_softmax_collapse": lambda s: {"table": replication.replicate_softmax_collapse_rows()},
        "lesson_forward": lambda s: {"table": replication.replicate_forward_rows()},
    }
    assert set(expected_rows) <= set(EXPERIMENTS)
    for name, experiment in EXPERIMENTS.items():  # every registered experiment, those added later too
        settings = settings_of(tiny_config, name)
        tables = run_experiment(name, settings)
        assert set(tables) == set(experiment.outputs), name
        for key, output in experiment.outputs.items():
            assert tables[key] and all(row.keys() == output.columns.keys() for row in tables[key]), (name, key)
            for setting, columns in output.records.items():  # each recorded setting is the config's
                allowed = settings[setting] if isinstance(settings[setting], list) else [settings[setting]]
                got = {tuple(row[c] for c in columns) if isinstance(columns, tuple) else row[columns]
                       for row in tables[key]}
                assert got <= {tuple(v) if isinstance(v, list) else v for v in allowed}, (name, key, setting)
        if name in expected_rows:
            assert tables == expected_rows[name](settings), name
        module, _, function = experiment.row_counts.partition(":")  # the rows it declares (the checker's bound)
        declared = getattr(importlib.import_module(module), function)(settings)
        assert declared == {key: len(rows) for key, rows in tables.items()}, name


# ---- the rows each experiment declares it makes (the checker's size bound) ----------------------


@pytest.mark.parametrize("name, settings", [
    ("variance", {"seed": 1, "d_k": [1, 2, 3], "n_pairs": 2}),
    ("entropy_sweep", {"seed": 1, "d_k": [1], "T": 2, "trials": 2}),
    ("ranking_invariance", {"seed": 1, "d_k": [1, 5, 9], "T": 3, "trials": 2}),
    ("forward_shape", {"seed": 1, "shapes": [[1, 1, 1], [1, 2, 3], [2, 1, 1]]}),
    ("gradient", {"seed": 1, "d_k": [2, 3], "T": 2, "trials": 2}),
    ("learning", {"seed": 1, "d_k": [2], "T": 2, "runs": 1, "steps": 1, "learning_rates": [0.1, 1.0, 10.0],
                  "loss_threshold": 0.5}),
    ("learning", {"seed": 1, "d_k": [2, 3], "T": 2, "runs": 1, "steps": 60, "learning_rates": [1.0],
                  "loss_threshold": 0.5}),
])
def test_the_declared_rows_are_the_rows_made_at_other_sizes(name, settings):
    # Beyond the tiny config: other list lengths, one step and a few (the learning curves' checkpoints).
    experiment = EXPERIMENTS[name]
    module, _, function = experiment.row_counts.partition(":")
    declared = getattr(importlib.import_module(module), function)(settings)
    made = run_experiment(name, settings)
    assert declared == {key: len(rows) for key, rows in made.items()}
