"""reports/calibration.html: do the claims' tolerances do what they promise? One self-contained file.

Read from the tables under results/calibration/ (sdpa_lab.calibration.summary); laid out with the
main report's Jinja2 environment and CSS (sdpa_lab.report.rendering); figures drawn with its fixed
style (sdpa_lab.report.figures) and embedded as PNG data URIs, so the file works offline and when mailed alone.
"""

from __future__ import annotations

import math
import textwrap
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from sdpa_lab.calibration.studies import (
    ARM_WORDS,
    ARMS,
    BROKEN_ARMS,
    CORRECT_ARM,
    SUMMARIES,
)
from sdpa_lab.calibration.summary import CONFIDENCE, headline, upper_bound
from sdpa_lab.calibration.tails import TAIL_THRESHOLDS
from sdpa_lab.io import write_text
from sdpa_lab.joblog import job_log
from sdpa_lab.rates import normal_tail
from sdpa_lab.report.figures import COLOURS, new_figure, render, style
from sdpa_lab.report.rendering import css_size, data_uri, environment

# Okabe-Ito colours, one per check family in a figure (cycled) and one per arm: a scale's arm in the
# main report's colour of that scale.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
ARM_COLOURS = {**{scale: COLOURS[scale] for scale in ("inv_sqrt_dk", "none", "inv_dk")}, "no_pp_term": "#CC79A7"}


def read_tables(results_dir: str | Path, shares: list | None = None) -> dict[str, pd.DataFrame]:
    """The calibration tables (summary.TABLES) in `results_dir`; of checks.csv, only the rows and columns that
    qq_figure plots: from the batches' `shares` if given (shares.plotted_rows), else read of checks.csv in chunks
    (qq_rows.qq_rows), the same rows."""
    from sdpa_lab.calibration.qq_rows import qq_rows
    from sdpa_lab.calibration.shares import plotted_rows

    tables = {name: pd.read_csv(Path(results_dir) / f"{name}.csv", keep_default_na=True) for name in SUMMARIES}
    tables["checks"] = qq_rows(Path(results_dir) / "checks.csv") if shares is None else plotted_rows(shares)
    text = ["failing_claims", "closest_claim", "closest_check", "closest_parameters"]
    tables["runs"][text] = tables["runs"][text].fillna("")  # an empty cell is no claim, not a missing number
    return tables


def family(row) -> str:
    return f"{row.claim}: {row.check}"


def _configs(tables) -> list[str]:
    return list(dict.fromkeys(tables["runs"].config))


def _grid(n: int):
    ncols = min(n, 2)
    nrows = math.ceil(n / ncols)
    fig, _ = new_figure(1, width=6.2 * ncols, height=3.9 * nrows)
    fig.clear()
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


@lru_cache(maxsize=64)
def normal_quantiles(n: int) -> np.ndarray:
    """The N(0, 1) quantiles at (j + 0.5) / n, j = 0 .. n - 1: a QQ plot's x for n points (made once per n: most of a
    config's families have one number of runs)."""
    return np.array([NormalDist().inv_cdf((j + 0.5) / n) for j in range(n)])


def qq_figure(tables):
    """Per config: the sorted z of each two-sided family (correct arm) against N(0, 1) quantiles; of a check that
    names its statistic's exact law, the normal score of its z under that law (calibration.tails.normal_scores), so
    that every family lies on the diagonal when its law is the truth."""
    checks = tables["checks"]
    st = checks[(checks.arm == CORRECT_ARM) & checks.z.notna() & (checks.relation == "within")]
    configs = _configs(tables)
    with style():
        fig, axes = _grid(len(configs))
        for ax, config in zip(axes, configs, strict=True):
            g = st[st.config == config]
            for i, ((claim, check), f) in enumerate(g.groupby(["claim", "check"], sort=False, observed=True)):
                z = np.sort(f.score.to_numpy())  # z, or its normal score where the check names its exact law
                q = normal_quantiles(len(z))
                ax.plot(q, z, ".", ms=3, color=PALETTE[i % len(PALETTE)], label=f"{claim}: {check}"[:48])
            lim = 4.5
            ax.plot([-lim, lim], [-lim, lim], "-", color="grey", lw=1)
            ax.set_xlim(-lim, lim)
            ax.set_title(f"{config}: two-sided checks")
            ax.set_xlabel("N(0, 1) quantile")
            ax.set_ylabel("z = deviation / SE (normal score)")
            ax.legend(loc="upper left", fontsize=7, frameon=False)
    return fig


