"""The ranking experiment's booleans (B6) against the sorts they stand for: every argsort and tie test made on every
row, as the experiment was first written (kept here as the reference), on scores with ties forced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_lab.attention import SHIPPED, softmax
from sdpa_lab.calibration.runner import attention_of
from sdpa_lab.calibration.stacked import ranking_stacked
from sdpa_lab.calibration.studies import ARMS
from sdpa_lab.experiments.ranking_invariance import (
    DTYPES,
    QUANTITIES,
    ranking_flags,
    ranking_invariance_rows,
    trial_flags,
)

T_MAX = 4096  # the schema's sequence_length maximum


def reference_flags(raw, scaled, w_unscaled, w_scaled) -> dict[str, np.ndarray]:
    """Each quantity's boolean per row, by the sorts on every row (the experiment's first formulation)."""
    def has_ties(w):
        s = np.sort(w, axis=-1)
        return np.any(s[:, 1:] == s[:, :-1], axis=-1)

    same_logit = np.all(np.argsort(raw, axis=-1, kind="stable") == np.argsort(scaled, axis=-1, kind="stable"), axis=-1)
    same_naive = np.all(np.argsort(w_unscaled, axis=-1) == np.argsort(w_scaled, axis=-1), axis=-1)
    ties = has_ties(w_unscaled) | has_ties(w_scaled)
    return {"logit_rank_agrees": same_logit, "weight_argsort_agrees": same_naive,
            "unscaled_weight_ties": has_ties(w_unscaled), "weight_argsort_disagrees_without_ties": ~same_naive & ~ties,
            "unscaled_weight_underflow": np.any(w_unscaled == 0, axis=-1),
            "top1_agrees": w_unscaled.argmax(-1) == w_scaled.argmax(-1)}


def reference_ranking(raw64, d_k, attention) -> dict[tuple[str, str], np.ndarray]:
    found = {}
    for dtype in DTYPES:
        raw = raw64.astype(dtype)
        scaled = raw * raw.dtype.type(attention.score_scale(d_k))
        flags = reference_flags(raw, scaled, softmax(raw), attention.weights(raw, d_k))
        found.update({(dtype, q): flags[q] for q in QUANTITIES})
    return found


def assert_same_flags(mine, theirs):
    assert list(mine) == list(theirs)
    for key in theirs:
        assert mine[key].dtype == bool and mine[key].shape == theirs[key].shape, key
        np.testing.assert_array_equal(mine[key], theirs[key], err_msg=str(key))


def tied_scores(rng, m: int, T: int, spread: float) -> np.ndarray:
    """Raw float64 scores (m, T) with ties forced: normals times `spread`; in half the rows a third of the entries
    copied from another entry of their row, in a tenth some zeros of either sign; some rows constant."""
    raw = rng.standard_normal((m, T)) * spread
    copy = (rng.random((m, T)) < 1 / 3) & (rng.random((m, 1)) < 0.5)
    raw[copy] = raw[np.nonzero(copy)[0], rng.integers(0, T, copy.sum())]
    zeros = rng.random((m, 1)) < 0.1
    raw[(rng.random((m, T)) < 0.1) & zeros] = 0.0
    raw[(rng.random((m, T)) < 0.1) & zeros] = -0.0
    raw[rng.random(m) < 0.05] = 1.5
    return raw


# a pool with exact ties, signed zeros, values whose exp underflows in float32 (and float64), infinities and NaN
POOL = [0.0, -0.0, 1.0, -1.0, 1.0 + 2 ** -52, 2.5, -90.0, -120.0, -800.0, 1e-300, 5e-324, np.inf, -np.inf, np.nan]


@st.composite
def four_arrays(draw):
    dtype = draw(st.sampled_from(DTYPES))
    m, T = draw(st.integers(1, 12)), draw(st.sampled_from([2, 3, 5, 8, 16, 17, 40]))
    pool = st.sampled_from(POOL) | st.floats(-3, 3, width=32)
    made = [draw(arrays(np.float64, (m, T), elements=pool)).astype(dtype) for _ in range(4)]
    kind = draw(st.sampled_from(["argsort", "random", "identity"]))
    if kind == "argsort":
        order = np.argsort(made[0], axis=-1)
    elif kind == "random":
        order = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1))).permuted(np.tile(np.arange(T), (m, 1)), axis=1)
    else:
        order = np.tile(np.arange(T), (m, 1))
    return made, order


@settings(max_examples=300, deadline=None)
@given(four_arrays())
def test_trial_flags_are_the_sorts_on_any_rows_and_any_order(case):
    # any four arrays (ties, -0.0 and 0.0, infinities, NaN; not even softmax weights) and any permutation as the guess
    (raw, scaled, w_unscaled, w_scaled), order = case
    assert_same_flags(trial_flags(raw, scaled, w_unscaled, w_scaled, order),
                      reference_flags(raw, scaled, w_unscaled, w_scaled))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), T=st.sampled_from([2, 3, 8, 16, 17, 64]),
       d_k=st.sampled_from([1, 2, 3, 8, 256, 1024, 4096]), spread=st.sampled_from([1.0, 30.0, 64.0, 400.0, 2000.0]),
       arm=st.sampled_from(ARMS))
def test_ranking_flags_are_the_sorts_on_tied_and_underflowing_scores(seed, T, d_k, spread, arm):
    # a spread of 64 is d_k = 4096's: most float32 rows underflow to several exact zeros; 2000 underflows float64 too
    raw64 = tied_scores(np.random.default_rng(seed), 200, T, spread)
    attention = attention_of(arm)
    assert_same_flags(ranking_flags(raw64, d_k, attention), reference_ranking(raw64, d_k, attention))


@pytest.mark.parametrize("T", [2, T_MAX])
def test_ranking_flags_at_the_schema_s_edges_of_T(T):
    raw64 = tied_scores(np.random.default_rng(T), 40, T, 64.0)
    for d_k in (4, 4096):
        assert_same_flags(ranking_flags(raw64, d_k, SHIPPED), reference_ranking(raw64, d_k, SHIPPED))


def test_the_flags_count_what_they_claim_on_a_hand_made_stack():
    # independent of the reference: rows whose sort is known by eye
    raw = np.array([[1.0, 2.0, 3.0],     # distinct: every order agrees
                    [2.0, 2.0, 1.0],     # a logit tie: its stable order is kept by any positive scale
                    [0.0, -0.0, 5.0],    # -0.0 == 0.0: a tie, as the sorts see it
                    [-900.0, -800.0, 0.0]])  # exp underflows in both dtypes: two unscaled weights exactly 0
    flags = ranking_flags(raw, 16, SHIPPED)
    for dtype in DTYPES:
        np.testing.assert_array_equal(flags[dtype, "logit_rank_agrees"], [True, True, True, True])
        np.testing.assert_array_equal(flags[dtype, "unscaled_weight_ties"], [False, True, True, True])
        np.testing.assert_array_equal(flags[dtype, "unscaled_weight_underflow"], [False, False, False, True])
        np.testing.assert_array_equal(flags[dtype, "top1_agrees"], [True, True, True, True])
        np.testing.assert_array_equal(flags[dtype, "weight_argsort_disagrees_without_ties"], [False] * 4)
        assert flags[dtype, "weight_argsort_agrees"][0]


@pytest.mark.parametrize("T", [8, 40])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scaled_logits_tied_by_rounding_keep_the_ranking_only_in_index_order(dtype, T):
    # scaled logits with ties (a rounding can tie distinct raw logits): their stable ranking is index order among the
    # tied, whatever order a default argsort gives them; the raw logits, distinct, ranked that way agree, reversed not
    rng = np.random.default_rng(T)
    scaled = rng.integers(0, 3, (50, T)).astype(dtype)
    stable = np.argsort(scaled, axis=-1, kind="stable")
    assert np.any(np.argsort(scaled, axis=-1) != stable)  # the default sort's tie order is not the stable one here
    agree = np.empty_like(scaled)
    np.put_along_axis(agree, stable, np.arange(T, dtype=dtype), axis=-1)  # raw logits whose order is `stable`
    weights = np.ones_like(scaled)
    flags = trial_flags(agree, scaled, weights, weights, np.argsort(agree, axis=-1))
    np.testing.assert_array_equal(flags["logit_rank_agrees"], True)
    reverse = np.empty_like(scaled)
    np.put_along_axis(reverse, stable, np.arange(T, 0, -1, dtype=dtype), axis=-1)  # ranked the other way round
    flags = trial_flags(reverse, scaled, weights, weights, np.argsort(reverse, axis=-1))
    np.testing.assert_array_equal(flags["logit_rank_agrees"], False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_argsort_orders_each_row_by_its_own_values(dtype):
    # what trial_flags relies on where it sorts only the doubtful rows: a row's default argsort (its tie order
    # included) is the same in the whole stack and among any subset of rows, at any offset
    w = np.random.default_rng(3).integers(0, 3, (3000, 8)).astype(dtype)
    whole = np.argsort(w, axis=-1)
    for start, step in [(0, 2), (1, 2), (1, 3), (5, 7)]:
        np.testing.assert_array_equal(np.argsort(w[start::step].copy(), axis=-1), whole[start::step])


def held_scores(seed: int, T: int, trials: int, spread: float) -> np.ndarray:
    """Trial scores as hold_trial_scores holds them (trials, T + 1), the raw scores with ties forced."""
    rng = np.random.default_rng(seed)
    return np.concatenate([tied_scores(rng, trials, T, spread), rng.random((trials, 1)) + 0.5], axis=1)


def reference_rows(seed, d_k_values, T, trials, scores, attention):
    rows = []
    for d_k in d_k_values:
        flags = reference_ranking(scores[d_k][:, :T], d_k, attention)
        for (dtype, quantity), x in flags.items():
            n = int(x.sum())
            rows.append({"seed": seed, "d_k": d_k, "T": T, "trials": trials, "dtype": dtype, "quantity": quantity,
                         "count": n, "fraction": n / trials})
    return rows


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("T", [2, 8, 300])
def test_ranking_invariance_rows_count_the_sorts_own_booleans(T, arm):
    d_k_values, trials, attention = [3, 4096], 1500, attention_of(arm)  # more trials than a chunk at T = 300
    scores = {d_k: held_scores(d_k + T, T, trials, np.sqrt(d_k)) for d_k in d_k_values}
    rows = ranking_invariance_rows(7, d_k_values, T, trials, scores, attention)
    assert rows == reference_rows(7, d_k_values, T, trials, scores, attention)
    assert any(row["quantity"] == "unscaled_weight_ties" and 0 < row["count"] < trials for row in rows)
    # the scores drawn here, not given, count the same as the same scores given
    assert ranking_invariance_rows(7, [16], 8, 200) == reference_rows(
        7, [16], 8, 200, {16: _drawn(7, 16, 8, 200)}, SHIPPED)


def _drawn(seed, d_k, T, trials):
    from sdpa_lab.experiments.trial_scores import hold_trial_scores

    return hold_trial_scores(seed, d_k, T, trials)


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("T", [2, 8])
def test_ranking_stacked_counts_each_run_s_own_booleans(T, arm):
    seeds, trials, d_k_values, attention = [11, 12, 13], 400, [2, 1024, 4096], attention_of(arm)
    held = [{d_k: held_scores(seed * d_k, T, trials, np.sqrt(d_k)) for d_k in d_k_values} for seed in seeds]
    settings_ = {"d_k": d_k_values, "T": T, "trials": trials}
    made = ranking_stacked(seeds, settings_, held, attention)
    assert [list(run) for run in made] == [["table"]] * len(seeds)
    for seed, run, scores in zip(seeds, made, held, strict=True):
        assert run["table"] == reference_rows(seed, d_k_values, T, trials, scores, attention)
