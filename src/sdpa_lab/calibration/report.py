"""reports/calibration.html: do the claims' tolerances do what they promise? One self-contained file.

Read from the tables under results/calibration/ (sdpa_lab.calibration.summary); laid out with the
main report's Jinja2 environment and CSS (sdpa_lab.report.rendering); figures drawn with its fixed
style (sdpa_lab.report.figures) and embedded as PNG data URIs, so the file works offline and when mailed alone.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from sdpa_lab.calibration.studies import (
    ARM_WORDS,
    ARMS,
    BROKEN_ARMS,
    CORRECT_ARM,
    TABLES,
)
from sdpa_lab.calibration.summary import CONFIDENCE, headline
from sdpa_lab.io import write_text
from sdpa_lab.joblog import job_log
from sdpa_lab.report.figures import new_figure, render, style
from sdpa_lab.report.rendering import css_size, data_uri, environment

# Okabe-Ito colours, one per check family in a figure (cycled) and one per arm.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
ARM_COLOURS = {"inv_sqrt_dk": "#0072B2", "none": "#D55E00", "inv_dk": "#009E73", "no_pp_term": "#CC79A7"}


def read_tables(results_dir: str | Path) -> dict[str, pd.DataFrame]:
    """The calibration tables (summary.TABLES) in `results_dir`."""
    return {name: pd.read_csv(Path(results_dir) / f"{name}.csv", keep_default_na=True) for name in TABLES}


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


def qq_figure(tables):
    """Per config: the sorted z of each two-sided family (correct arm) against N(0, 1) quantiles."""
    checks = tables["checks"]
    st = checks[(checks.arm == CORRECT_ARM) & checks.z.notna() & (checks.relation == "within")]
    configs = _configs(tables)
    with style():
        fig, axes = _grid(len(configs))
        for ax, config in zip(axes, configs, strict=True):
            g = st[st.config == config]
            for i, ((claim, check), f) in enumerate(g.groupby(["claim", "check"], sort=False)):
                z = np.sort(f.z.to_numpy())
                q = np.array([NormalDist().inv_cdf((j + 0.5) / len(z)) for j in range(len(z))])
                ax.plot(q, z, ".", ms=3, color=PALETTE[i % len(PALETTE)], label=f"{claim}: {check}"[:48])
            lim = 4.5
            ax.plot([-lim, lim], [-lim, lim], "-", color="grey", lw=1)
            ax.set_xlim(-lim, lim)
            ax.set_title(f"{config}: two-sided checks")
            ax.set_xlabel("N(0, 1) quantile")
            ax.set_ylabel("z = deviation / SE")
            ax.legend(loc="upper left", fontsize=7, frameon=False)
    return fig


def max_z_figure(tables):
    """Per config: each run's largest z toward failing (over its statistical checks) and the run's k."""
    runs = tables["runs"]
    configs = _configs(tables)
    fig, (ax,) = new_figure(1, width=9, height=4)
    for i, config in enumerate(configs):
        r = runs[(runs.config == config) & (runs.arm == CORRECT_ARM)]
        x = i + np.linspace(-0.3, 0.3, len(r)) if len(r) > 1 else np.array([i])
        ax.plot(x, r.max_z_toward_fail, ".", ms=3, color=ARM_COLOURS[CORRECT_ARM])
        ax.plot([i - 0.4, i + 0.4], [r.k.max()] * 2, "-", color="#D55E00", lw=2,
                label="the run's k: a check fails above it" if i == 0 else None)
    ax.set_xticks(range(len(configs)), configs)
    ax.set_ylabel("largest z toward failing, per run")
    ax.set_title("Correct arm: how close each run came to a false fail")
    ax.legend(loc="upper right", frameon=False)
    return fig


def overview_figure(tables):
    """Mean and sd of z per two-sided family and config (correct arm), with their intervals."""
    z = tables["z_summary"]
    z = z[(z.arm == CORRECT_ARM) & z.two_sided].copy()
    z["family"] = [family(r) for r in z.itertuples()]
    fams = list(dict.fromkeys(z.family))
    configs = _configs(tables)
    fig, (mean_ax, sd_ax) = new_figure(2, width=12, height=max(3.5, 0.32 * len(fams) + 1.5))
    for i, config in enumerate(configs):
        g = z[z.config == config]
        y = np.array([fams.index(f) for f in g.family]) + (i - (len(configs) - 1) / 2) * 0.15
        colour = PALETTE[i % len(PALETTE)]
        mean_ax.errorbar(g.mean_z, y, xerr=[g.mean_z - g.mean_z_low, g.mean_z_high - g.mean_z], fmt="o", ms=3,
                         color=colour, label=config)
        sd_ax.errorbar(g.sd_z, y, xerr=[g.sd_z - g.sd_z_low, g.sd_z_high - g.sd_z], fmt="o", ms=3, color=colour)
    for ax, ref, label in ((mean_ax, 0.0, "mean of z (0 if unbiased)"), (sd_ax, 1.0, "sd of z (1 if the SE is right)")):
        ax.axvline(ref, color="grey", lw=1)
        ax.set_yticks(range(len(fams)), [f[:44] for f in fams], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(label)
    sd_ax.set_yticklabels([])
    mean_ax.legend(loc="lower left", fontsize=8, frameon=False)
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
    "qq": (qq_figure, ("z of every two-sided check against the quantiles of N(0, 1), correct arm. A line below the "
           "diagonal on the left and above it on the right means heavier tails than the tolerance assumes; "
           "a shifted line, a biased expected value.")),
    "max_z": (max_z_figure, ("Each correct run's largest z in the direction in which its check would fail (|z| "
              "for two-sided checks), against the run's k: a run fails by chance when a point rises above the line.")),
    "power": (power_figure, ("Fraction of runs in which each claim fails (some check fails), per arm: the correct "
              "attention scale (false fails) and the two deliberately wrong ones (power).")),
}


def figure_uris(tables) -> dict[str, dict]:
    """Each figure as a PNG data URI with its size and caption."""
    out = {}
    for i, (name, (draw, caption)) in enumerate(FIGURES.items(), start=1):
        png = render(draw(tables), "png")
        width, height = css_size(png)
        out[name] = {"number": i, "uri": data_uri(png), "caption": caption, "width": width, "height": height}
    return out


def render_report(tables: dict[str, pd.DataFrame]) -> str:
    """The calibration report's HTML."""
    z = tables["z_summary"]
    correct = z[z.arm == CORRECT_ARM].copy()
    correct["family"] = [family(r) for r in correct.itertuples()]
    directional = tables["directional"]
    power = tables["power"]
    broken = power.pivot_table(index=["config", "claim"], columns="arm", values="fails", sort=False).reset_index()
    return environment().get_template("calibration.html.j2").render(
        head=headline(tables), false_fails=tables["false_fails"].to_dict("records"),
        two_sided=correct[correct.two_sided].to_dict("records"),
        directional=directional[directional.arm == CORRECT_ARM].to_dict("records"),
        broken=broken.to_dict("records"), arms=ARMS, broken_arms=BROKEN_ARMS, arm_words=ARM_WORDS,
        correct_arm=CORRECT_ARM, figures=figure_uris(tables), confidence=CONFIDENCE)


def build_report(results_dir: str | Path, out: str | Path) -> dict:
    """Write reports/calibration.html from the tables in `results_dir`; return the headline numbers."""
    tables = read_tables(results_dir)
    write_text(render_report(tables), out)
    return headline(tables)


def report_job(results_dir: str | Path, out: str | Path, log_path: str | None = None) -> None:
    """What rule calibration_report runs: build_report, logged."""
    with job_log("calibration_report", log_path) as logger:
        h = build_report(results_dir, out)
        logger.info("calibration report: %d correct runs, %d with a false fail: wrote %s", h["runs"],
                    h["runs_with_fail"], out)


#END