def worst_margins(tables) -> dict[str, np.ndarray]:
    """Per config: each correct run's largest margin toward failing over its checks that can fail (held to an SE;
    the lesson's literal single-draw statement by its margin off theory's chance, not its shortfall per draw): a run
    fails such a check exactly when its point is above 1 (summary.runs_table). What the worst-run figure plots."""
    runs = tables["runs"]
    correct = runs[runs.arm == CORRECT_ARM]
    return {config: correct[correct.config == config].max_margin_toward_fail.to_numpy(dtype=float)
            for config in _configs(tables)}


def max_z_figure(tables):
    """Per config: each correct run's largest margin toward failing (worst_margins) and the line where a check fails."""
    configs = _configs(tables)
    fig, (ax,) = new_figure(1, width=9, height=4)
    for i, margins in enumerate(worst_margins(tables).values()):
        x = i + np.linspace(-0.3, 0.3, len(margins)) if len(margins) > 1 else np.array([i])
        ax.plot(x, margins, ".", ms=2, alpha=0.5, color=ARM_COLOURS[CORRECT_ARM])
    ax.axhline(1.0, color="#D55E00", lw=2, label="margin 1: a check fails above it")
    ax.set_xticks(range(len(configs)), configs)
    ax.set_ylim(0, max(1.25, float(np.nanmax(np.concatenate([*worst_margins(tables).values(), [0.0]]))) * 1.1))
    ax.set_ylabel("largest margin toward failing, per run")
    ax.set_title("Correct arm: how close each run came to a false fail (checks that can fail)")
    ax.legend(loc="upper right", frameon=False)
    return fig


# What the config-space figure plots the worst margin against (configs.csv columns), with their words.
SPACE_AXES = {"largest_d_k": "widest head d_k", "largest_T": "most keys T", "fewest_trials": "fewest trials",
              "n_pairs": "variance pairs", "learning_runs": "learning runs", "learning_steps": "learning steps"}


def space_runs(tables) -> pd.DataFrame:
    """The correct runs of the studies with more than one sweep config (space studies), each with its config's
    sizes (configs.csv)."""
    runs, configs = tables["runs"], tables["configs"]
    spaces = configs.groupby("config").sweep.nunique()
    names = set(spaces[spaces > 1].index)
    r = runs[(runs.arm == CORRECT_ARM) & runs.config.isin(names)]
    # a study of no drawn sweeps has configs without the seed column
    return r.merge(configs.drop(columns=["seed"], errors="ignore"), on=["config", "sweep"], how="left")


def space_figure(tables):
    """The config-space study: each run's worst margin against the sizes of its config, by the claim that came
    closest."""
    from sdpa_lab.report.figures import style

    r = space_runs(tables)
    claims = sorted(set(r.closest_claim) - {""}, key=lambda c: (c[0], int(c[1:])))
    with style():
        fig, axes = _grid(len(SPACE_AXES))
        for ax, (column, words) in zip(axes, SPACE_AXES.items(), strict=True):
            for j, claim in enumerate(claims):
                g = r[r.closest_claim == claim]
                ax.plot(g[column], g.max_margin_toward_fail, ".", ms=4, alpha=0.7, color=PALETTE[j % len(PALETTE)],
                        label=claim)
            ax.axhline(1.0, color="#D55E00", lw=1.5)
            ax.set_xscale("log")
            ax.set_xlabel(words, fontsize=11)
            ax.set_ylabel("worst margin of the run", fontsize=11)
            ax.tick_params(labelsize=10)
        axes[0].legend(loc="upper left", fontsize=9, ncol=4, frameon=False, title="closest claim")
    return fig


def overview_figure(tables):
    """Mean and sd of z per two-sided family and config (correct arm), with their intervals."""
    z = tables["z_summary"]
    z = z[(z.arm == CORRECT_ARM) & z.two_sided].copy()
    z["family"] = [family(r) for r in z.itertuples()]
    fams = list(dict.fromkeys(z.family))
    configs = _configs(tables)
    # labels at 10 pt on a figure the page shows at about its drawn width: readable without zooming
    fig, (mean_ax, sd_ax) = new_figure(2, width=11, height=max(3.5, 0.6 * len(fams) + 1.5))
    for i, config in enumerate(configs):
        g = z[z.config == config]
        y = np.array([fams.index(f) for f in g.family]) + (i - (len(configs) - 1) / 2) * 0.15
        colour = PALETTE[i % len(PALETTE)]
        mean_ax.errorbar(g.mean_z, y, xerr=[g.mean_z - g.mean_z_low, g.mean_z_high - g.mean_z], fmt="o", ms=3,
                         color=colour, label=config)
        sd_ax.errorbar(g.sd_z, y, xerr=[g.sd_z - g.sd_z_low, g.sd_z_high - g.sd_z], fmt="o", ms=3, color=colour)
    for ax, ref, label in ((mean_ax, 0.0, "mean of z (0 if unbiased)"), (sd_ax, 1.0, "sd of z (1 if the SE is right)")):
        ax.axvline(ref, color="grey", lw=1)
        ax.set_yticks(range(len(fams)), [textwrap.fill(f, 36) for f in fams], fontsize=10)  # whole, on two lines
        ax.invert_yaxis()
        ax.set_xlabel(label, fontsize=11)
        ax.tick_params(axis="x", labelsize=10)
    sd_ax.set_yticklabels([])
    mean_ax.legend(loc="lower left", fontsize=10, frameon=False)
    return fig


