"""Each experiment function on small parameters, against independent computation."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab import chunks
from sdpa_lab.attention import entropy, softmax
from sdpa_lab.experiments import entropy_sweep, gradient, trial_scores, variance
from sdpa_lab.experiments.forward_shape import forward_shape_rows
from sdpa_lab.experiments.ranking_invariance import ranking_invariance_rows
from sdpa_lab.moments import Moments
from sdpa_lab.seeding import stream
from sdpa_lab.tables import csv_text


def test_moments_merge_equals_numpy():
    x = np.random.default_rng(0).standard_normal(1001) * 3 + 2
    m = Moments()
    for chunk in np.array_split(x, 7):
        m = m.merge(Moments.of(chunk))
    assert m.count == 1001
    assert m.mean == pytest.approx(x.mean(), rel=1e-12)
    assert m.variance == pytest.approx(x.var(), rel=1e-12)


def test_variance_streaming_equals_one_shot(monkeypatch):
    """Chunked draws give the same scores as drawing all at once, whatever the chunk size."""
    n, d = 3000, 16
    monkeypatch.setattr(chunks, "CHUNK_ELEMENTS", 160)  # 10 rows per chunk
    chunked = np.concatenate(list(variance.score_chunks(stream(1, "variance", d), n, d)))
    assert len(chunked) == n
    rng_q, rng_k = stream(1, "variance", d).spawn(2)
    q, k = rng_q.standard_normal((n, d)), rng_k.standard_normal((n, d))  # all at once
    ref = [sum(q[i] * k[i]) for i in range(n)]
    np.testing.assert_allclose(chunked, ref, rtol=1e-12)
    m = variance.score_moments(stream(1, "variance", d), n, d)
    assert m.variance == pytest.approx(np.var(ref), rel=1e-10)


def test_run_variance_table_and_scales():
    t = pd.DataFrame(variance.variance_rows(seed=3, d_k_values=[4, 64], n_pairs=5000))
    assert set(t.columns) == {"seed", "d_k", "n_pairs", "scale", "statistic", "value"}
    assert len(t) == 2 * 3 * 3
    v = t.set_index(["d_k", "scale", "statistic"])["value"]
    for d in (4, 64):
        assert v[d, "inv_sqrt_dk", "variance"] == pytest.approx(v[d, "none", "variance"] / d, rel=1e-12)
        assert v[d, "inv_dk", "variance"] == pytest.approx(v[d, "none", "variance"] / d**2, rel=1e-12)
        assert v[d, "none", "std"] == pytest.approx(np.sqrt(v[d, "none", "variance"]))
        # 5000 independent pairs: within 6 standard errors of d (a gross-error check, not the claim)
        assert abs(v[d, "none", "variance"] - d) < 6 * d * np.sqrt((2 + 6 / d) / 5000)


def test_variance_per_d_k_streams_are_independent_of_the_sweep():
    a = pd.DataFrame(variance.variance_rows(seed=3, d_k_values=[4, 64], n_pairs=2000))
    b = pd.DataFrame(variance.variance_rows(seed=3, d_k_values=[64], n_pairs=2000))
    pd.testing.assert_frame_equal(a[a.d_k == 64].reset_index(drop=True), b)
    c = pd.DataFrame(variance.variance_rows(seed=4, d_k_values=[64], n_pairs=2000))
    assert not np.allclose(b.value, c.value)


def test_entropy_sweep_against_direct_computation():
    seed, d, T, trials = 5, 16, 8, 300
    t = pd.DataFrame(entropy_sweep.entropy_sweep_rows(seed, [d], T, trials))
    raw = np.concatenate([r for r, _ in trial_scores.trial_scores(seed, d, T, trials, rows=7)])
    assert raw.shape == (trials, T)
    rng_q, rng_k = stream(seed, "trial_scores", d, T).spawn(2)
    q, K = rng_q.standard_normal((trials, d)), rng_k.standard_normal((trials, T, d))
    np.testing.assert_allclose(raw, [[K[i, j] @ q[i] for j in range(T)] for i in range(trials)], rtol=1e-12)
    v = t.set_index(["scale", "quantity", "statistic"])["value"]
    h = {}
    for scale, c in (("none", 1.0), ("inv_sqrt_dk", 1 / np.sqrt(d)), ("inv_dk", 1 / d),
                     ("unit_variance_reference", 1 / np.linalg.norm(q, axis=1)[:, None])):
        h[scale] = entropy(softmax(raw * c))
        assert v[scale, "entropy", "mean"] == pytest.approx(h[scale].mean(), rel=1e-12)
        assert v[scale, "entropy", "se"] == pytest.approx(h[scale].std(ddof=1) / np.sqrt(trials), rel=1e-9)
        assert v[scale, "max_weight", "mean"] == pytest.approx(softmax(raw * c).max(-1).mean(), rel=1e-12)
    for a, b in (("inv_sqrt_dk", "unit_variance_reference"), ("inv_dk", "inv_sqrt_dk")):  # same trials: paired
        diff = h[a] - h[b]
        assert v[f"{a}_minus_{b}", "entropy", "mean"] == pytest.approx(diff.mean(), rel=1e-9, abs=1e-15)
        assert v[f"{a}_minus_{b}", "entropy", "se"] == pytest.approx(diff.std(ddof=1) / np.sqrt(trials), rel=1e-9)


def test_entropy_trials_chunking_does_not_change_draws(monkeypatch):
    a = pd.DataFrame(entropy_sweep.entropy_sweep_rows(5, [16], 8, 300))
    monkeypatch.setattr(chunks, "CHUNK_ELEMENTS", 8 * 7)  # 7 trials per chunk, drawn one by one (T * d_k = 128)
    b = pd.DataFrame(entropy_sweep.entropy_sweep_rows(5, [16], 8, 300))
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)


@pytest.mark.parametrize("run", [entropy_sweep.entropy_sweep_rows, ranking_invariance_rows, gradient.gradient_rows],
                         ids=["entropy_sweep", "ranking_invariance", "gradient"])
def test_trial_scores_read_from_files_give_the_same_tables(tmp_path, run):
    seed, T, trials, d_ks = 9, 4, 250, [4, 64]
    files = {d: tmp_path / f"scores_{d}.npy" for d in d_ks}
    for d, path in files.items():
        trial_scores.write_trial_scores(seed, d, T, trials, path)
    drawn, read = run(seed, d_ks, T, trials), run(seed, d_ks, T, trials, files)
    assert csv_text(drawn) == csv_text(read)  # the same bytes once written


@pytest.mark.parametrize("run", [entropy_sweep.entropy_sweep_rows, ranking_invariance_rows, gradient.gradient_rows],
                         ids=["entropy_sweep", "ranking_invariance", "gradient"])
def test_trial_scores_held_in_memory_give_the_same_tables(run):
    # the calibration runs share each run's trial scores as arrays (hold_trial_scores), not files
    seed, T, trials, d_ks = 9, 4, 250, [4, 64]
    held = {d: trial_scores.hold_trial_scores(seed, d, T, trials) for d in d_ks}
    assert csv_text(run(seed, d_ks, T, trials)) == csv_text(run(seed, d_ks, T, trials, held))
    assert all(not a.flags.writeable for a in held.values())  # an experiment cannot change what the next one reads


def test_held_trial_scores_are_the_drawn_ones_and_only_when_small(monkeypatch):
    monkeypatch.setattr(trial_scores, "CHUNK_ELEMENTS", 4 * 23)  # 23 trials of T + 1 = 4 columns fit, 24 do not
    held = trial_scores.hold_trial_scores(2, 32, 3, 23)
    assert np.array_equal(held, np.concatenate(list(trial_scores.draw_trial_scores(2, 32, 3, 23))))
    read = list(trial_scores.trial_scores(2, 32, 3, 23, rows=10, path=held))
    assert [len(r) for r, _ in read] == [10, 10, 3]
    assert np.array_equal(np.concatenate([r for r, _ in read]), held[:, :3])
    assert np.array_equal(np.concatenate([q for _, q in read]), held[:, 3])
    assert trial_scores.fits_in_memory(3, 23) and not trial_scores.fits_in_memory(3, 24)
    with pytest.raises(ValueError, match="over 92 floats"):
        trial_scores.hold_trial_scores(2, 32, 3, 24)
    with pytest.raises(ValueError, match=r"^the held trial scores: holds trial scores of shape \(23, 4\) \(float64\); "
                                         r"expected \(30, 4\) float64"):
        next(trial_scores.trial_scores(2, 32, 3, 30, rows=10, path=held))


def test_trial_scores_file_holds_the_drawn_scores_and_norms(tmp_path, monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_ELEMENTS", 3 * 32 * 5)  # 5 trials per drawn chunk
    path = tmp_path / "s.npy"
    trial_scores.write_trial_scores(2, 32, 3, 23, path)
    saved = np.load(path)
    rng_q, rng_k = stream(2, "trial_scores", 32, 3).spawn(2)
    q, K = rng_q.standard_normal((23, 32)), rng_k.standard_normal((23, 3, 32))
    np.testing.assert_allclose(saved[:, :3], np.einsum("mtd,md->mt", K, q), rtol=1e-12)
    np.testing.assert_allclose(saved[:, 3], np.linalg.norm(q, axis=1), rtol=1e-12)
    np.save(tmp_path / "whole.npy", np.concatenate(list(trial_scores.draw_trial_scores(2, 32, 3, 23))))
    assert path.read_bytes() == (tmp_path / "whole.npy").read_bytes()  # what np.save writes, chunk by chunk
    read = list(trial_scores.trial_scores(2, 32, 3, 23, rows=10, path=path))
    assert [len(r) for r, _ in read] == [10, 10, 3]
    assert np.array_equal(np.concatenate([r for r, _ in read]), saved[:, :3])


def test_bad_trial_draws_are_refused_before_any_file_is_made(tmp_path):
    with pytest.raises(ValueError, match="trials"):
        trial_scores.write_trial_scores(2, 8, 3, 0, tmp_path / "s.npy")
    assert list(tmp_path.iterdir()) == []


def test_trial_scores_file_of_other_settings_is_refused(tmp_path):
    path = tmp_path / "s.npy"
    trial_scores.write_trial_scores(2, 8, 3, 20, path)
    refusal = rf"^{re.escape(str(path))}: holds trial scores of shape \(20, 4\) \(float64\); expected \(30, 4\) float64"
    with pytest.raises(ValueError, match=refusal):
        next(trial_scores.trial_scores(2, 8, 3, 30, rows=10, path=path))


@given(st.lists(st.integers(1, 6), min_size=0, max_size=8), st.integers(1, 7))
def test_rechunk_keeps_every_row_in_order(sizes, rows):
    chunks = [np.arange(n)[:, None] + 100 * i for i, n in enumerate(sizes)]
    out = list(trial_scores.rechunk(iter(chunks), rows))
    assert all(len(c) == rows for c in out[:-1]) and all(0 < len(c) <= rows for c in out)
    expected = np.concatenate(chunks) if chunks else np.empty((0, 1))
    assert np.array_equal(np.concatenate(out) if out else np.empty((0, 1)), expected)


def test_entropy_single_draw_is_the_lessons_exercise():
    t = pd.DataFrame(entropy_sweep.entropy_single_draw_rows())
    rs = np.random.RandomState(42)
    for d in (4, 16, 64, 256):
        q, K = rs.randn(d), rs.randn(8, d)
        p = softmax(K @ q)
        expected = -np.sum(p * np.log(p + 1e-12))
        got = t[(t.d_k == d) & (t.scale == "none")].entropy.item()
        assert got == pytest.approx(expected, rel=1e-12)


def test_ranking_invariance_counts():
    t = pd.DataFrame(ranking_invariance_rows(seed=1, d_k_values=[4, 4096], T=8, trials=300))
    f = t.set_index(["d_k", "dtype", "quantity"])["fraction"]
    assert f[4, "float64", "logit_rank_agrees"] == 1.0
    assert f[4, "float32", "weight_argsort_agrees"] == 1.0
    assert f[4, "float32", "unscaled_weight_ties"] == 0.0
    # float32 exp underflows below about -103: at d_k = 4096 scores spread by ~64 per unit, ties appear
    assert f[4096, "float32", "unscaled_weight_underflow"] > 0.5
    assert f[4096, "float32", "weight_argsort_agrees"] < 1.0
    assert f[4096, "float32", "top1_agrees"] == 1.0
    assert (t["count"] <= 300).all() and (t["count"] >= 0).all()


def test_ranking_invariance_exactly_tied_logits_keep_their_rank(tmp_path):
    # logits that tie exactly (here small integers, over more keys than a sort handles by insertion) tie the
    # same way after any positive scale: their ranking agrees in every trial, whatever order a sort may give ties
    T, trials = 40, 20
    raw = np.random.default_rng(3).integers(0, 3, size=(trials, T)).astype(np.float64)
    path = tmp_path / "scores.npy"
    np.save(path, np.column_stack([raw, np.ones(trials)]))  # the file's layout: T scores, then |q|
    t = pd.DataFrame(ranking_invariance_rows(seed=1, d_k_values=[16], T=T, trials=trials, scores={16: path}))
    count = t.set_index(["dtype", "quantity"])["count"]
    assert count["float64", "logit_rank_agrees"] == trials and count["float32", "logit_rank_agrees"] == trials
    assert count["float64", "unscaled_weight_ties"] == trials  # every row has tied logits, hence tied weights


def test_forward_shape_rows():
    t = pd.DataFrame(forward_shape_rows(seed=1, shapes=[[2, 5, 3]]))
    v = t.set_index(["T_k", "d_v", "dtype", "quantity"]).sort_index()["value"]
    assert set(t.T_q) == {5}
    for T_k, d_v in ((5, 3), (4, 1)):  # the lesson's shapes, and every dimension different
        for dtype in ("float32", "float64"):
            w = v[T_k, d_v, dtype]
            assert (w["weights_B"], w["weights_T_q"], w["weights_T_k"]) == (2, 5, T_k)
            assert (w["output_B"], w["output_T"], w["output_d"]) == (2, 5, d_v)
            assert w["dtype_kept"] == 1.0
            assert w["max_row_sum_error"] < (1e-6 if dtype == "float32" else 1e-12)
            assert w["max_relative_output_error"] < (1e-6 if dtype == "float32" else 1e-14)


def test_exercise2_counts_the_sequences_that_fall_at_every_step():
    from sdpa_lab.attention import lesson_entropy, softmax
    from sdpa_lab.experiments.entropy_sweep import EXERCISE2_D_K, exercise2_rows
    from sdpa_lab.seeding import stream

    rows = {r["quantity"]: r for r in exercise2_rows(5, 300)}
    rng = stream(5, "exercise2")  # one chunk: the draws in the order the experiment makes them
    h = []
    for d in EXERCISE2_D_K:
        q, K = rng.standard_normal((300, d)), rng.standard_normal((300, 8, d))
        h.append([lesson_entropy(softmax(K[i] @ q[i])) for i in range(300)])
    falls = sum(all(h[j + 1][i] < h[j][i] for j in range(3)) for i in range(300))
    assert rows["sequences"]["count"] == 300 and rows["falls_at_every_step"]["count"] == falls
    assert 0 < falls < 300 and rows["falls_at_every_step"]["fraction"] == falls / 300


def test_exercise2_does_not_count_a_tie_as_a_fall(monkeypatch):
    # "falls at every step" is strict: entropies that stay equal from one d_k to the next do not fall. Random draws
    # never tie exactly, so the entropy is made a constant here (and a tie at one step only, for one sequence)
    from sdpa_lab.experiments import entropy_sweep

    monkeypatch.setattr(entropy_sweep, "lesson_entropy", lambda p: np.zeros(p.shape[:-1]))
    rows = {r["quantity"]: r for r in entropy_sweep.exercise2_rows(5, 20)}
    assert rows["falls_at_every_step"]["count"] == 0
    steps = iter([np.array([3.0, 3.0]), np.array([2.0, 3.0]), np.array([1.0, 2.0]), np.array([0.0, 1.0])])
    monkeypatch.setattr(entropy_sweep, "lesson_entropy", lambda p: next(steps))
    rows = {r["quantity"]: r for r in entropy_sweep.exercise2_rows(5, 2)}
    assert rows["falls_at_every_step"]["count"] == 1  # the second sequence ties at its first step


def test_exercise2_counts_every_chunk_of_sequences(monkeypatch):
    # a sequence is one query and 8 keys per d_k: 9 * (4 + 16 + 64 + 256) = 3060 normals; 4 sequences per chunk,
    # 39 sequences: 10 chunks, each drawn d_k by d_k (the last one of 3 sequences), every one counted
    from sdpa_lab.attention import lesson_entropy, softmax
    from sdpa_lab.experiments.entropy_sweep import EXERCISE2_D_K, exercise2_rows
    from sdpa_lab.seeding import stream

    monkeypatch.setattr(chunks, "CHUNK_ELEMENTS", 4 * 3060)
    rows = {r["quantity"]: r for r in exercise2_rows(5, 39)}
    rng = stream(5, "exercise2")
    falls = 0
    for start in range(0, 39, 4):
        m = min(4, 39 - start)
        h = []
        for d in EXERCISE2_D_K:
            q, K = rng.standard_normal((m, d)), rng.standard_normal((m, 8, d))
            h.append([lesson_entropy(softmax(K[i] @ q[i])) for i in range(m)])
        falls += sum(all(h[j + 1][i] < h[j][i] for j in range(3)) for i in range(m))
    assert rows["sequences"]["count"] == 39 and rows["falls_at_every_step"]["count"] == falls
