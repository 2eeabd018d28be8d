"""What the report's figures are, without drawing them: names, CSVs read, claims shown, captions.

Standard library only: the Snakefile imports this at parse time (workflow/rules/report.smk,
common.smk), so it must not pull in matplotlib or pandas. The drawing lives in
`sdpa_lab.report.figures` (one function per name in `FIGURES`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sdpa_lab.numbers import number

if TYPE_CHECKING:  # pandas, through the claims' model: not at parse time
    from sdpa_lab.claims.model import Check

FIGURES_DIR = "reports/figures"
FORMATS = ("png", "svg")
WIDTH, HEIGHT, DPI = 8.0, 4.5, 150  # inches, inches, dots per inch: 1200 x 675 px (the report sizes them from DPI)
# The phone's variant of each figure (a PNG in NARROW_DIR beside the others): NARROW_WIDTH inches wide, its panels
# stacked, each between NARROW_PANEL's heights, so its smallest type (8.5 pt) reads at 9 px or more at 390 px.
NARROW_DIR, NARROW_WIDTH, NARROW_PANEL = "narrow", 4.2, (3.0, 3.6)


def band_words(k: float | None, claim: str = "") -> str:
    """How the intervals are drawn, for a caption: at `claim`'s k (its statistical checks' Bonferroni tolerance)."""
    if k is not None and math.isfinite(k) and k > 0:
        k_text = number(k, decimals=2, integers=False)
        whose = f"{claim}'s statistical checks" if claim else "the statistical checks shown"
        return f"± {k_text} standard errors (k = {k_text}: the Bonferroni tolerance {whose} use in this run)"
    return "± 1.96 standard errors (95% intervals)"


@dataclass(frozen=True)
class FigureSpec:
    """A figure: the CSVs it reads, the claims it shows, and its caption (drawn by figures.DRAW[name])."""

    name: str
    reads: tuple[str, ...]
    claims: tuple[str, ...]
    caption: str  # may hold {band}: how the intervals are drawn
    uses_k: bool = False  # draws intervals of k standard errors (needs the run's decision)

    def k_in(self, checks: Iterable[Check]) -> tuple[float | None, str]:
        """The k its intervals are drawn at, and whose: the first of its claims with statistical checks in a run's
        decision (each claim has its own k); (None, "") for a figure that draws no such intervals, or none decided."""
        checks = [c for c in checks if c.basis == "statistical"] if self.uses_k else []
        for claim in self.claims:
            own = next((c for c in checks if c.claim == claim), None)
            if own is not None:
                return own.k, claim
        return None, ""

    def caption_for(self, k: float | None, claim: str = "") -> str:
        """The caption, saying how the intervals of this run (at `claim`'s k, from its decision, or None) are drawn."""
        return self.caption.format(band=band_words(k, claim))

    def caption_generic(self) -> str:
        """The caption without the run's k (for Snakemake's report, written before k is known)."""
        return self.caption.format(band="± k standard errors, k being the Bonferroni tolerance of the claim they "
                                        "show (its value is in reports/report.html)")


FIGURES: dict[str, FigureSpec] = {f.name: f for f in (
    FigureSpec("variance", ("variance.csv",), ("B1", "B2", "B3", "B4", "B8"),
               "Left: variance of q·k over fresh (q, k) pairs, unscaled, divided by √d_k and divided by d_k, "
               "with the theory lines d_k, 1 and 1/d_k (dashed). Right: measured / theory − 1, the same for the three "
               "scales (they rescale the same scores). Error bars: {band}; the standard error of a sample variance "
               "is d √((2 + 6/d) / n). "
               "A bar on the right that misses 0 is a failing check of B1 (B2 and B8 repeat it); at small n the "
               "checks allow a little more on the upper side, where a sample variance's law is skewed.",
               uses_k=True),
    FigureSpec("softmax_collapse", ("lesson_softmax_collapse.csv",), ("A2",),
               "The lesson's own query and keys (its seed and d_k): unscaled, the softmax puts (almost) all weight on "
               "one key; "
               "divided by √d_k, the weights stay spread out. Bar labels are the measured weights."),
    FigureSpec("forward_heatmap", ("lesson_forward.csv",), ("A3",),
               "The attention weights of the lesson's forward pass (its own seed and shapes), as measured; row i is "
               "query i's distribution over the keys."),
    FigureSpec("entropy", ("entropy_sweep.csv", "entropy_single_draw.csv"), ("B5", "B8"),
               "Mean entropy of the softmax weights over many independent trials, for each scale of the scores; "
               "bands: {band}. The dashed line is the largest possible entropy, log T (uniform weights). Crosses: "
               "the lesson's Exercise 2 run literally (one draw per d_k), which need not fall monotonically.",
               uses_k=True),
    FigureSpec("ranking", ("ranking_invariance.csv",), ("B6",),
               "Fraction of trials in which the unscaled weights hold an exact tie (exp underflowed), in which a "
               "naive argsort of the weights ranks the keys differently scaled vs unscaled, and in which the "
               "ranking of the logits differs (never: a positive scale keeps their order)."),
    FigureSpec("gradient", ("gradient.csv",), ("B7",),
               "Left: mean Frobenius norm of the softmax Jacobian; right: typical (geometric-mean) norm of the "
               "gradient reaching the scores; unscaled vs scaled. Bands: {band} (right: of the mean log10 norm).",
               uses_k=True),
    FigureSpec("learning_success", ("learning.csv",), ("B10",),
               "Gradient descent on one query: fraction of runs whose loss falls below the success threshold, at "
               "the best learning rate of each (d_k, scale) (labelled; picked on separate selection runs). "
               "Intervals: Wilson score intervals at "
               "{band}.", uses_k=True),
    FigureSpec("learning_curves", ("learning_curves.csv", "learning.csv"), ("B10",),
               "Mean loss relative to its initial value along the descent, at the best learning rate of each "
               "(d_k, scale). At the larger learning rates single runs are chaotic (a change of one part in "
               "10^15 in the starting query can move a run's loss by tens of percent within 200 steps), so "
               "these means carry a floating-point spread: computing the same descent in another order of "
               "operations (on the query instead of on the scores) moves them by up to 4%, and leaves every "
               "success fraction, on which B10 is decided, as it is."),
)}


# The figures in two jobs (workflow/rules/report.smk). Those with intervals of k standard errors wait for the
# claims rule: k is the run's, read from results/claims.csv. The others need only the CSVs they draw, so they
# run beside the experiments still going.
FIGURE_JOBS: dict[str, tuple[str, ...]] = {
    "figures_plain": tuple(name for name, spec in FIGURES.items() if not spec.uses_k),
    "figures_intervals": tuple(name for name, spec in FIGURES.items() if spec.uses_k),
}


def figures_for(claim_id: str) -> list[FigureSpec]:
    """The figures that show a claim, in FIGURES order."""
    return [f for f in FIGURES.values() if claim_id in f.claims]


def figure_files(name: str, folder: str = FIGURES_DIR) -> dict[str, str]:
    """A figure's files: {"png": <folder>/<name>.png, "svg": <folder>/<name>.svg, "narrow":
    <folder>/narrow/<name>.png (the phone's variant)}."""
    return {**{fmt: f"{folder}/{name}.{fmt}" for fmt in FORMATS}, "narrow": f"{folder}/{NARROW_DIR}/{name}.png"}
