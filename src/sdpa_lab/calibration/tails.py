"""The calibration's tail table: per two-sided statistical check family, how many |z| pass each threshold against
how many the checks' own laws predict; and each plotted z's place on the normal scale.

A check's z = deviation / SE is about N(0, 1) where its statistic is near normal. Where the check names its
statistic's exact law (claims.exact_laws: a sample variance of few-dimensional scores, a ratio of two sample stds),
z is not: its tails are heavier, and its tolerance comes from that law. There the tail table predicts from that law
(P(|z| > t) under it), and the QQ figure plots its normal score Phi^-1(P(Z <= z)), which is N(0, 1) when the law is
the truth. Every other check is predicted from the normal law, as before; the table keeps that prediction too
(`normal_over_t`), to show what the exact laws change.

The counts add up across batches (calibration.batched merges them): per family and per law, as integers, so that the
predictions, made from the merged counts, are the same floats however the checks were batched.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from sdpa_lab import rates
from sdpa_lab.claims.exact_laws import read_law, z_law

FAMILY = ["config", "arm", "claim", "check", "relation"]  # a check family: its claim and check, pooled over its points
TWO_SIDED = ("within",)  # |measured - expected| <= k SE: z ~ N(0, 1) when expected is the truth
# The |z| thresholds of the tail table: 3 and 4 where a normal tail is still seen in a study; 4.5 near the k a run
# uses (4.5 to 4.9), where a heavy tail matters to the promise.
TAIL_THRESHOLDS = (3, 4, 4.5)
OVER = [f"over_{t}" for t in TAIL_THRESHOLDS]
# A check's law, as its tail is predicted: its law key (checks table's `law`) and, for a ratio, the expected value
# and SE its z is taken with (a variance's z is the same at any scale: 0 and 1, as for a check with no law).
LAW = ["law", "law_expected", "law_se"]
# Confidence of the calibration's intervals and verdicts (summary's, and the tails' `excess`): 99.9%, two-sided. With
# dozens of check families a 95% interval would flag one or two correct families by chance.
CONFIDENCE = 0.999
# The z's at which a law's normal score is computed, and interpolated between (the score is smooth in z).
SCORE_GRID = np.arange(-9.0, 13.0 + 1e-9, 0.05)


def law_keys(rows: pd.DataFrame) -> pd.DataFrame:
    """Per check (its columns law, expected and se): LAW, the law "" and the numbers 0 and 1 where it names none."""
    law = rows.law.fillna("").astype(str)
    ratio = law.str.startswith("ratio")
    return pd.DataFrame({"law": law, "law_expected": rows.expected.where(ratio, 0.0).astype(float),
                         "law_se": rows.se.where(ratio, 1.0).astype(float)}, index=rows.index)


@lru_cache(maxsize=256)
def law_tails(law: str, expected: float, se: float) -> tuple[float, ...]:
    """P(|Z| > t) for each t of TAIL_THRESHOLDS, Z the z of a check whose law is `law` (law_keys): from that law where
    it names one and its lattice is not too large (exact_laws.z_law), else a normal Z's."""
    key = read_law(law)
    sides = None if key is None else z_law(key, np.array([*TAIL_THRESHOLDS, *(-t for t in TAIL_THRESHOLDS)]),
                                           expected, se)
    if sides is None:
        return tuple(rates.normal_tail(t) for t in TAIL_THRESHOLDS)
    below, above = sides
    m = len(TAIL_THRESHOLDS)
    return tuple(float(above[i] + below[m + i]) for i in range(m))