def power_figure(tables):
    """Per config: the fraction of runs in which each claim fails, per arm."""
    p = tables["power"]
    configs = _configs(tables)
    with style():
        fig, axes = _grid(len(configs))
        for ax, config in zip(axes, configs, strict=True):
            g = p[p.config == config]
            claims = list(dict.fromkeys(g.claim))
            for j, arm in enumerate(ARMS):
                a = g[g.arm == arm].set_index("claim").reindex(claims)
                width = 0.8 / len(ARMS)
                x = np.arange(len(claims)) + (j - (len(ARMS) - 1) / 2) * width
                ax.bar(x, a.fails, width=width, color=ARM_COLOURS[arm], label=ARM_WORDS[arm])
            ax.set_xticks(range(len(claims)), claims)
            ax.set_ylim(0, 1.25)  # room for the legend above the bars
            ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
            ax.set_title(f"{config}: runs in which the claim fails")
            ax.set_ylabel("fraction of runs")
            ax.legend(loc="upper center", ncol=3, fontsize=7, frameon=False)
    return fig


FIGURES = {
    "overview": (overview_figure, ("Mean and standard deviation of z = deviation / SE for every two-sided check "
                 f"family, correct arm, per config, with {CONFIDENCE:.1%} intervals. A family whose expected "
                 "value is the truth and whose SE is right sits at 0 and 1.")),
    "qq": (qq_figure, ("z of every two-sided check against the quantiles of N(0, 1), correct arm; where a check "
           "names its statistic's exact law, the normal score of its z under that law (N(0, 1) when the law is the "
           "truth). A line below the diagonal on the left and above it on the right means heavier tails than the "
           "tolerance assumes; a shifted line, a biased expected value.")),
    "max_z": (max_z_figure, ("Each correct run's largest margin toward failing (deviation over tolerance, in the "
              "direction in which the check would fail) over its checks that can fail: held to a standard error, "
              "the lesson's literal single-draw Exercise 2 by how far it departs from theory's chance of a fall at "
              "every step (its shortfall per draw reads \"not per draw\", never fails). A "
              "run fails by chance exactly when its point rises above the line.")),
    "space": (space_figure, ("The config-space study: each correct run's largest margin toward failing against "
              "the sizes of its config (log scale), coloured by the claim whose check came closest. Margins "
              "near 1 show where in the config space a check comes close to failing.")),
    "power": (power_figure, ("Fraction of runs in which each claim fails (some check fails), per arm: the correct "
              "attention scale (false fails) and the two deliberately wrong ones (power).")),
}


def figure_uris(tables) -> dict[str, dict]:
    """Each figure as a PNG data URI with its size and caption."""
    out = {}
    names = [name for name in FIGURES if name != "space" or not space_runs(tables).empty]  # only with a space study
    for i, name in enumerate(names, start=1):
        draw, caption = FIGURES[name]
        png = render(draw(tables), "png")
        width, height = css_size(png)
        out[name] = {"number": i, "uri": data_uri(png), "caption": caption, "width": width, "height": height}
    return out


def space_summary(tables, closest: int = 12) -> dict | None:
    """What the report says of the config-space study: its size, false fails, the runs that came closest to
    failing (with their configs' sizes), the worst margin per claim, and how much of each setting's range
    the drawn configs reached."""
    r = space_runs(tables)
    if r.empty:
        return None
    configs = tables["configs"]
    drawn = configs[configs.config.isin(set(r.config))]
    top = r.sort_values("max_margin_toward_fail", ascending=False, kind="stable").head(closest)
    per_claim = (r[r.closest_claim != ""].sort_values("max_margin_toward_fail", ascending=False, kind="stable")
                 .drop_duplicates("closest_claim"))
    reach = [{"column": c, "words": w, "low": drawn[c].min(), "median": drawn[c].median(), "high": drawn[c].max()}
             for c, w in SPACE_AXES.items()]
    return {"studies": sorted(set(r.config)), "configs": len(drawn), "runs": len(r), "strata": strata_rows(r),
            "runs_with_fail": int((r.n_fails > 0).sum()), "fail_checks": tables["false_fail_checks"][
                tables["false_fail_checks"].config.isin(set(r.config))].to_dict("records"),
            "closest": top.to_dict("records"), "per_claim": per_claim.to_dict("records"), "reach": reach,
            "estimated_cpu_s": float(drawn.estimated_cpu_s.sum()),
            "above_half": int((r.max_margin_toward_fail > 0.5).sum()),
            "above_three_quarters": int((r.max_margin_toward_fail > 0.75).sum())}


