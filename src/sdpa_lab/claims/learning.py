"""B10: without the scale, a wide head stops learning (the lesson's opening, "Welcome to Scaled Dot-Product
Attention").
"""

from __future__ import annotations

import math

import numpy as np

from sdpa_lab.claims import learning_premises as premises
from sdpa_lab.claims.model import Check, Claim, missing, statistical
from sdpa_lab.claims.standard_errors import ALPHA_CLAIM, paired_proportion_se
from sdpa_lab.numbers import number
from sdpa_lab.results import Results, ResultsError

PAGE = "docs/claims/learning.md"

# The checks, each named once: the name makes the check and keys the lesson's sentence it decides.
GAP_TREND = "slope of scaled minus unscaled success fraction vs log d_k over the wide heads"  # when not measured
GAP_TREND_PAIRED = GAP_TREND + " (paired, best learning rate each)"
WIDEST_GAP = "scaled minus unscaled success fraction at the widest head"

# The lesson's sentence the checks decide, verbatim.
_STOPS = "Without it, a self-attention layer stops learning as soon as the head grows wide"
PREMISES = (premises.WEIGHTS, *(premises.GRADIENT.format(head=words) for words, _ in premises.HEADS.values()))

# A head is wide from here: the unscaled scores' spread sqrt(d_k) is at least twice the scaled head's (1). Below
# it the two heads are nearly the same head (at d_k = 1 exactly: the scale is 1), and what separates them is how
# the learning-rate grid happens to fit each, not saturation (docs/claims/learning.md).
WIDE_D_K = 4


def _success(R: Results, d: int, scale: str):
    """Success fraction at the best learning rate of (d_k, scale), and that learning rate."""
    best = R.values("learning.csv", "lr", d_k=d, scale=scale, best_lr=1, statistic="success_fraction")
    if len(best) != 1:
        raise ResultsError(f"{R.dir / 'learning.csv'}: expected one best learning rate for d_k={d}, scale={scale}")
    lr = float(best[0])
    return R.value("learning.csv", d_k=d, scale=scale, lr=lr, statistic="success_fraction"), lr


def _slope_weights(ds: list[int]) -> np.ndarray:
    """c (n,) with the OLS slope of y against log d_k = sum c_i y_i."""
    x = np.log(ds)
    return (x - x.mean()) / np.sum((x - x.mean()) ** 2)


def _gap_trend(ds: list[int], gaps: list[float], only: list[tuple[int, int]], runs: int) -> tuple[float, float, float]:
    """OLS slope of the paired gap (scaled minus unscaled success fraction) vs log d_k; its SE from each d_k's
    paired SE (the d_k are independent draws); and the largest deviation it can show (gaps lie in [-1, 1])."""
    c = _slope_weights(ds)
    var = np.array([paired_proportion_se(only_s, only_u, runs) ** 2 for only_s, only_u in only])
    return float(c @ np.array(gaps)), math.sqrt(float(c**2 @ var)), float(np.sum(np.abs(c)))