def tail_counts(c: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One batch's two-sided statistical checks: n and the counts of |z| over each threshold, per family and law
    (FAMILY + LAW), and per config, arm and law (tails' "all" rows)."""
    two = c[c.z.notna() & c.relation.isin(TWO_SIDED) & (c.basis == "statistical")]
    two = pd.concat([two[["config", "arm", "claim", "check", "relation"]], law_keys(two)], axis=1).assign(
        n=1, **{o: two.z.abs() > t for o, t in zip(OVER, TAIL_THRESHOLDS, strict=True)})
    how = dict.fromkeys(("n", *OVER), "sum")
    return (two.groupby(FAMILY + LAW, sort=False).agg(how).reset_index(),
            two.groupby(["config", "arm", *LAW], sort=False).agg(how).reset_index())


def poisson_at_least(observed: int, mean: float) -> float:
    """P(X >= observed) for X ~ Poisson(mean): how surprising `observed` exceedances are when `mean` are predicted
    (scipy's regularized incomplete gamma: a sum of terms from exp(-mean) would underflow to 0 at a mean above about
    745, which a study's "all" row reaches, and read as a chance of 1)."""
    from scipy import special  # loaded where a chance is computed, not by every import of the tables

    return 1.0 if observed <= 0 else float(special.pdtrc(observed - 1, mean))


def tail_rows(families: pd.DataFrame, every: pd.DataFrame) -> pd.DataFrame:
    """The tail table's rows (summary.tails_table orders them) from merged tail_counts: per family (and "all" per
    config and arm) n, and for each threshold t the count of |z| > t, the count predicted (each law's n times its
    P(|Z| > t): law_tails), the count a normal z predicts (n P(|Z| > t)), and the Poisson chance of at least the
    observed count given the prediction; `excess`: that chance below 1 - CONFIDENCE at some t."""
    counts = pd.concat([families, every.assign(claim="all", check="all", relation="within")], ignore_index=True)
    probabilities = np.array([law_tails(*key) for key in counts[LAW].itertuples(index=False, name=None)])
    predicted = counts[FAMILY].assign(n=counts.n, **{
        f"predicted_{o}": counts.n * probabilities[:, i] for i, o in enumerate(OVER)}, **{o: counts[o] for o in OVER})
    per_family = predicted.groupby(FAMILY, sort=False).sum().reset_index()  # over its laws, in their order
    rows = []
    for r in per_family.to_dict("records"):
        row = {k: r[k] for k in FAMILY} | {"n": int(r["n"])}
        excess = False
        for t, o in zip(TAIL_THRESHOLDS, OVER, strict=True):
            observed, expected = int(r[o]), float(r[f"predicted_{o}"])
            chance = poisson_at_least(observed, expected)
            row |= {o: observed, f"predicted_{o}": expected, f"normal_{o}": int(r["n"]) * rates.normal_tail(t),
                    f"chance_{o}": chance}
            excess |= chance < 1 - CONFIDENCE
        rows.append(row | {"excess": excess})
    columns = [*FAMILY, "n", *(f"{c}{o}" for o in OVER for c in ("", "predicted_", "normal_", "chance_")), "excess"]
    return pd.DataFrame(rows, columns=columns)


@lru_cache(maxsize=64)
def _score_curve(law: str, expected: float, se: float) -> np.ndarray | None:
    """The normal scores of SCORE_GRID's z under `law` (law_keys), from the side each is nearer (its far tail keeps
    its digits); None where the law cannot be computed."""
    from scipy import special  # loaded where a law is computed, not by every import of the tables

    key = read_law(law)
    sides = None if key is None else z_law(key, SCORE_GRID, expected, se)
    if sides is None:
        return None
    below, above = sides
    return np.where(SCORE_GRID <= 0, special.ndtri(np.clip(below, 1e-300, 1.0)),
                    -special.ndtri(np.clip(above, 1e-300, 1.0)))


def normal_scores(rows: pd.DataFrame) -> pd.Series:
    """Per check (its columns z, law, expected and se): its z, or where it names an exact law its normal score
    Phi^-1(P(Z <= z)) under that law: N(0, 1) either way when the check's law is the truth."""
    out = rows.z.astype(float).copy()
    keys = law_keys(rows)
    for key, g in keys[keys.law != ""].groupby(LAW, sort=False):
        curve = _score_curve(*key)
        if curve is not None:
            out[g.index] = np.interp(rows.z[g.index].to_numpy(dtype=float), SCORE_GRID, curve)
    return out
