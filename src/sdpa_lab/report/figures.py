"""The report's figures: one short function per figure, from the result CSVs to a matplotlib Figure.

Every function takes the run's `Results` and `k`, the number of standard errors of the intervals it draws (the k
of the claim it shows, its statistical checks' in the run's decision; None: 95% intervals; see `band_z`), and
returns a Figure made by `sdpa_lab.report.canvas` (fixed fonts, size and dpi; the phone's variant within
`narrow()`), whose `save_figure` writes it as PNG and SVG without timestamps or version strings, so the same CSVs
give the same bytes.
Nothing here needs Snakemake or pyplot's global state. What each figure is (name, CSVs,
claims, caption) lives in `sdpa_lab.report.specs`, which the Snakefile imports without matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from sdpa_lab.claims.standard_errors import variance_se
from sdpa_lab.rates import wilson
from sdpa_lab.report.canvas import (  # noqa: F401 (re-exported: the calibration report and the tests use them)
    METADATA,
    STYLE,
    fix_layout,
    is_narrow,
    narrow,
    narrow_size,
    new_figure,
    render,
    save_figure,
    style,
    styled,
    wrap_labels,
)
from sdpa_lab.report.specs import (  # noqa: F401 (re-exported)
    DPI,
    FIGURES,
    FORMATS,
    HEIGHT,
    NARROW_DIR,
    WIDTH,
    FigureSpec,
    band_words,
    figures_for,
)
from sdpa_lab.results import Results

# Okabe-Ito colours (readable with colour-vision deficiencies), one per scale of the scores.
COLOURS = {"none": "#D55E00", "inv_sqrt_dk": "#0072B2", "inv_dk": "#009E73",
           "unit_variance_reference": "#6F6F6F"}
LABELS = {"none": "unscaled (q·k)", "inv_sqrt_dk": "scaled, ÷ √d_k", "inv_dk": "÷ d_k (over-shrunk)",
          "unit_variance_reference": "unit-variance scores (the d_k → ∞ limit of scaled)"}
Z95 = 1.959963984540054  # two-sided 95% normal quantile


def band_z(k: float | None) -> float:
    """The SE multiplier of the drawn intervals: the run's k when known, else the 95% normal quantile."""
    return float(k) if k is not None and math.isfinite(k) and k > 0 else Z95


def _log_dk_axis(ax, d_values) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(d_values), [str(int(d)) for d in d_values])
    ax.minorticks_off()
    ax.set_xlabel("head size d_k (log scale)")


# --------------------------------------------------------------------------
# Figures

@styled
def variance_figure(R: Results, k: float | None = None) -> Figure:
    """Score variance vs d_k, raw / ÷√d_k / ÷d_k, with theory lines; right: deviation from theory in SEs."""
    t = R["variance.csv"]
    z = band_z(k)
    fig, (ax, res) = new_figure(2)
    theory = {"none": lambda d: d, "inv_sqrt_dk": lambda d: np.ones_like(d), "inv_dk": lambda d: 1.0 / d}
    se_scale = {"none": lambda d: 1.0, "inv_sqrt_dk": lambda d: 1.0 / d, "inv_dk": lambda d: 1.0 / d**2}
    ds = np.array(sorted(t.d_k.unique()), dtype=float)
    for scale in ("none", "inv_sqrt_dk", "inv_dk"):
        rows = t[(t.scale == scale) & (t.statistic == "variance")].sort_values("d_k")
        d = rows.d_k.to_numpy(dtype=float)
        v = rows.value.to_numpy(dtype=float)
        se = np.array([variance_se(di, int(n)) * se_scale[scale](di) for di, n in zip(d, rows.n_pairs, strict=True)])
        ax.errorbar(d, v, yerr=z * se, fmt="o", color=COLOURS[scale], label=LABELS[scale], capsize=3)
        ax.plot(ds, theory[scale](ds), "--", color=COLOURS[scale], lw=1, alpha=0.8)
        if scale == "none":  # the three scales rescale the same scores: one relative deviation for all
            res.errorbar(d, v / d - 1.0, yerr=z * se / d, fmt="o", color="black", capsize=4)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _log_dk_axis(ax, ds)
    ax.set_ylabel("variance of the scores (log scale)")
    ax.set_title("Variance vs d_k (dashed: theory d_k, 1, 1/d_k)")
    ax.legend(loc="upper left", frameon=False)
    res.axhline(0.0, color="black", lw=1)
    _log_dk_axis(res, ds)
    res.set_ylabel("measured / theory − 1")
    res.set_title("Deviation from theory (all three scales)")
    return fig


