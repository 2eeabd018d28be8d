"""A claimed positive difference decided where theory says it is positive, and held to theory's value everywhere:
where theory leaves the lesson's sentence undecided (its premise not met, theory's own sign unclear, theory saying
it is false) the measurement still fails when it departs from theory's value (B7's falls and widest head).
"""

from __future__ import annotations

import math

from sdpa_lab.claims.model import Check, statistical
from sdpa_lab.numbers import number

# A difference theory calls positive when its exact expectation exceeds this many Monte Carlo SEs.
CLEAR = 4.0

# A difference theory puts below this many of the measurement's SEs is too small for the run to show: a run's k is
# about 5, so a correct run clears it only by chance.
RESOLVED = 6.0


def theory_sign(expected: float, expected_se: float) -> int:
    """+1 or -1 where theory's exact expectation of a difference is clearly (CLEAR Monte Carlo SEs) positive or
    negative; 0 where it is within its own uncertainty of 0."""
    return 1 if expected > CLEAR * expected_se else -1 if expected < -CLEAR * expected_se else 0


# Why a point of B7 is outside the lesson's sentence: it speaks of a saturated softmax (large scores, near one-hot).
UNSATURATED = ("theory says the unscaled softmax is not yet saturated here: from near-uniform weights its Jacobian "
               "norm first rises with the scores' spread, and only at wider heads falls; the lesson's sentence is "
               "about the saturated regime")


def too_small_to_show(expected: float, se: float, trials: int | None) -> str:
    """Why a claimed difference can hardly be decided at this run's size, in words ("" where it can): theory's value
    of it is below RESOLVED of the measurement's SEs. Says how many trials would show it."""
    if trials is None or expected >= RESOLVED * se:
        return ""
    needed = trials * (RESOLVED * se / expected) ** 2
    needed = round(needed, 1 - int(math.log10(needed)))  # two significant digits
    return (f"theory's difference here is only {number(expected, digits=2)}, {number(expected / se, digits=2)} of "
            f"this run's SEs: at {number(trials)} trials a correct run shows it beyond the tolerance only by chance; "
            f"about {number(needed)} trials would show it")


def positive_by_theory(claim, check, parameters, measured, se, expected, expected_se, src, cell,
                        saturated: bool = True, trials: int | None = None, **shape) -> Check:
    """The lesson's sentence that a difference is positive, decided ("above 0") where theory's exact expectation of
    it is clearly positive and the unscaled softmax is saturated (`saturated`, the sentence's premise). Elsewhere the
    difference is held to theory's value ("within"), a departure failing, and agreeing with it leaves the sentence
    undecided: where the premise does not hold, model.CONDITION_NOT_MET; where theory's sign is unclear,
    model.INCONCLUSIVE; where theory says the sentence is false, "does not hold here, as theory predicts"
    (model.NOT_HERE), never "holds". Where it is decided, the difference is held to theory's value too (Check.theory),
    so that an inconclusive one is still what theory expects. `shape`: the skewness and excess kurtosis of the
    measurement's law."""
    sign = theory_sign(expected, expected_se)
    if saturated and sign > 0:  # `trials`: say so where theory's difference is too small for this run to show
        return statistical(claim, check, parameters, measured, 0.0, se, "above", src, cell=cell,
                           note=too_small_to_show(expected, se, trials), theory=expected, theory_se=expected_se,
                           **shape)
    theory = f"({number(expected, digits=3)}, Monte Carlo SE {number(expected_se, digits=2)})"
    if not saturated:
        flags = {"premise_not_met": True}
        note = f"{UNSATURATED}; theory's difference {theory}, which the measurement is held to"
    elif sign == 0:
        flags = {"theory_unclear": True}
        note = (f"theory's sign of the difference is unclear here {theory}: its value is within {number(CLEAR)} "
                "Monte Carlo SEs of 0, so theory itself cannot say whether the sentence holds at this point; the "
                "sentence is not decided, the measurement is held to theory's value")
    else:
        flags = {"theory_says_false": True}
        note = (f"theory says the lesson's sentence is false here: the difference is negative {theory}; held to "
                "theory's value")
    return statistical(claim, check, parameters, measured, expected, se, "within", src, expected_se=expected_se,
                       cell=cell, note=note, **flags, **shape)
