"""B10's premises, measured at each learning run's start (rows of learning.csv, decided in claims.learning_premises).

The learning experiment's sentence rests on two things its descent does not show by itself:
1. the scaled head is the lesson's head: its weights are softmax(K q / sqrt(d_k));
2. the descent follows the loss's true gradient.
Both are measured here on the scored runs' own draws, at their start, against computations written apart from the
attention (an own dot product, an own softmax, an own loss): the attention's weights of the descent's raw scores
against softmax(K q / sqrt(d_k)); and the derivative of the loss along the run's own query, dL(lambda q)/dlambda at
lambda = 1 = q . dL/dq, from the gradient the descent steps with (the attention's backward, as score_loss_and_grad
gives it, through the keys: dL/dq = c K^T dL/dz), against a central finite difference of the loss at
lambda = 1 +- FD_STEP. Along q the scores move along themselves (lambda z), so the difference is taken on the
reference's scores and needs no query rounded. With the largest sizes the rounding bounds need (the scores' sum
of |q_i k_i|, their spread, the values' largest norm), per d_k and head, the maximum over the runs: the bounds
grow with each, so a bound from the maxima holds for every run.
"""

from __future__ import annotations

import numpy as np

from sdpa_lab.attention import Attention

# The finite difference's step in lambda: a power of 2 (1 +- it and the division by 2 FD_STEP are exact), near
# where its truncation (FD_STEP^2) and its rounding (1 / FD_STEP) meet for the scaled head's scores.
FD_STEP = 2.0**-19

# Per d_k: the scaled head's weights' largest difference from softmax(K q / sqrt(d_k)) (premise 1); per d_k and
# head: the derivative's largest difference, the largest finite difference itself, and the sizes its bound needs.
WEIGHT_STATISTICS = ("start_weight_error",)
GRADIENT_STATISTICS = ("start_gradient_error", "start_derivative_size", "start_score_spread",
                       "start_score_abs_sum", "start_value_norm", "finite_difference_step")


def own_scores(q0: np.ndarray, K: np.ndarray, c_sqrt: float | None) -> np.ndarray:
    """The scores K q (R, T) of queries q0 (R, d_k) and keys K (R, T, d_k), as a sum of products written here,
    divided by sqrt(c_sqrt) when given (the lesson's head: c_sqrt = d_k), else unscaled."""
    s = (K * q0[:, None, :]).sum(axis=-1)  # (R, T)
    return s / np.sqrt(c_sqrt) if c_sqrt is not None else s


def own_softmax(z: np.ndarray) -> np.ndarray:
    """exp(z - max z) / sum exp(z - max z) along the last axis (R, T), written here."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def own_loss(z: np.ndarray, V: np.ndarray, target: np.ndarray) -> np.ndarray:
    """0.5 ||softmax(z) V - target||^2 (R,) for scores z (R, T), values V (R, T, d_v), targets (R, d_v)."""
    r = (own_softmax(z)[:, :, None] * V).sum(axis=-2) - target  # (R, d_v)
    return 0.5 * (r * r).sum(axis=-1)


def start_weight_error(q0, K, d_k: int, attention: Attention) -> np.ndarray:
    """Per run (R,): the largest |attention's weights of the descent's raw scores K q0 - softmax(K q0 / sqrt(d_k))|
    (own_softmax of own_scores), over the T keys."""
    s0 = (K @ q0[:, :, None])[:, :, 0]  # (R, T) the descent's initial raw scores
    return np.abs(attention.weights(s0, d_k) - own_softmax(own_scores(q0, K, d_k))).max(axis=-1)


def start_derivative(q0, K, V, target, d_k: int, scale, attention: Attention, loss_and_grad) -> np.ndarray:
    """Per run (R,): q0 . dL/dq of the gradient the descent steps with, under `scale` (Attention.weights' argument),
    dL/dq = c K^T dL/dz, dL/dz from `loss_and_grad` (the descent's, learning.score_loss_and_grad: the attention's
    weights and backward)."""
    s0 = (K @ q0[:, :, None])[:, :, 0]  # (R, T)
    _, g_z = loss_and_grad(s0[:, None, :], V, target[:, None, :], d_k, scale, attention)  # (R, 1, T)
    grad_q = attention.score_scale(d_k, scale) * (g_z @ K)[:, 0, :]  # (R, d_k)
    return (grad_q * q0).sum(axis=-1)


def finite_difference(z: np.ndarray, V, target) -> np.ndarray:
    """Per run (R,): (L((1 + h) z) - L((1 - h) z)) / (2 h), h = FD_STEP, of own_loss at scores lambda z (R, T)."""
    return (own_loss((1 + FD_STEP) * z, V, target) - own_loss((1 - FD_STEP) * z, V, target)) / (2 * FD_STEP)


def premise_values(q0, K, V, target, d_k: int, scales: dict, attention: Attention, loss_and_grad) -> dict:
    """Per run (R,), each premise's quantities: {(head, statistic): values}, heads the keys of `scales` (head ->
    (Attention.weights' scale argument, the head's scale as the lesson writes it: "d_k" for 1/sqrt(d_k), None for
    none)); the weights' under the head whose lesson scale is 1/sqrt(d_k). `loss_and_grad`: the descent's loss and
    gradient (start_derivative)."""
    out = {}
    abs_sum = (np.abs(K) * np.abs(q0)[:, None, :]).sum(axis=-1).max(axis=-1)  # (R,) largest sum_i |q_i k_i|
    value_norm = np.sqrt((V * V).sum(axis=-1)).max(axis=-1)  # (R,) largest ||v_j||
    for head, (scale, lesson) in scales.items():
        z = own_scores(q0, K, d_k if lesson == "d_k" else None)  # (R, T) the reference's scores
        fd = finite_difference(z, V, target)
        measured = start_derivative(q0, K, V, target, d_k, scale, attention, loss_and_grad)
        out |= {(head, "start_gradient_error"): np.abs(measured - fd), (head, "start_derivative_size"): np.abs(fd),
                (head, "start_score_spread"): z.max(axis=-1) - z.min(axis=-1),
                (head, "start_score_abs_sum"): abs_sum, (head, "start_value_norm"): value_norm,
                (head, "finite_difference_step"): np.full(len(q0), FD_STEP)}
        if lesson == "d_k":
            out[head, "start_weight_error"] = start_weight_error(q0, K, d_k, attention)
    return out


def statistics_of(scaled: bool) -> tuple[str, ...]:
    """The premise statistics learning.csv holds for a head: the weights' only under the scaled head."""
    return (WEIGHT_STATISTICS if scaled else ()) + GRADIENT_STATISTICS