@styled
def softmax_collapse_figure(R: Results, k: float | None = None) -> Figure:
    """The lesson's d_k = 256, T = 8 query: softmax weight per key, unscaled vs scaled."""
    t = R["lesson_softmax_collapse.csv"]
    d_k, T = int(t.d_k.iloc[0]), int(t["T"].iloc[0])
    fig, (ax,) = new_figure(1)
    width = 0.4
    for i, (quantity, scale) in enumerate((("unscaled_weight", "none"), ("scaled_weight", "inv_sqrt_dk"))):
        rows = t[t.quantity == quantity].sort_values("key")
        keys = rows.key.to_numpy(dtype=float)
        w = rows.value.to_numpy(dtype=float)
        bars = ax.bar(keys + (i - 0.5) * width, w, width, color=COLOURS[scale], label=LABELS[scale])
        ax.bar_label(bars, labels=[f"{x:.4f}" for x in w], fontsize=8.5, padding=2, rotation=90)
    ax.axhline(1.0 / T, color="black", lw=1, ls=":", label=f"uniform, 1/T = 1/{T}")
    ax.set_xticks(range(T), [str(j) for j in range(T)])
    ax.set_xlabel("key position j")
    ax.set_ylabel("softmax weight on key j")
    ax.set_ylim(0, 1.25)
    ax.set_title(f"One query against {T} keys at d_k = {d_k} (lesson seed)")
    ax.legend(loc="upper left", frameon=False)
    ax.grid(axis="x", visible=False)
    return fig


@styled
def forward_heatmap_figure(R: Results, k: float | None = None) -> Figure:
    """The 6x6 attention weights of the lesson's forward, each cell annotated with its value."""
    t = R["lesson_forward.csv"]
    w = t[t.quantity == "weight"]
    n_q, n_k = int(w.row.max()) + 1, int(w.col.max()) + 1
    m = np.zeros((n_q, n_k))
    m[w.row.astype(int), w.col.astype(int)] = w.value.to_numpy(dtype=float)
    fig, (ax,) = new_figure(1, width=6.4, height=5.0)
    im = ax.imshow(m, cmap="Blues", vmin=0.0, vmax=max(0.5, float(m.max())))
    for i in range(n_q):
        for j in range(n_k):
            bold = j == int(np.argmax(m[i]))
            ax.text(j, i, f"{m[i, j]:.3f}", ha="center", va="center", fontsize=8.5 if is_narrow() else 11,
                    fontweight="bold" if bold else "normal", color="white" if m[i, j] > 0.3 else "black")
    ax.set_xticks(range(n_k), [str(j) for j in range(n_k)])
    ax.set_yticks(range(n_q), [str(i) for i in range(n_q)])
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.grid(False)
    ax.set_title(f"Attention weights, (1, {n_q}, {n_k}); bold: each query's strongest key")
    fig.colorbar(im, ax=ax, label="weight (each row sums to 1)", shrink=0.85)
    return fig


@styled
def entropy_figure(R: Results, k: float | None = None) -> Figure:
    """Mean softmax entropy vs d_k for each scale, with bands, the uniform bound log T and Exercise 2's draws."""
    t = R["entropy_sweep.csv"]
    e = t[t.quantity == "entropy"]
    T = int(t["T"].iloc[0])
    z = band_z(k)
    fig, (ax,) = new_figure(1, below=1.5)
    ds = np.array(sorted(e.d_k.unique()), dtype=float)
    for scale in ("none", "inv_sqrt_dk", "inv_dk", "unit_variance_reference"):
        s = e[e.scale == scale]
        mean = s[s.statistic == "mean"].sort_values("d_k").value.to_numpy(dtype=float)
        se = s[s.statistic == "se"].sort_values("d_k").value.to_numpy(dtype=float)
        ls = ":" if scale == "unit_variance_reference" else "-"
        ax.plot(ds, mean, ls, marker="o", color=COLOURS[scale], label=LABELS[scale])
        ax.fill_between(ds, mean - z * se, mean + z * se, color=COLOURS[scale], alpha=0.2, lw=0)
    ax.axhline(math.log(T), color="black", lw=1, ls="--", label=f"uniform bound log T = log {T}")
    single = R["entropy_single_draw.csv"]
    single = single[single.scale == "none"].sort_values("d_k")
    ax.plot(single.d_k, single.entropy, "x", color="black", ms=7,
            label="Exercise 2 literally: one unscaled draw per d_k")
    _log_dk_axis(ax, ds)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("mean softmax entropy (nats)")
    ax.set_title(f"Entropy of one query's weights over T = {T} keys")
    if is_narrow():  # no room beside the curves: the legend below the axes, in the room new_figure left there
        fig.legend(loc="outside lower center", frameon=False, fontsize=9)
    else:
        ax.legend(loc="center right", bbox_to_anchor=(1.0, 0.45), frameon=True, framealpha=0.9, fontsize=9)
    return fig


