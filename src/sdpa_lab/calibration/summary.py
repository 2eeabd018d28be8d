"""What the calibration study found: tidy summaries of the per-check rows (sdpa_lab.calibration.runner).

Every table is a pure function of the rows, so the same batches give the same bytes.

- runs: one row per run: its claims' smallest and largest k, how many checks failed, the largest |z|;
- z_summary: per check family (claim and check, pooled over the sweep's points) and config,
  the mean and standard deviation of z = deviation / SE, with a verdict on each: a correct
  check whose SE is right has z about N(0, 1) when its expected value is the truth;
- z_by_point: the same per sweep point (a bias that grows with d_k or the trials shows here);
- false_fails: per config and arm, how many runs had any failing check, against the
  N x ALPHA_FAMILY the tolerances promise, with a Wilson interval;
- directional: per directional check family, the fraction of runs where it holds, is
  inconclusive or fails;
- power: per claim, config and arm, the fraction of runs in which the claim fails (some check
  fails): the false-fail rate in the correct arm, the power against a wrong scale in a broken one;
- tails: per two-sided check family (and over all of them), how many |z| exceed 3, 4 and 4.5 against how
  many the checks' laws predict (calibration.tails): the tails the 1e-4 promise is about, which a mean and sd of z
  do not test.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from sdpa_lab import rates
from sdpa_lab.calibration.studies import ARMS, CORRECT_ARM
from sdpa_lab.calibration.tails import CONFIDENCE, FAMILY, TWO_SIDED, tail_counts, tail_rows
from sdpa_lab.claims import FAILS, HOLDS, INCONCLUSIVE
from sdpa_lab.claims.model import TOWARD_FAIL

DIRECTIONAL = ("above", "below", "not above", "not below")

ZQ = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
WILSON_Z = NormalDist().inv_cdf(0.975)  # the 95% interval of a rate



def wilson(successes: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion successes / n (95% by default; sdpa_lab.rates.wilson)."""
    if n <= 0:
        return float("nan"), float("nan")
    low, high = rates.wilson(successes / n, n, z)
    return float(low), float(high)


