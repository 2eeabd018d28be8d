"""The scales the raw scores q.k are multiplied by: none, 1/sqrt(d_k) (the lesson's), 1/d_k."""

from __future__ import annotations

import math

# Every scale the experiments measure (B8 compares all three); an experiment may use a subset.
# "inv_sqrt_dk" is the attention's own scale (attention.default_scale, the lesson's 1/sqrt(d_k)): the
# experiments apply it as the attention does (scale_arg gives None for it), so that a change
# to the attention's scale, such as the calibration study's broken arms make, reaches what they measure.
SCALES = ("none", "inv_sqrt_dk", "inv_dk")
ATTENTIONS_OWN = "inv_sqrt_dk"


def scale_factor(scale: str, d_k: int) -> float:
    """The number `scale` stands for at head size d_k: 1, 1/sqrt(d_k) or 1/d_k, as written (the lesson's
    literal code and theory use it; the experiments take the attention's own scale from scale_arg)."""
    factors = {"none": 1.0, "inv_sqrt_dk": 1.0 / math.sqrt(d_k), "inv_dk": 1.0 / d_k}
    if scale not in factors:
        raise ValueError(f"unknown scale {scale!r}; expected one of {SCALES}")
    return factors[scale]


def scale_arg(scale: str, d_k: int) -> float | None:
    """The `scale` argument of attention.attention_weights (and attention.score_scale) for `scale`: None,
    the attention's own default, for ATTENTIONS_OWN; else the number (scale_factor)."""
    return None if scale == ATTENTIONS_OWN else scale_factor(scale, d_k)


def scale_difference(a: str, b: str) -> str:
    """The `scale` label of rows holding, trial by trial, a quantity under scale `a` minus under `b`.

    Two scales applied to the same trials give correlated values, so a claim that
    compares them needs the spread of their per-trial difference, not of each alone.
    """
    return f"{a}_minus_{b}"
