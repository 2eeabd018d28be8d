"""The finite-d_k expectations B5, B7 and B8 ask for (Results.expectation's keys), each claim's own declaration
(its `Claim.expectations`, with the settings they are made from): a study computes them once for all its runs. And
the kinds of expectation they compute themselves (`Claim.expectation_kinds`): the mean entropy under 1/d_k and its
gap to 1/sqrt(d_k)'s (claims.entropy_expectations), the chance that Exercise 2 as written falls at every step, and
the unscaled over the scaled mean gradient at the scores with the law of one trial's term in it
(claims.gradient_expectation).
"""

from __future__ import annotations

from collections.abc import Mapping

from sdpa_lab.claims.declared import ExpectationKind
from sdpa_lab.claims.entropy_expectations import one_draw_falls, over_d_k_entropy, over_d_k_gap
from sdpa_lab.claims.expectations import SHAPES
from sdpa_lab.claims.gradient_expectation import gradient_ratio, ratio_law
from sdpa_lab.experiments.sizes import EXERCISE2_D_K, EXERCISE2_T

# The expectation, then its law's shape (theory_spread).
_LAWS = ("", *(f":{shape}" for shape in SHAPES))

OVER_D_K, OVER_D_K_GAP, ONE_DRAW_FALLS = "inv_dk", "inv_dk_minus_scaled", "one_draw_falls"
GRADIENT_RATIO = "unscaled_over_scaled"


def _one_draw_falls(d_k: int, T: int, unit_means: Mapping | None = None) -> tuple[float, float]:
    """The chance that Exercise 2 as written falls at every step: at its own d_k and T only."""
    if (d_k, T) != (EXERCISE2_D_K[-1], EXERCISE2_T):
        raise ValueError(f"expectation {ONE_DRAW_FALLS!r} is Exercise 2's, at d_k={EXERCISE2_D_K[-1]} and "
                         f"T={EXERCISE2_T} only (got d_k={d_k}, T={T})")
    return one_draw_falls()


B5_KINDS = (ExpectationKind(ONE_DRAW_FALLS, "entropy", _one_draw_falls),)


def _ratio_shape(shape: str):
    """The kind's compute for one shape of the gradient ratio's law of one trial (gradient_expectation.ratio_law)."""
    return lambda d_k, T, unit_means=None: ratio_law(d_k, T)[SHAPES.index(shape)]


B7_KINDS = (ExpectationKind(GRADIENT_RATIO, "score_grad_norm", lambda d_k, T, unit_means=None: gradient_ratio(d_k, T)),
            *(ExpectationKind(f"{GRADIENT_RATIO}:{shape}", "score_grad_norm", _ratio_shape(shape))
              for shape in SHAPES))
B8_KINDS = (ExpectationKind(OVER_D_K, "entropy", lambda d_k, T, unit_means=None: over_d_k_entropy(d_k, T)),
            ExpectationKind(OVER_D_K_GAP, "entropy", over_d_k_gap, unit_variance=True))

# The settings each claim's expectations are made from: section -> its settings read.
B5_SETTINGS = {"entropy_sweep": ("d_k", "T")}
B7_SETTINGS = {"gradient": ("d_k", "T")}
B8_SETTINGS = {"entropy_sweep": ("d_k", "T")}


def b5_expectations(config: Mapping) -> list[tuple[str, str, int, int]]:
    """The expectations decide_b5 asks for on the tables of `config` (its entropy_sweep section)."""
    entropy = config["entropy_sweep"]
    entropy_d_k = sorted(set(entropy["d_k"]))
    return ([("scaled_minus_unit_variance" + law, "entropy", d, entropy["T"]) for law in _LAWS for d in entropy_d_k]
            + [("unscaled" + law, "entropy", d, entropy["T"]) for law in _LAWS  # the falls' value and law
               for d in (entropy_d_k if len(entropy_d_k) > 1 else [])]
            + [(ONE_DRAW_FALLS, "entropy", EXERCISE2_D_K[-1], EXERCISE2_T)])  # Exercise 2 as written: its own sizes


def b7_expectations(config: Mapping) -> list[tuple[str, str, int, int]]:
    """The expectations decide_b7 asks for on the tables of `config` (its gradient section)."""
    gradient = config["gradient"]
    ds, T = sorted(set(gradient["d_k"])), gradient["T"]
    jacobian = ("jacobian_norm", "log10_jacobian_norm")
    return ([("unscaled", q, d, T) for q in jacobian for d in ds]  # both ends of every step (one d_k: the widest)
            + [("unscaled" + law, q, d, T) for q in jacobian for law in _LAWS[1:]  # the falls' law (fall_spread)
               for d in (ds if len(ds) > 1 else [])]
            + [("unscaled", q, 2 * ds[-1], T) for q in jacobian]  # the widest's premise: toward twice it
            + [(kind + law, "jacobian_norm", d, T) for kind in ("scaled_minus_unit_variance", "scaled")
               for law in _LAWS for d in ds]  # the widest's too
            + [("scaled", "log10_jacobian_norm", ds[-1], T)]
            + [("scaled_minus_unscaled" + law, q, ds[-1], T) for q in jacobian for law in _LAWS[1:]
               if ds[-1] > 1]  # the widest's spread (theory_spread); at d_k = 1 nothing is compared
            # the gradient ratio's falls, its value and law at both ends of every step (those decided are where
            # theory says the norm falls: not known before the expectations are)
            + [(GRADIENT_RATIO + law, "score_grad_norm", d, T) for law in _LAWS for d in (ds if len(ds) > 1 else [])])


def b8_expectations(config: Mapping) -> list[tuple[str, str, int, int]]:
    """The expectations decide_b8 asks for on the tables of `config` (its entropy_sweep section): the mean entropy
    under 1/d_k at both ends of every step, and its gap to 1/sqrt(d_k)'s at the widest head."""
    entropy = config["entropy_sweep"]
    ds, T = sorted(set(entropy["d_k"])), entropy["T"]
    return [(OVER_D_K, "entropy", d, T) for d in (ds if len(ds) > 1 else [])] + [(OVER_D_K_GAP, "entropy", ds[-1], T)]