def upper_bound(failures: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a rate seen failures / n times: the p at which seeing at most
    `failures` has chance 1 - confidence. With none, 1 - (1 - confidence)^(1/n), about 3 / n at 95%."""
    if n <= 0:
        return float("nan")
    if failures >= n:
        return 1.0

    def at_most(p: float) -> float:  # P(X <= failures), X ~ Binomial(n, p)
        log_terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * math.log(p)
                     + (n - i) * math.log1p(-p) for i in range(failures + 1)]
        top = max(log_terms)
        return math.exp(top) * sum(math.exp(t - top) for t in log_terms)

    low, high = 0.0, 1.0
    for _ in range(100):  # bisection: at_most falls as p grows
        mid = (low + high) / 2
        low, high = (mid, high) if at_most(mid) > 1 - confidence else (low, mid)
    return high


def _order(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Rows sorted by `by`, arms in ARMS order: the same bytes whatever order the batches came in."""
    table = table.copy()
    if "arm" in table:
        table["arm_order"] = table["arm"].map({a: i for i, a in enumerate(ARMS)})
        by = ["arm_order" if b == "arm" else b for b in by]
    return table.sort_values(by, kind="stable").drop(columns=["arm_order"], errors="ignore").reset_index(drop=True)


def toward_fail(checks: pd.DataFrame, column: str = "z") -> pd.Series:
    """Per check: its z signed so that the check fails when it exceeds its k (its margin 1), as Check.margin
    signs a deviation (claims.model.TOWARD_FAIL); |z| for a two-sided check."""
    out = pd.Series(np.nan, index=checks.index)
    for relation in (*TWO_SIDED, *DIRECTIONAL):
        rows = checks.relation == relation
        out[rows] = TOWARD_FAIL[relation](checks[column][rows].to_numpy())
    return out


RUN = ["config", "arm", "run"]  # a run's identity in every table


def runs_table(checks: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its claims' smallest and largest k (each claim has its own), counts of checks and of failing
    ones, failing claims, the largest |z| of its two-sided checks, the largest z toward failing of its checks held to
    an SE (not the lesson's literal single-draw statement: its z is a shortfall per draw, which reads "not per draw"
    rather than fails), and the largest margin toward failing of every check that can fail, the literal one's being
    its margin off theory's chance of a fall at every step: a run fails such a check exactly when its largest margin
    toward failing exceeds 1. The check that came closest is named (closest_claim, closest_check,
    closest_parameters)."""
    two_sided = checks.relation.isin(TWO_SIDED)
    literal = checks.literal.astype(bool)
    # every check held to an SE can fail (one whose sentence theory leaves undecided is held to theory's value); the
    # literal one only off theory's chance, its margin (claims.model.Check.margin_toward_fail; nan without a theory)
    held = checks.z.notna() & ~literal
    can_fail = held | (literal & checks.margin.notna())
    checks = checks.assign(fail=checks.verdict == FAILS, statistical_fail=(checks.verdict == FAILS) & can_fail,
                           abs_z=checks.z.abs().where(two_sided), toward_fail=toward_fail(checks).where(held),
                           margin_toward_fail=checks.margin.where(can_fail))  # toward failing already (Check.margin)
    g = checks.groupby(RUN, sort=False)
    runs = g.agg(sweep=("sweep", "first"), seed_index=("seed_index", "first"), seed=("seed", "first"),
                 k_min=("k", "min"), k_max=("k", "max"),
                 n_checks=("check", "size"), n_fails=("fail", "sum"), n_statistical_fails=("statistical_fail", "sum"),
                 max_abs_z=("abs_z", "max"), max_z_toward_fail=("toward_fail", "max"),
                 max_margin_toward_fail=("margin_toward_fail", "max")).reset_index()
    failing = (checks[checks.fail].groupby(RUN, sort=False).claim
               .agg(lambda c: " ".join(sorted(set(c), key=_claim_key))).rename("failing_claims"))
    runs = runs.merge(failing, on=RUN, how="left").fillna({"failing_claims": ""})
    ranked = checks[checks.margin_toward_fail.notna()]
    closest = ranked.loc[ranked.groupby(RUN, sort=False).margin_toward_fail.idxmax(), [*RUN, "claim", "check",
                                                                                        "parameters"]]
    closest = closest.rename(columns={"claim": "closest_claim", "check": "closest_check",
                                      "parameters": "closest_parameters"})
    runs = runs.merge(closest, on=RUN, how="left").fillna({"closest_claim": "", "closest_check": "",
                                                           "closest_parameters": ""})
    return _order(runs, RUN)


def _claim_key(claim: str) -> tuple[str, int]:
    return claim[0], int(claim[1:])


def z_summary(checks: pd.DataFrame, by: list[str] = FAMILY) -> pd.DataFrame:
    """Mean and sd of z per group of statistical checks, with the verdicts `bias` and `spread`.

    bias: the mean z's CONFIDENCE interval excludes 0 (the expected value is not the truth, for a
    two-sided check); spread: the sd's interval excludes 1 (the SE is off by that factor). Both
    use the normal approximations SE(mean) = sd / sqrt(n), SE(sd) = sd / sqrt(2 (n - 1)).
    """
    st = checks[checks.z.notna()]  # every check held to a standard error
    g = st.groupby(by, sort=False)
    out = g.agg(basis=("basis", "first"), n=("z", "size"), runs=("run", "nunique"), mean_z=("z", "mean"),
                sd_z=("z", "std"), k_check=("k_check", "mean"),
                max_abs_z=("z", lambda z: float(np.max(np.abs(z)))), k=("k", "mean"),
                fails=("verdict", lambda v: int(np.sum(v == FAILS))),
                inconclusive=("verdict", lambda v: int(np.sum(v == INCONCLUSIVE)))).reset_index()
    return z_verdicts(out, by)


def z_verdicts(out: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """z_summary's intervals and verdicts added to its per-group n, mean_z and sd_z; rows in `by` order."""
    se_mean = out.sd_z / np.sqrt(out.n)
    se_sd = out.sd_z / np.sqrt(2 * (out.n - 1).clip(lower=1))
    out["mean_z_low"], out["mean_z_high"] = out.mean_z - ZQ * se_mean, out.mean_z + ZQ * se_mean
    out["sd_z_low"], out["sd_z_high"] = out.sd_z - ZQ * se_sd, out.sd_z + ZQ * se_sd
    out["two_sided"] = out.relation.isin(TWO_SIDED)
    out["bias"] = (out.mean_z_low > 0) | (out.mean_z_high < 0)
    out["spread"] = (out.sd_z_low > 1) | (out.sd_z_high < 1)
    out["calibrated"] = out.two_sided & ~out.bias & ~out.spread
    return _order(out, by)


def false_fails(runs: pd.DataFrame, alpha_family: float, preregistered: Collection[str] = ()) -> pd.DataFrame:
    """Per config and arm (and over all configs): runs with any failing check, against N x alpha_family. The
    promise (a rate bound at most alpha_family) is shown only by a pre-registered study (`preregistered`: the
    configs whose study fixed its size and stopping rule before it ran): a study extended after a fail, or a
    tolerance changed on its seeds, gives a bound that is no longer a fair statement."""
    rows = []
    groups = [((c, a), g) for (c, a), g in runs.groupby(["config", "arm"], sort=False)]
    for arm in ARMS:
        every = runs[runs.arm == arm]
        if len(every):
            groups.append((("all", arm), every))
    for (config, arm), g in groups:
        n, bad = len(g), int((g.n_fails > 0).sum())
        registered = bool(set(g.config) <= set(preregistered))
        low, high = wilson(bad, n)
        bound = upper_bound(bad, n)
        rows.append({"config": config, "arm": arm, "runs": n, "runs_with_fail": bad,
                     "runs_with_statistical_fail": int((g.n_statistical_fails > 0).sum()),
                     "expected": n * alpha_family, "rate": bad / n, "rate_low": low, "rate_high": high,
                     # the rate the runs bound at 95% (about 3 / N with no fail): the promise is shown when it is
                     # at most alpha_family
                     "rate_bound": bound, "preregistered": registered,
                     "promise_shown": bool(arm == CORRECT_ARM and bound <= alpha_family and registered),
                     "alpha_family": alpha_family, "k_min": float(g.k_min.min()), "k_max": float(g.k_max.max())})
    out = pd.DataFrame(rows)
    out["config_order"] = out.config.eq("all")
    return _order(out, ["config_order", "config", "arm"]).drop(columns="config_order")


def directional(checks: pd.DataFrame) -> pd.DataFrame:
    """Per directional check family: fractions of its checks that hold, are inconclusive, fail, or neither (the
    lesson's literal single-draw statement reads "not per draw": neither)."""
    return directional_table(directional_counts(checks))


def power(checks: pd.DataFrame) -> pd.DataFrame:
    """Per claim, config and arm: the fraction of runs in which the claim fails (some check fails) or
    does not hold (some check fails or is inconclusive), with a Wilson interval on the first."""
    return power_table(power_counts(checks))


def tails(checks: pd.DataFrame) -> pd.DataFrame:
    """Per two-sided statistical check family (FAMILY), and over all of them per config and arm ("all"): n, and
    for each threshold of TAIL_THRESHOLDS the count of |z| past it against the count the checks' own laws predict
    (an exact law where a check names one, else a normal z's; calibration.tails), with the normal prediction beside
    it, P(at least the observed count) under Poisson(predicted), and `excess`: that chance below 1 - CONFIDENCE.
    A statistic skewed but with no exact law has a Cornish-Fisher tolerance wider on its long side, so more |z| > 3
    there than the normal prediction is expected of it and is not a false fail."""
    return tails_table(*tail_counts(checks))


# Each table from counts that add up across batches (calibration.batched merges them batch by batch).
def directional_counts(c: pd.DataFrame) -> pd.DataFrame:
    """Per directional check family of one batch: n, runs and how many hold, are inconclusive, fail or neither."""
    d = c[c.relation.isin(DIRECTIONAL)]
    v = d.verdict
    d = d.assign(holds=v == HOLDS, inconclusive=v == INCONCLUSIVE, fails=v == FAILS,
                 other=~v.isin((HOLDS, INCONCLUSIVE, FAILS)))
    return d.groupby(FAMILY, sort=False).agg(n=("verdict", "size"), runs=("run", "nunique"), holds=("holds", "sum"),
                                               inconclusive=("inconclusive", "sum"), fails=("fails", "sum"),
                                               other=("other", "sum")).reset_index()


def directional_table(counts: pd.DataFrame) -> pd.DataFrame:
    """directional's table from merged directional_counts: the counts as fractions of n."""
    out = counts.astype({"n": "int64", "runs": "int64"})
    for column in ("holds", "inconclusive", "fails", "other"):
        out[column] = out[column] / out.n
    return _order(out, FAMILY)


def power_counts(c: pd.DataFrame) -> pd.DataFrame:
    """Per claim, config and arm of one batch: runs, runs in which the claim fails, runs in which it does not hold."""
    per_run = c.assign(fails=c.verdict == FAILS, not_holds=c.verdict != HOLDS).groupby(
        ["config", "arm", "claim", "run"], sort=False).agg(fails=("fails", "any"), not_holds=("not_holds", "any"))
    return per_run.groupby(["config", "arm", "claim"], sort=False).agg(
        runs=("fails", "size"), fails=("fails", "sum"), not_holds=("not_holds", "sum")).reset_index()


def power_table(counts: pd.DataFrame) -> pd.DataFrame:
    """power's table from merged power_counts."""
    rows = []
    for r in counts.itertuples():
        n, bad = int(r.runs), int(r.fails)
        low, high = wilson(bad, n)
        rows.append({"config": r.config, "arm": r.arm, "claim": r.claim, "runs": n, "fails": bad / n,
                     "fails_low": low, "fails_high": high, "not_holds": int(r.not_holds) / n})
    out = pd.DataFrame(rows)
    out["claim_order"] = [_claim_key(c) for c in out.claim]
    return _order(out, ["config", "claim_order", "arm"]).drop(columns="claim_order")


def tails_table(families: pd.DataFrame, every: pd.DataFrame) -> pd.DataFrame:
    """tails' table from merged tail_counts (calibration.tails.tail_rows), the "all" rows last."""
    out = tail_rows(families, every)
    out["all_order"] = out.claim.eq("all")
    return _order(out, ["all_order", "config", "arm"]).drop(columns="all_order")


def configs_table(sweeps: dict[str, list]) -> pd.DataFrame:
    """One row per sweep config of each study (study -> its sweeps, Study.sweeps): the config as JSON, the cost
    model's CPU seconds of a run, the band of the space it lies in (its stratum, space.band_of: "" for none), and
    the settings that set its size, to plot margins against."""
    from sdpa_lab.calibration.space import band_of, cpu_seconds

    rows = []
    for study, configs in sweeps.items():
        for i, c in enumerate(configs):
            sections = [c[s] for s in ("entropy_sweep", "ranking_invariance", "gradient", "learning")]
            rows.append({"config": study, "sweep": i, "seed": c["seed"], "stratum": band_of(c),
                         "estimated_cpu_s": cpu_seconds(c),
                         "largest_d_k": max(max(s["d_k"]) for s in [c["variance"], *sections]),
                         "smallest_d_k": min(min(s["d_k"]) for s in [c["variance"], *sections]),
                         "n_pairs": c["variance"]["n_pairs"],
                         "fewest_trials": min(c[s]["trials"] for s in ("entropy_sweep", "ranking_invariance",
                                                                       "gradient")),
                         "largest_T": max(s["T"] for s in sections), "learning_runs": c["learning"]["runs"],
                         "learning_steps": c["learning"]["steps"],
                         "settings": json.dumps(c, separators=(",", ":"))})
    return pd.DataFrame(rows)


def false_fail_checks(checks: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Every failing check of the correct arm (a false fail: every claim is true there), with its run's config."""
    bad = checks[(checks.arm == CORRECT_ARM) & (checks.verdict == FAILS)]
    out = bad.merge(configs[["config", "sweep", "settings"]], on=["config", "sweep"], how="left")
    return _order(out, [*RUN, "claim", "check", "parameters"])


def summaries(checks: pd.DataFrame, alpha_family: float, sweeps: dict[str, list] | None = None,
              preregistered: Collection[str] = ()) -> dict[str, pd.DataFrame]:
    """Every summary table, by its file stem under results/calibration/ (`preregistered`: false_fails')."""
    runs = runs_table(checks)
    configs = configs_table(sweeps or {})
    if configs.empty:
        configs = pd.DataFrame(columns=["config", "sweep", "settings"])
    return {
        "configs": configs,
        "false_fail_checks": false_fail_checks(checks, configs),
        "runs": runs,
        "z_summary": z_summary(checks),
        "z_by_point": z_summary(checks, FAMILY + ["parameters"]),
        "false_fails": false_fails(runs, alpha_family, preregistered),
        "directional": directional(checks),
        "power": power(checks),
        "tails": tails(checks),
    }


def _pooled(z: pd.DataFrame) -> tuple[int, float, float]:
    """Count, mean and sd of z pooled over summary groups (from each group's n, mean and sd)."""
    n = int(z.n.sum())
    if not n:
        return 0, float("nan"), float("nan")
    mean = float((z.mean_z * z.n).sum() / n)
    second = float(((z.n - 1) * z.sd_z.fillna(0) ** 2 + z.n * z.mean_z**2).sum() / n)
    return n, mean, math.sqrt(max(second - mean * mean, 0.0))


def headline(tables: dict[str, pd.DataFrame]) -> dict:
    """The study's headline numbers, for the reports: correct-arm runs, false fails, z of the two-sided
    checks pooled over every family and over the families not flagged, and the flagged ones."""
    ff = tables["false_fails"]
    every = ff[(ff.config == "all") & (ff.arm == CORRECT_ARM)].iloc[0]
    z = tables["z_summary"]
    # pooled over the statistical checks only: a derived check repeats the evidence of one of them
    two = z[(z.arm == CORRECT_ARM) & z.two_sided & (z.basis == "statistical")]
    n, mean, sd = _pooled(two)
    _, mean_ok, sd_ok = _pooled(two[two.calibrated])
    flagged = [f"{r.claim} {r.check} ({r.config}: mean z {r.mean_z:.2g}, sd {r.sd_z:.2g})"
               for r in two[~two.calibrated].itertuples()]
    return {"runs": int(every.runs), "runs_with_fail": int(every.runs_with_fail), "expected": float(every.expected),
            "rate_low": float(every.rate_low), "rate_high": float(every.rate_high),
            "configs": int(ff[(ff.config != "all") & (ff.arm == CORRECT_ARM)].shape[0]),
            "z_n": n, "z_mean": mean, "z_sd": sd, "z_mean_calibrated": mean_ok, "z_sd_calibrated": sd_ok,
            "families": len(two), "miscalibrated": len(flagged), "flagged": flagged}


def main_report_summary(results_dir: str | Path) -> dict | None:
    """The headline numbers the main report quotes, if results/calibration/ holds a study; else None.

    Read when present, never a Snakemake input of the main report: `snakemake --cores 4` must not
    run the calibration.
    """
    d = Path(results_dir)
    if not all((d / f"{name}.csv").is_file() for name in ("false_fails", "z_summary")):
        return None
    try:
        tables = {name: pd.read_csv(d / f"{name}.csv") for name in ("false_fails", "z_summary")}
        return headline(tables)
    except (ValueError, KeyError, IndexError, pd.errors.ParserError):
        return None
