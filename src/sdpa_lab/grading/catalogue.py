"""The classic mistakes in words: what each does, its fix and the lesson's section to reread.

A mistake is named only from measured outputs (sdpa_lab.grading.mistakes reproduces them with
runnable variants of the lesson's code); this module holds the words alone, so that the
gradebook, the pages and the grade itself name a mistake the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

# Section titles of the lesson, to reread.
FULL_FORMULA = "The Full Formula, Piece by Piece"
DOT_PRODUCT_GROWS = "Why a Dot Product Grows With Dimension"
VARIANCE_TRACKS = "Proving It: Score Variance Tracks d_k"
LARGE_SCORES = "Why Large Scores Break Softmax"
CANONICAL_FORWARD = "The Canonical Forward in NumPy"
EXERCISE_1 = "Exercise 1: Measure the Variance at d_k = 1024"
EXERCISE_2 = "Exercise 2: Sweep the Softmax Entropy Across d_k"
EXERCISE_3 = "Exercise 3: Confirm Scaling Does Not Change the Ranking"


@dataclass(frozen=True)
class Mistake:
    """One classic mistake: what the code does, how to fix it, and where the lesson explains it."""

    title: str
    does: str
    fix: str
    reread: str


MISTAKES = {
    "no_scale": Mistake(
        "no scale", "the scores Q K^T go into the softmax undivided",
        "divide the scores by sqrt(d_k) before the softmax",
        f'"{FULL_FORMULA}" (Step 2) and "{LARGE_SCORES}"'),
    "divides_by_dk": Mistake(
        "divides by d_k (or by sqrt(d_k) twice) instead of sqrt(d_k)", "the scores are divided by d_k, which "
        "shrinks their variance to 1/d_k; dividing by sqrt(d_k) twice gives the same number, so the outputs cannot "
        "tell the two apart", "divide by sqrt(d_k), the standard deviation of the scores, once",
        f'"{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_dv": Mistake(
        "divides by sqrt(d_v) instead of sqrt(d_k)", "the scores are divided by the square root of V's width d_v "
        "(V.shape[-1]), which equals sqrt(d_k) only when d_v = d_k", "take d_k from the queries and keys: "
        "d_k = Q.shape[-1] (or K.shape[-1]), and divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_tk": Mistake(
        "divides by sqrt(T_k), the number of keys, instead of sqrt(d_k)", "the scale is taken from the wrong axis "
        "of a shape: K.shape[1] (or K.shape[-2]) is the number of key positions T_k, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[-1] (or K.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_tq": Mistake(
        "divides by sqrt(T_q), the number of queries, instead of sqrt(d_k)", "the scale is taken from the wrong "
        "axis of a shape: Q.shape[1] (or Q.shape[-2]) is the number of query positions T_q, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[-1] (or K.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_sqrt_b": Mistake(
        "divides by sqrt(B), the batch size, instead of sqrt(d_k)", "the scale is taken from the wrong axis of a "
        "shape: Q.shape[0] is the batch size B, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[-1] (or K.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "divides_by_fourth_root_dk": Mistake(
        "divides by the fourth root of d_k instead of sqrt(d_k)", "the scores are divided by d_k^(1/4), the square "
        "root taken twice (np.sqrt(np.sqrt(d_k)), or np.sqrt of a d_k that is already a square root), so their "
        "variance stays sqrt(d_k), not 1", "take the square root once: scores / np.sqrt(d_k), d_k = Q.shape[-1]",
        f'"{DOT_PRODUCT_GROWS}"'),
    "multiplies_by_sqrt_dk": Mistake(
        "multiplies by sqrt(d_k) instead of dividing", "the scores are multiplied by sqrt(d_k), which makes their "
        "variance d_k^2 and the softmax even more one-hot than with no scale", "divide: scores / np.sqrt(d_k)",
        f'"{DOT_PRODUCT_GROWS}" and "{LARGE_SCORES}"'),
    "divides_by_sqrt_n": Mistake(
        "divides by sqrt(n_samples) instead of sqrt(d_k)", "the scale is taken from the wrong axis of a shape: "
        "Q.shape[0] is the number of samples n_samples, not the feature width d_k",
        "d_k is the last axis: d_k = Q.shape[1] (or Q.shape[-1]); divide the scores by sqrt(d_k)",
        f'"{VARIANCE_TRACKS}" and "{DOT_PRODUCT_GROWS}"'),
    "other_scale": Mistake(
        "a scale that is not 1/sqrt(d_k)", "the scores are multiplied by a factor that matches none of the usual "
        "slips (measured above)", "divide the scores by sqrt(d_k), with d_k = Q.shape[-1] taken from the inputs",
        f'"{FULL_FORMULA}" (Step 2) and "{DOT_PRODUCT_GROWS}"'),
    "softmax_before_scale": Mistake(
        "softmax before the scaling", "the softmax gets the unscaled scores Q K^T, and the scale comes after it: on "
        "the weights (whose rows then sum to the scale, not to 1) or on the output, where it no longer keeps the "
        "softmax out of its one-hot regime", "scale the scores first, then take the softmax: "
        "softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_k), axis=-1)",
        f'"{FULL_FORMULA}" (Steps 2 and 3) and "{LARGE_SCORES}"'),
    "sums_over_samples": Mistake(
        "scores summed over the samples (axis=0)", "np.sum(Q * K, axis=0) adds up each feature's n_samples "
        "products: d_k sums of n_samples terms each, whose variance is about n_samples, not the n_samples scores "
        "q . k of length d_k whose variance is d_k", "sum over the features, the last axis: np.sum(Q * K, axis=1) "
        "(or axis=-1), one score per pair of rows",
        f'"{VARIANCE_TRACKS}"'),
    "wrong_axis": Mistake(
        "softmax over the wrong axis", "the softmax normalizes over the queries: the columns of the weights sum to 1, "
        "not the rows", "take the softmax over the last axis (axis=-1), the keys",
        f'"{FULL_FORMULA}" (Step 3)'),
    "batch_axis": Mistake(
        "softmax over the batch axis", "the softmax normalizes over axis 0, across the sequences of the batch",
        "take the softmax over the last axis (axis=-1), the keys", f'"{FULL_FORMULA}" (Step 3)'),
    "ignores_axis": Mistake(
        "softmax ignores its axis argument", "the softmax always normalizes over the last axis, whatever `axis` says",
        "pass `axis` on to max and sum", f'"{LARGE_SCORES}" (the softmax function)'),
    "no_max_subtraction": Mistake(
        "no max subtraction", "exp overflows on large scores: the weights come out inf or nan there, "
        "while small scores give the right weights",
        "subtract the row max (keepdims=True) before exp; softmax does not change",
        f'"{FULL_FORMULA}" (Step 3: the numerically stable softmax)'),
    "whole_array_max": Mistake(
        "softmax subtracts the whole array's max", "the max subtracted before exp is the largest score of the whole "
        "array (x.max()), not of each row: a row whose scores lie far below the array's max underflows to 0 / 0 = nan",
        "subtract each row's own max: x - x.max(axis=axis, keepdims=True)",
        f'"{FULL_FORMULA}" (Step 3: the numerically stable softmax)'),
    "whole_array_sum": Mistake(
        "softmax divides by the whole array's sum", "exp(x) is divided by the sum over the whole array (e.sum()), "
        "not over each row, so no row of weights sums to 1",
        "divide by each row's own sum: e / e.sum(axis=axis, keepdims=True)",
        f'"{FULL_FORMULA}" (Step 3)'),
    "k_transpose": Mistake(
        "K.T on a 3-D array", "K.T reverses all three axes, (B, T, d_k) -> (d_k, T, B), so the batch and feature "
        "axes trade places: the matmul fails on most shapes and mixes batches on the rest",
        "swap only the last two axes: K.transpose(0, 2, 1) or np.swapaxes(K, -1, -2)",
        f'"{FULL_FORMULA}" (Step 1: K^T has shape (B, d_k, T)) and "{CANONICAL_FORWARD}"'),
    "scaled_entropies": Mistake(
        "entropies of a scaled softmax in Exercise 2", "the exercise asks for the entropy of the *unscaled* "
        "softmax(K q) at each d_k, and these are the entropies of scores multiplied by a factor (measured above)",
        "take the softmax of the raw scores K @ q, with no scale, to watch it saturate as d_k grows",
        f'"{EXERCISE_2}" and "{LARGE_SCORES}"'),
    "bits": Mistake(
        "entropies in bits", "the entropy is taken with log2, so every value is the lesson's divided by log 2",
        "use the natural log, np.log, as the lesson's entropy does", f'"{EXERCISE_2}"'),
    "reversed": Mistake(
        "one argsort reversed", "one of the two argsorts is taken in descending order and the other ascending, so "
        "equal rankings look different", "sort both the same way (np.argsort's ascending order)",
        f'"{EXERCISE_3}"'),
    "descending": Mistake(
        "argsorts in descending order", "both argsorts are reversed (descending), while the exercise compares "
        "np.argsort's ascending order", "use np.argsort(weights) as it comes, ascending", f'"{EXERCISE_3}"'),
    "max_without_keepdims": Mistake(
        "the max is subtracted without keepdims", "x.max(axis=axis) drops the axis it reduces, so the maxima are "
        "broadcast along the wrong axis: the subtraction fails on most shapes, and where it runs it subtracts "
        "another row's max, which changes the weights", "keep the reduced axis: x - x.max(axis=axis, keepdims=True)",
        f'"{FULL_FORMULA}" (Step 3: the numerically stable softmax)'),
    "returns_none": Mistake(
        "returns None: no `return`", "the function ends without `return`, so every call gives None (in a notebook "
        "the last definition of a name is the one that runs: a later cell that defines it again replaces the first)",
        "end the function with its `return`, and check that the last cell defining it is the one you mean",
        f'"{CANONICAL_FORWARD}"'),
    "k_not_transposed": Mistake(
        "K is not transposed", "the scores are Q @ K, (B, T_q, d_k) @ (B, T_k, d_k): the matmul fails unless "
        "T_k = d_k, and where it runs it pairs each query with the keys' columns, not with the keys",
        "transpose the last two axes of K: Q @ K.transpose(0, 2, 1) (or np.swapaxes(K, -1, -2))",
        f'"{FULL_FORMULA}" (Step 1: K^T has shape (B, d_k, T))'),
    "v_transposed": Mistake(
        "V is transposed", "the output is weights @ V^T, (B, T_q, T_k) @ (B, d_v, T_k): the matmul fails unless "
        "T_k = d_v, and where it runs it averages V's columns, not the value vectors",
        "multiply the weights by V as it comes: weights @ V, (B, T_q, T_k) @ (B, T_k, d_v)",
        f'"{FULL_FORMULA}" (Step 4)'),
    "causal_mask": Mistake(
        "a causal mask in the forward", "the weights above the diagonal are 0: the scores of the later keys are "
        "masked out before the softmax (a causal mask, as in a decoder), which this lesson's forward does not have",
        "leave every score in: the lesson's forward is the non-causal softmax(Q K^T / sqrt(d_k)) V over all keys",
        f'"{CANONICAL_FORWARD}"'),
    "standard_deviation": Mistake(
        "standard deviations instead of variances", "your variances are about the square roots of the expected "
        "ones (about sqrt(d_k) and 1): scores.std(), or np.sqrt of the variance, where the exercise asks for "
        "scores.var()", "return the variances: scores.var() and (scores / np.sqrt(d_k)).var()",
        f'"{VARIANCE_TRACKS}" and "{EXERCISE_1}"'),
    "uniform_draws": Mistake(
        "np.random.rand instead of np.random.randn", "Q and K hold uniforms on [0, 1), not standard normals: each "
        "product q_i k_i has mean 1/4 and variance 1/9 - 1/16 = 7/144, so the scores' variance is d_k * 7/144 "
        "(about 0.049 d_k) and the scaled one 7/144, not d_k and 1", "draw standard normals: "
        "np.random.randn(n_samples, d_k) (np.random.rand draws uniforms)",
        f'"{VARIANCE_TRACKS}"'),
    "entropy_mean": Mistake(
        "entropy averaged instead of summed", "your entropies are the right ones divided by T, the number of keys: "
        "the mean of -p log p over the keys (np.mean) instead of its sum", "sum over the keys: "
        "-np.sum(p * np.log(p + 1e-12))", f'"{EXERCISE_2}"'),
    "swapped": Mistake(
        "output and weights swapped", "it returns (weights, output)",
        "return out, weights, in that order", f'"{CANONICAL_FORWARD}"'),
}


# What the lesson never claims is no mistake: the grader notes it, with its fix, and passes the function.
NOT_CLAIMED = {
    "upcast": Mistake(
        "float32 in, another dtype out", "a float64 value on the way (a NumPy float64 scalar such as np.sqrt(d), "
        "an array made with dtype=float) promotes the float32 inputs. The lesson never claims that the dtype is "
        "kept (its own forward's `/ np.sqrt(d_k)` returns float64, and a forward that returns what it returns is "
        "not noted), so this is a note, not a fail",
        "to keep float32, compute with Python floats (math.sqrt(d)) or scalars of the input's dtype "
        "(x.dtype.type(...))",
        f'"{CANONICAL_FORWARD}"'),
}
