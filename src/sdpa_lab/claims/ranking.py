"""B6: scaling changes the softmax's sharpness, not its ranking (Exercise 3).
"""

from __future__ import annotations

from sdpa_lab.claims.model import Check, exact
from sdpa_lab.numbers import number
from sdpa_lab.results import Results


def decide_b6(R: Results) -> list[Check]:
    # Exercise 3 as written: the lesson's query against 8 keys at d_k = 256 (A2's draw), float64 and float32
    src = "lesson_softmax_collapse.csv"
    out = [exact("B6", "argsort of the unscaled and scaled weights agree (Exercise 3, the lesson's draw)",
                 f"d_k=256, T=8, {dtype}", R.value(src, quantity=f"weight_argsort_agrees_{dtype}"), 1, src)
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
        out.append(exact("B6", "trials where argsort of the weights disagrees without an exact tie",
                         f"d_k={d}, {dtype}", bad, 0, src, note=note))
    return out
