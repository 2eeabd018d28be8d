"""B6: scaling changes the softmax's sharpness, not its ranking (Exercise 3).
"""

from __future__ import annotations

from sdpa_lab.claims.model import Check, Claim, exact
from sdpa_lab.numbers import number
from sdpa_lab.results import Results

PAGE = "docs/claims/ranking.md"

# The checks, each named once: the name makes the check and keys the lesson's sentence it decides.
LESSON_DRAW = "argsort of the unscaled and scaled weights agree (Exercise 3, the lesson's draw)"
DISAGREEMENTS = "trials where argsort of the weights disagrees without an exact tie"

# The lesson's sentence the checks decide, verbatim.
_EXERCISE3 = ("For one query against eight keys at d_k = 256, confirm that the unscaled and scaled softmax weights "
              "produce the same argsort (the same ranking of positions), even though the actual weights differ wildly.")


def decide_b6(R: Results) -> list[Check]:
    # Exercise 3 as written: the lesson's query against 8 keys at d_k = 256 (A2's draw), float64 and float32
    src = "lesson_softmax_collapse.csv"
    out = [exact("B6", LESSON_DRAW, f"d_k=256, T=8, {dtype}", R.value(src, quantity=f"weight_argsort_agrees_{dtype}"),
                 1, src)
           for dtype in ("float64", "float32")]
    # ... and over many trials at each configured d_k. Ranking the logits is the same under any positive scale
    # by construction (not decided); an argsort of the weights disagrees only where exp underflowed to exact
    # ties, which is reported as a finding with its counts.
    src = "ranking_invariance.csv"
    trials = int(R.first(src, "trials"))
    for d, dtype in R.distinct(src, "d_k", "dtype"):
        bad = R.value(src, "count", d_k=d, dtype=dtype, quantity="weight_argsort_disagrees_without_ties")
        naive = trials - int(R.value(src, "count", d_k=d, dtype=dtype, quantity="weight_argsort_agrees"))
        ties = int(R.value(src, "count", d_k=d, dtype=dtype, quantity="unscaled_weight_ties"))
        note = (f"finding: the argsort of the weights disagrees in {number(naive)} of {number(trials)} trials; "
                f"{number(ties)} trials have exactly tied unscaled weights (exp underflowed to 0)") if naive or ties \
            else f"the argsort of the weights agrees in all {number(trials)} trials"
        out.append(exact("B6", DISAGREEMENTS, f"d_k={d}, {dtype}", bad, 0, src, note=note))
    return out


B6 = Claim(
    "B6", "Exercise 3: scaling changes the sharpness, not the ranking",
    "For the lesson's query against 8 keys at d_k = 256, the argsort of the unscaled and of the scaled softmax weights "
    "is the same, in float64 and in float32; over many trials at every configured d_k, the two argsorts disagree "
    "only where exp underflowed and weights tied exactly (counted: a finding, common in float32 at large d_k). The "
    "logits' ranking is the same under any positive scale by construction.",
    "confirm that the unscaled and scaled softmax weights produce the same argsort", "Exercise 3",
    ("lesson_softmax_collapse.csv", "ranking_invariance.csv"),
    "Exact: the lesson's draw, and counts of trials, at any size",
    decide_b6, sentences={LESSON_DRAW: _EXERCISE3, DISAGREEMENTS: _EXERCISE3}, page=PAGE, lead=(DISAGREEMENTS,))

# This section's claims, gathered by claims/registry.py: a new claim's block goes just above, into this tuple.
CLAIMS = (B6,)