@styled
def ranking_figure(R: Results, k: float | None = None) -> Figure:
    """Per dtype: fraction of trials with tied unscaled weights, naive-argsort disagreement, logit disagreement."""
    t = R["ranking_invariance.csv"]
    dtypes = [d for d in ("float64", "float32") if d in set(t.dtype)]
    fig, axes = new_figure(len(dtypes))
    series = (("unscaled_weight_ties", False, "#D55E00", "o", "unscaled weights contain an exact tie"),
              ("weight_argsort_agrees", True, "#CC79A7", "s", "argsort of the weights disagrees"),
              ("logit_rank_agrees", True, "#0072B2", "^", "ranking of the logits disagrees"))
    for ax, dtype in zip(axes, dtypes, strict=True):
        s = t[t.dtype == dtype]
        ds = np.array(sorted(s.d_k.unique()), dtype=float)
        for quantity, complement, colour, marker, label in series:
            f = s[s.quantity == quantity].sort_values("d_k").fraction.to_numpy(dtype=float)
            ax.plot(ds, 1.0 - f if complement else f, marker=marker, color=colour, label=label)
        _log_dk_axis(ax, ds)
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"{dtype}, T = {int(s['T'].iloc[0])}, {int(s.trials.iloc[0])} trials per d_k")
    axes[0].set_ylabel("fraction of trials")
    axes[0].legend(loc="upper left", frameon=False)
    return fig


def _gradient_series(t, scale: str, quantity: str):
    s = t[(t.scale == scale) & (t.quantity == quantity)]
    by = {stat: s[s.statistic == stat].sort_values("d_k") for stat in ("mean", "se")}
    return (by["mean"].d_k.to_numpy(dtype=float), by["mean"].value.to_numpy(dtype=float),
            by["se"].value.to_numpy(dtype=float))


@styled
def gradient_figure(R: Results, k: float | None = None) -> Figure:
    """Softmax Jacobian norm (mean) and the typical gradient reaching the scores (geometric mean) vs d_k."""
    t = R["gradient.csv"]
    z = band_z(k)
    fig, (left, right) = new_figure(2)
    for scale in ("none", "inv_sqrt_dk"):
        d, mean, se = _gradient_series(t, scale, "jacobian_norm")
        left.plot(d, mean, marker="o", color=COLOURS[scale], label=LABELS[scale])
        left.fill_between(d, np.maximum(mean - z * se, 1e-300), mean + z * se, color=COLOURS[scale], alpha=0.2,
                          lw=0)
        d, mlog, selog = _gradient_series(t, scale, "log10_score_grad_norm")
        right.plot(d, 10.0**mlog, marker="o", color=COLOURS[scale], label=LABELS[scale])
        right.fill_between(d, 10.0 ** (mlog - z * selog), 10.0 ** (mlog + z * selog), color=COLOURS[scale],
                           alpha=0.2, lw=0)
    for ax in (left, right):
        _log_dk_axis(ax, sorted(t.d_k.unique()))
        ax.set_yscale("log")
    left.set_ylabel("mean ‖J‖_F, J = diag(p) − p pᵀ")
    left.set_title("Softmax Jacobian norm")
    right.set_ylabel("geometric mean of ‖∂L/∂scores‖")
    right.set_title("Gradient reaching the scores")
    left.legend(loc="lower left", frameon=False)
    return fig


