"""The scales the raw scores q.k are multiplied by: none, 1/sqrt(d_k) (the lesson's), 1/d_k."""

from __future__ import annotations

import math

# Every scale the experiments measure (B8 compares all three); an experiment may use a subset.
SCALES = ("none", "inv_sqrt_dk", "inv_dk")


def scale_factor(scale: str, d_k: int) -> float:
    """The number the raw scores are multiplied by under `scale`."""
    factors = {"none": 1.0, "inv_sqrt_dk": 1.0 / math.sqrt(d_k), "inv_dk": 1.0 / d_k}
    if scale not in factors:
        raise ValueError(f"unknown scale {scale!r}; expected one of {SCALES}")
    return float(factors[scale])


def scale_difference(a: str, b: str) -> str:
    """The `scale` label of rows holding, trial by trial, a quantity under scale `a` minus under `b`.

    Two scales applied to the same trials give correlated values, so a claim that
    compares them needs the spread of their per-trial difference, not of each alone.
    """
    return f"{a}_minus_{b}"
