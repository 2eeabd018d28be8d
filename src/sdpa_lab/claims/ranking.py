"""B6: scaling changes the softmax's sharpness, not its ranking (Exercise 3).
"""

from __future__ import annotations

from sdpa_lab.claims.model import Check, exact
from sdpa_lab.results import Results


def decide_b6(R: Results) -> list[Check]:
    src = "ranking_invariance.csv"
    t = R[src]
    out = []
    for (d, dtype), g in t.groupby(["d_k", "dtype"], sort=True):
        trials = int(g.trials.iloc[0])
        agree = R.value(src, "count", d_k=d, dtype=dtype, quantity="logit_rank_agrees")
        out.append(exact("B6", "trials whose ranking of the logits is the same scaled and unscaled",
                         f"d_k={d}, {dtype}", agree, trials, src))
        bad = R.value(src, "count", d_k=d, dtype=dtype, quantity="weight_argsort_disagrees_without_ties")
        naive = trials - int(R.value(src, "count", d_k=d, dtype=dtype, quantity="weight_argsort_agrees"))
        ties = int(R.value(src, "count", d_k=d, dtype=dtype, quantity="unscaled_weight_ties"))
        note = (f"a naive argsort of the weights disagrees in {naive} of {trials} trials; {ties} trials have "
                "exactly tied unscaled weights (exp underflowed to 0)") if naive or ties else ""
        out.append(exact("B6", "trials where argsort of the weights disagrees without a tie", f"d_k={d}, {dtype}",
                         bad, 0, src, note=note))
    return out