@styled
def learning_success_figure(R: Results, k: float | None = None) -> Figure:
    """Fraction of runs that learn vs d_k at each scale's best learning rate, with Wilson intervals."""
    t = R["learning.csv"]
    z = band_z(k)
    fig, (ax,) = new_figure(1)
    best = t[(t.best_lr == 1) & (t.statistic == "success_fraction")]
    offsets = {"none": 0.93, "inv_sqrt_dk": 1.07}
    for scale in ("none", "inv_sqrt_dk"):
        s = best[best.scale == scale].sort_values("d_k")
        d, p = s.d_k.to_numpy(dtype=float), s.value.to_numpy(dtype=float)
        lo, hi = wilson(p, s.runs.to_numpy(dtype=float), z)
        # at p = 0 or 1 the interval's end equals p up to rounding: no negative bar
        yerr = [np.maximum(p - lo, 0.0), np.maximum(hi - p, 0.0)]
        ax.errorbar(d * offsets[scale], p, yerr=yerr, fmt="-o", color=COLOURS[scale],
                    label=LABELS[scale], capsize=3)
        for x, y, lr in zip(d * offsets[scale], p, s.lr, strict=True):
            below = scale == "none"
            ax.annotate(f"lr {lr:g}", (x, y), textcoords="offset points", xytext=(-4, -12) if below else (4, 6),
                        ha="right" if below else "left", fontsize=8.5, color=COLOURS[scale])
    _log_dk_axis(ax, sorted(t.d_k.unique()))
    ax.set_ylim(-0.03, 1.08)
    steps, thr = int(t.steps.iloc[0]), float(t.loss_threshold.iloc[0])
    ax.set_ylabel(f"fraction of runs reaching {thr:g} × initial loss")
    ax.set_title(f"Does the head learn? {int(t.runs.iloc[0])} runs, {steps} steps, best lr per (d_k, scale)")
    ax.legend(loc="lower left", frameon=False)
    return fig


@styled
def learning_curves_figure(R: Results, k: float | None = None) -> Figure:
    """Mean relative loss L(t)/L(0) vs step at the best learning rate, one line per d_k, unscaled | scaled."""
    c = R["learning_curves.csv"]
    thr = float(R["learning.csv"].loss_threshold.iloc[0])
    ds = sorted(c.d_k.unique())
    colours = matplotlib.colormaps["viridis"](np.linspace(0.0, 0.9, len(ds)))
    positive = c.mean_relative_loss[c.mean_relative_loss > 0]
    bottom = min(float(positive.min()) if len(positive) else thr, thr) / 2
    fig, axes = new_figure(2)
    for ax, scale in zip(axes, ("none", "inv_sqrt_dk"), strict=True):
        for d, colour in zip(ds, colours, strict=True):
            s = c[(c.scale == scale) & (c.d_k == d)].sort_values("step")
            ax.plot(s.step, s.mean_relative_loss, color=colour, label=f"d_k = {d} (lr {s.lr.iloc[0]:g})")
        ax.axhline(thr, color="black", lw=1, ls="--")
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(0, float(c.step.max()))
        ax.set_yscale("log")
        ax.set_ylim(bottom, 1.5)
        ax.set_xlabel("gradient step (log scale after 1)")
        ax.set_title(LABELS[scale])
        ax.legend(loc="lower left", frameon=True, framealpha=0.9, fontsize=8.5)
    axes[0].set_ylabel(f"mean loss / initial loss (dashed: success, {thr:g})")
    return fig


# --------------------------------------------------------------------------
# Which function draws which figure (names, captions, CSVs: sdpa_lab.report.specs)

# Figure name (sdpa_lab.report.specs.FIGURES) -> its drawing function.
DRAW: dict[str, Callable[[Results, float | None], Figure]] = {
    "variance": variance_figure,
    "softmax_collapse": softmax_collapse_figure,
    "forward_heatmap": forward_heatmap_figure,
    "entropy": entropy_figure,
    "ranking": ranking_figure,
    "gradient": gradient_figure,
    "learning_success": learning_success_figure,
    "learning_curves": learning_curves_figure,
}


def draw(name: str, R: Results, k: float | None = None) -> Figure:
    """Figure `name` drawn from the run's `Results`, its intervals at k standard errors (None: 95%)."""
    return DRAW[name](R, k)


def make_figure(name: str, results: Results | str | Path, stem: str | Path, k: float | None = None) -> list[Path]:
    """Draw figure `name` from the CSVs in `results` and save it under `stem` (PNG and SVG), and its phone's
    variant as a PNG in the folder NARROW_DIR beside them (specs.figure_files)."""
    R = results if isinstance(results, Results) else Results(results)
    with style():
        fig = draw(name, R, k)
        with narrow():
            small = wrap_labels(draw(name, R, k))
    stem = Path(stem)
    return save_figure(fig, stem) + save_figure(small, stem.parent / NARROW_DIR / stem.name, formats=("png",))
