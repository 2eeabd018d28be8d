"""How the report's figures are laid out and written: a fixed style, a fixed size (and the phone's variant, its panels
stacked), one layout solved once, and bytes free of dates and version strings, so the same CSVs give the same bytes.
No pyplot: every Figure is made here (new_figure) and drawn on by sdpa_lab.report.figures."""

from __future__ import annotations

import functools
import io
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdpa_lab.io import write_bytes
from sdpa_lab.report.specs import DPI, FORMATS, HEIGHT, NARROW_PANEL, NARROW_WIDTH, WIDTH

# Fixed look: same fonts, sizes and hash salt on every machine that has matplotlib's bundled DejaVu fonts.
STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.fontsize": 10,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "svg.hashsalt": "sdpa-lab",
    "svg.fonttype": "path",
    "path.simplify": False,
    "savefig.dpi": 150,
}
# No software version or date inside the files.
METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
}

@contextmanager
def style() -> Iterator[None]:
    """The report's fixed matplotlib settings, applied for the duration of the block."""
    with matplotlib.rc_context(STYLE):
        yield


def styled(draw: Callable[..., Figure]) -> Callable[..., Figure]:
    """Run a figure function under the report's fixed style, whoever calls it."""
    @functools.wraps(draw)
    def wrapper(*args, **kwargs) -> Figure:
        with style():
            return draw(*args, **kwargs)
    return wrapper


# Set while the phone's variant is drawn (narrow()): new_figure then stacks the panels in a narrow figure.
_NARROW: ContextVar[bool] = ContextVar("narrow", default=False)


@contextmanager
def narrow() -> Iterator[None]:
    """Within the block, figures are drawn as the phone's variant: NARROW_WIDTH wide, their panels stacked."""
    token = _NARROW.set(True)
    try:
        yield
    finally:
        _NARROW.reset(token)


def narrow_size(ncols: int, width: float, height: float) -> tuple[float, float]:
    """The phone's variant of a figure of `ncols` panels side by side in `width` x `height` inches: NARROW_WIDTH
    wide, each panel (stacked) of its own aspect, within NARROW_PANEL's heights."""
    low, high = NARROW_PANEL
    panel = min(max(NARROW_WIDTH * height / (width / ncols), low), high)
    return NARROW_WIDTH, panel * ncols


def new_figure(ncols: int = 1, width: float = WIDTH, height: float = HEIGHT,
               below: float = 0.0) -> tuple[Figure, list]:
    """A Figure of the report's fixed size with `ncols` side-by-side axes (no pyplot); within narrow(), the phone's
    variant: the same axes stacked, NARROW_WIDTH wide (narrow_size), and `below` inches taller for what it puts
    under its axes there (a legend)."""
    nrows = 1
    if _NARROW.get():
        (width, height), nrows, ncols = narrow_size(ncols, width, height), ncols, 1
        height += below
    with style():
        fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    return fig, list(axes)


def is_narrow() -> bool:
    """Whether the figure being drawn is the phone's variant (within narrow())."""
    return _NARROW.get()


# Roughly how wide a character of DejaVu Sans is, in units of its point size: for wrapping a label to its axes.
CHARACTER_WIDTH = 0.6


def wrap_labels(fig: Figure) -> Figure:
    """Each axes' title and axis labels wrapped onto as many lines as they need to fit beside their axes (the
    phone's variant is narrow; the layout, solved after, makes room for the lines)."""
    width, height = fig.get_size_inches()
    for ax in fig.axes:
        box = ax.get_position()  # before the layout: the axes' share of the figure, near enough
        for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
            words = text.get_text()
            inches = box.height * height if text is ax.yaxis.label else width * 0.9
            chars = max(10, int(inches * 72 / (text.get_fontsize() * CHARACTER_WIDTH)))
            if len(words) > chars and "\n" not in words:
                text.set_text(textwrap.fill(words, chars, break_long_words=False, break_on_hyphens=False))
    return fig


def fix_layout(fig: Figure) -> Figure:
    """Solve `fig`'s constrained layout once, with the Agg renderer's text metrics, and keep those positions.

    Left on, the layout engine is solved again in every savefig, behind an extra draw pass, and once per
    format with that format's own metrics (the costliest part of saving). Solved here, every format is
    drawn once, at the same positions: the PNG is unchanged, the SVG's axes move by under 0.2 pt.
    Idempotent; a figure without a layout engine is left as it is.
    """
    engine = fig.get_layout_engine()
    if engine is not None:
        with style(), matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            engine.execute(fig)
            fig.set_layout_engine(None)  # positions stay; savefig no longer lays out (nor pre-draws)
    return fig


def render(fig: Figure, fmt: str) -> bytes:
    """The bytes of `fig` as `fmt` ("png" or "svg"), free of dates and version strings."""
    fix_layout(fig)
    buf = io.BytesIO()
    with style():
        fig.savefig(buf, format=fmt, dpi=DPI, metadata=METADATA[fmt])
    return buf.getvalue()


def save_figure(fig: Figure, stem: str | Path, formats=FORMATS) -> list[Path]:
    """Write `fig` to stem.png / stem.svg (atomically); returns the paths written."""
    paths = []
    for fmt in formats:
        path = Path(f"{stem}.{fmt}")
        write_bytes(render(fig, fmt), path)
        paths.append(path)
    return paths
