"""The figures, each drawn from small hand-made tables (the claims' tests' own): labelled axes, a fixed size, the same
bytes whatever the order of the formats, nothing in the bytes that changes from one run to the next, the tables left
as they were read, and a figures job that draws exactly the figures it is given. Every figure drawn from a whole run
made in process: tests/report/test_html.py and test_jobs.py (the pipeline lane)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from sdpa_lab.io import write_csv
from sdpa_lab.report import figures as F
from sdpa_lab.report import jobs as J
from sdpa_lab.report.rendering import png_size
from sdpa_lab.report.specs import figure_files
from sdpa_lab.results import Results, read_table

from tests.claims.tables import lesson_tables, variance_table

# What these tables draw: two panels with k-standard-error intervals, a bar chart, a heatmap with a colorbar.
HAND_MADE = ("variance", "softmax_collapse", "forward_heatmap")
PLAIN = tuple(name for name in HAND_MADE if not F.FIGURES[name].uses_k)  # drawn without the run's claims.csv


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hand_made") / "results"
    for name, table in {"variance.csv": variance_table(), **lesson_tables()}.items():
        write_csv(table, out / name)
    return out


@pytest.fixture(scope="module")
def drawn(results_dir) -> tuple[Results, dict[str, dict[str, bytes]]]:
    """Each figure drawn once from one Results (k = 4 where it draws intervals) and rendered in every format."""
    R = Results(results_dir)
    out = {}
    for name in HAND_MADE:
        fig = F.draw(name, R, 4.0 if F.FIGURES[name].uses_k else None)
        out[name] = {fmt: F.render(fig, fmt) for fmt in F.FORMATS}
    return R, out


def test_the_hand_made_tables_are_all_a_figure_reads():
    assert all(set(F.FIGURES[name].reads) <= {"variance.csv", *lesson_tables()} for name in HAND_MADE)
    assert PLAIN and len(PLAIN) < len(HAND_MADE)


def assert_labelled(fig, name: str) -> None:
    """Figure `name` is a matplotlib Figure whose every axis (colour bars aside) says what it shows."""
    assert isinstance(fig, Figure)
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            continue
        assert ax.get_xlabel() or ax.get_ylabel() or ax.get_title(), f"{name}: an axis says nothing"
    assert fig.axes[0].get_ylabel(), name


@pytest.mark.parametrize("name", HAND_MADE)
def test_a_figure_draws_with_labelled_axes(results_dir, name):
    assert_labelled(F.draw(name, Results(results_dir), 4.0), name)


@pytest.mark.parametrize("name", HAND_MADE)
def test_a_figure_is_png_and_svg_at_a_fixed_size_without_date_or_version(drawn, name):
    png, svg = drawn[1][name]["png"], drawn[1][name]["svg"]
    assert png_size(png)[0] in (round(F.WIDTH * F.DPI), round(6.4 * F.DPI)), name
    assert svg.lstrip().startswith(b"<?xml"), name
    assert b"<dc:date>" not in svg and b"Matplotlib v" not in svg, name
    assert b"Software" not in png and b"matplotlib" not in png.lower(), name


def test_layout_is_solved_once_and_does_not_depend_on_the_order_of_formats(results_dir, drawn):
    R, first = drawn  # each figure rendered in the order of F.FORMATS
    assert list(F.FORMATS) == ["png", "svg"]
    for name in ("variance", "forward_heatmap"):  # two panels; a colorbar
        fig = F.draw(name, R, 4.0 if F.FIGURES[name].uses_k else None)
        assert fig.get_layout_engine() is not None  # drawn with constrained layout ...
        svg = F.render(fig, "svg")
        assert fig.get_layout_engine() is None  # ... solved by the first render and kept
        assert (svg, F.render(fig, "png")) == (first[name]["svg"], first[name]["png"]), name
        assert F.render(fig, "svg") == svg, name


def test_no_figure_modifies_the_tables_it_reads(results_dir, drawn):
    R = drawn[0]  # every figure drawn and rendered from its tables
    for name in HAND_MADE:
        for csv in F.FIGURES[name].reads:
            pd.testing.assert_frame_equal(R[csv], read_table(results_dir, csv), obj=f"{name}: {csv}")


def test_a_figure_job_draws_exactly_its_figures(results_dir, drawn, tmp_path):
    J.figures_job(results_dir, tmp_path / "part", names=PLAIN)
    assert sorted(str(p) for p in (tmp_path / "part").rglob("*") if p.is_file()) == sorted(
        path for name in PLAIN for path in figure_files(name, str(tmp_path / "part")).values())
    for name in PLAIN:  # the bytes of the figure drawn and rendered on its own
        for fmt in F.FORMATS:
            assert (tmp_path / "part" / f"{name}.{fmt}").read_bytes() == drawn[1][name][fmt], (name, fmt)
    with pytest.raises(ValueError, match="unknown figures \\['heatmap'\\]"):
        J.figures_job(results_dir, tmp_path / "bad", names=["heatmap"])
    assert not (tmp_path / "bad").exists()
