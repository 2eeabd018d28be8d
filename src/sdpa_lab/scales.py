"""The scales the raw scores q.k are multiplied by: none, 1/sqrt(d_k) (the lesson's), 1/d_k."""

from __future__ import annotations

import math

# Every scale the experiments measure (B8 compares all three); an experiment may use a subset.
SCALES = ("none", "inv_sqrt_dk", "inv_dk")


# The attention's own scale, the lesson's 1/sqrt(d_k): what the rows labelled "inv_sqrt_dk" use.
# The seeded experiments take it as a parameter (`attention_scale`, one of SCALES) so that the
# calibration study (sdpa_lab.calibration) can run them with a deliberately wrong attention,
# no scale or 1/d_k, and measure how often the claims catch it. The pipeline never changes it.
ATTENTION_SCALE = "inv_sqrt_dk"


def check_attention_scale(attention_scale: str) -> str:
    """`attention_scale` if it names one of SCALES; else ValueError."""
    if attention_scale not in SCALES:
        raise ValueError(f"unknown attention_scale {attention_scale!r}; expected one of {SCALES}")
    return attention_scale


def scale_divisor(scale: str, d_k: int, attention_scale: str = ATTENTION_SCALE) -> float:
    """The number the raw scores are divided by under `scale`; the attention's own scale
    ("inv_sqrt_dk") divides as `attention_scale` says (sqrt(d_k) unless a broken attention is asked for)."""
    if scale == ATTENTION_SCALE:
        scale = check_attention_scale(attention_scale)
    divisors = {"none": 1.0, "inv_sqrt_dk": math.sqrt(d_k), "inv_dk": d_k}
    if scale not in divisors:
        raise ValueError(f"unknown scale {scale!r}; expected one of {SCALES}")
    return float(divisors[scale])


def scale_factor(scale: str, d_k: int, attention_scale: str = ATTENTION_SCALE) -> float:
    """The number the raw scores are multiplied by under `scale`: 1 / scale_divisor."""
    return 1.0 / scale_divisor(scale, d_k, attention_scale)


def scale_difference(a: str, b: str) -> str:
    """The `scale` label of rows holding, trial by trial, a quantity under scale `a` minus under `b`.

    Two scales applied to the same trials give correlated values, so a claim that
    compares them needs the spread of their per-trial difference, not of each alone.
    """
    return f"{a}_minus_{b}"