def strata_rows(r: pd.DataFrame) -> list[dict]:
    """Per stratum of the space (configs.csv's stratum: a band of the space, "" for the rest), the correct runs'
    count, how many had a failing check, and the worst margin: each band shown apart from the rest."""
    strata = r.assign(stratum=r.stratum.fillna("") if "stratum" in r else "")
    return [{"stratum": name or "the rest of the space", "configs": len(g[["config", "sweep"]].drop_duplicates()),
             "runs": len(g), "runs_with_fail": int((g.n_fails > 0).sum()),
             "worst_margin": float(g.max_margin_toward_fail.max())}
            for name, g in strata.groupby("stratum", sort=True)]


def runs_needed(failures: int, rate: float) -> int:
    """The fewest runs with `failures` fails whose 95% bound on the fail rate (summary.upper_bound) is at most `rate`:
    how large a study must be to show a promise of `rate`."""
    low, high = failures + 1, failures + 2
    while upper_bound(failures, high) > rate:  # the bound falls as the runs grow: double, then bisect
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if upper_bound(failures, mid) > rate else (low, mid)
    return high


def promise_sizes(alpha_family: float) -> dict:
    """What the report says of the promise's size, computed: the normal tail beyond each |z| threshold of the tail
    table, and the runs a study needs, with no fail and with one, to show a rate of at most alpha_family."""
    return {"alpha_family": alpha_family, "tail": {t: normal_tail(t) for t in TAIL_THRESHOLDS},
            "runs_needed": [runs_needed(f, alpha_family) for f in (0, 1)]}


def render_report(tables: dict[str, pd.DataFrame], commit: str = "") -> str:
    """The calibration report's HTML."""
    z = tables["z_summary"]
    correct = z[z.arm == CORRECT_ARM].copy()
    correct["family"] = [family(r) for r in correct.itertuples()]
    directional = tables["directional"]
    power = tables["power"]
    broken = power.pivot_table(index=["config", "claim"], columns="arm", values="fails", sort=False).reset_index()
    broken = broken.reindex(columns=["config", "claim", *ARMS])  # an arm no study ran: its column empty (nan)
    flagged = correct[correct.two_sided & ~correct.calibrated]
    tails = tables["tails"][tables["tails"].arm == CORRECT_ARM].copy() if "tails" in tables else pd.DataFrame()
    if not tails.empty:
        tails["family"] = ["every two-sided check" if r.claim == "all" else family(r) for r in tails.itertuples()]
    return environment().get_template("calibration.html.j2").render(
        tails=tails.to_dict("records"),
        head=headline(tables), false_fails=tables["false_fails"].to_dict("records"),
        flagged_failed=int(flagged.fails.sum()), space=space_summary(tables), commit=commit,
        two_sided=correct[correct.two_sided].to_dict("records"),
        directional=directional[directional.arm == CORRECT_ARM].to_dict("records"),
        broken=broken.to_dict("records"), arms=ARMS, broken_arms=BROKEN_ARMS, arm_words=ARM_WORDS,
        correct_arm=CORRECT_ARM, figures=figure_uris(tables), confidence=CONFIDENCE,
        promise=promise_sizes(float(tables["false_fails"].alpha_family.iloc[0])))


def build_report(results_dir: str | Path, out: str | Path, commit: str = "", shares: list | None = None) -> dict:
    """Write reports/calibration.html from the tables in `results_dir` (made at `commit`; the plotted z's from the
    batches' `shares` if given: read_tables); return the headline numbers."""
    tables = read_tables(results_dir, shares)
    write_text(render_report(tables, commit), out)
    return headline(tables)


def report_job(results_dir: str | Path, out: str | Path, log_path: str | None = None,
               shares: list | None = None) -> None:
    """What rule calibration_report runs: build_report (of the batches' `shares` too, given them), logged."""
    from sdpa_lab.report.provenance import git_commit

    with job_log("calibration_report", log_path) as logger:
        h = build_report(results_dir, out, git_commit(), shares)
        logger.info("calibration report: %d correct runs, %d with a false fail: wrote %s", h["runs"],
                    h["runs_with_fail"], out)


#END