def decide_b10(R: Results) -> list[Check]:
    src = "learning.csv"
    ds = [int(d) for d in R.levels(src, "d_k")]
    runs = int(R.first(src, "runs"))
    lrs = R.levels(src, "lr")
    success = {(d, sc): _success(R, d, sc) for d in ds for sc in ("none", "inv_sqrt_dk")}
    edge = [f"{sc} at d_k={d}" for (d, sc), (_, lr) in success.items() if lr in (lrs[0], lrs[-1])]
    note = ("best learning rate at the edge of the grid for " + ", ".join(edge)) if edge else ""
    # the same runs under both scales: per d_k, the runs only the scaled, and only the unscaled, head learns
    only = {d: tuple(int(R.value(src, d_k=d, scale="inv_sqrt_dk_minus_none", statistic=f"only_{sc}_succeeds"))
                     for sc in ("scaled", "unscaled")) for d in ds}
    wide = [d for d in ds if d >= WIDE_D_K]
    # The lesson's experiment tunes the learning rate for each head. A scaled head whose best rate is the grid's
    # smallest or largest may do better at a rate outside it: its success may be understated, and a comparison
    # that needs it to lead cannot then be decided (with one rate, or one rate too small for one step, a correct
    # run failed: a saturated unscaled head can jump onto its target in one large step where the scaled head
    # with the same small rate cannot). At a success fraction of 1 nothing is understated.
    untuned = [d for d in wide
               if success[d, "inv_sqrt_dk"][1] in (lrs[0], lrs[-1]) and success[d, "inv_sqrt_dk"][0] < 1]

    def untuned_why(d_ks: list[int]) -> str:
        rates = ", ".join(f"{number(success[d, 'inv_sqrt_dk'][1])} at d_k={d}" for d in d_ks)
        return (f"the scaled head's best learning rate is at the edge of the grid ({rates}; grid {number(lrs[0])}.."
                f"{number(lrs[-1])}): a better one may lie outside it, and the lesson's experiment tunes the rate for "
                "each head; widen learning_rates")

    # the premises the sentence rests on, decided first: a broken attention fails them whatever the gaps read
    out = premises.premise_checks(R, ds, runs)
    if len(wide) < 2:
        out.append(missing("B10", GAP_TREND, f"d_k={ds[0]}..{ds[-1]}, runs={runs}", src,
                           f"needs at least two wide heads (d_k >= {WIDE_D_K}) in the sweep"))
    elif untuned:
        out.append(missing("B10", GAP_TREND, f"d_k={wide[0]}..{wide[-1]}, runs={runs}", src, untuned_why(untuned)))
    else:  # the trend over every wide head, not only the end points
        gaps = [success[d, "inv_sqrt_dk"][0] - success[d, "none"][0] for d in wide]
        slope, se, reach = _gap_trend(wide, gaps, [only[d] for d in wide], runs)
        out.append(statistical("B10", GAP_TREND_PAIRED, f"d_k={wide[0]}..{wide[-1]}, runs={runs}", slope, 0.0, se,
                               "above", src, cell=success[wide[-1], "none"][0].cell, reach=reach, note=note))
    # The lesson's sentence is about the unscaled head, against the scaled one: nothing is claimed of the scaled
    # head's own trend (with more keys than the head is wide, both heads' success falls as d_k and the values'
    # width grow; the paired gap cancels what the two heads share).
    widest = ds[-1]
    (u1, lr_u), (s1, lr_s) = success[widest, "none"], success[widest, "inv_sqrt_dk"]
    if widest < WIDE_D_K:
        out.append(missing("B10", WIDEST_GAP, f"d_k={widest}, runs={runs}", src,
                           f"the widest head is not wide (d_k < {WIDE_D_K})"))
        return out
    if widest in untuned:
        out.append(missing("B10", WIDEST_GAP, f"d_k={widest}, runs={runs}", src, untuned_why([widest])))
        return out
    only_s, only_u = only[widest]
    on_target = R.value(src, d_k=widest, scale="none", lr=lr_u, statistic="starts_on_target")
    out.append(statistical("B10", WIDEST_GAP, f"d_k={widest}, runs={runs}, lr={lr_s:g} vs {lr_u:g}", s1 - u1, 0.0,
                           paired_proportion_se(only_s, only_u, runs), "above", src, cell=s1.cell, reach=1.0,
                           note=f"paired: {only_s} runs only the scaled head learns, {only_u} only the unscaled; "
                                f"{round(float(on_target) * runs)} unscaled runs start on their target (loss 0: "
                                "nothing to learn, not a success)"))
    return out


B10 = Claim(
    "B10", "Without the scale, a wide head stops learning",
    "In a small training task (gradient descent on a query so the attention output picks a target value among T), "
    "with the learning rate tuned separately for each, the unscaled head falls further and further behind the scaled "
    "one as the head grows wide (a rising gap over the sweep's wide heads, d_k >= 4), and the scaled head beats the "
    "unscaled one at the widest head. Nothing is claimed of the scaled head's own trend: the lesson's sentence is "
    "about the head without the scale. It rests on two premises, checked on the same runs at their start: the "
    "scaled head's weights are softmax(K q / sqrt(d_k)), and the descent follows the loss's true gradient.",
    "without it, a self-attention layer stops learning as soon as the head grows wide",
    "Welcome to Scaled Dot-Product Attention", ("learning.csv",),
    "k standard errors of paired differences: both heads learn on the same runs, so each d_k's SE comes from the "
    "runs only one head learns. The gap's trend is its OLS slope against log d_k over the wide heads (d_k >= 4), "
    "where the scale separates the two heads by more than the learning-rate grid's steps. A check that needs the "
    "scaled head at its grid's edge is not decided. The premises are deterministic: the scaled head's weights within "
    "a worst-case rounding bound of an own softmax(K q / sqrt(d_k)), and each head's derivative of the loss along the "
    "query within a derived truncation and rounding bound of a central finite difference of an own loss (not "
    "measured for a head where no run's derivative exceeds that bound)",
    decide_b10, sentences={GAP_TREND: _STOPS, GAP_TREND_PAIRED: _STOPS, WIDEST_GAP: _STOPS,
                           **dict.fromkeys(PREMISES, _STOPS)},
    page=PAGE, lead=(WIDEST_GAP,), alpha=ALPHA_CLAIM)

# This section's claims, gathered by claims/registry.py: a new claim's block goes just above, into this tuple.
CLAIMS = (B10,)
