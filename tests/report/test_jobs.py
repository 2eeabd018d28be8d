"""The figures job: the same bytes as drawing each figure on its own, from tables read once, with the run's k."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sdpa_lab import claims as C
from sdpa_lab.report import figures as F
from sdpa_lab.report import jobs as J
from sdpa_lab.report.specs import FIGURE_JOBS, figure_files
from sdpa_lab.results import Results, read_table

# On one test worker (pytest-xdist, --dist loadgroup): the report run (tests/report/conftest.py), made once.
pytestmark = pytest.mark.xdist_group("report")

# The tests that read the report run: a whole run made in process, every experiment, claim and figure (the
# figures' and the figures job's unit tests on hand-made tables: tests/report/test_figures.py).
WHOLE_RUN = pytest.mark.pipeline


@pytest.fixture(scope="module")
def results_dir(run_dir) -> Path:
    """A small run's CSVs with its claims.csv, as the claims rule leaves them (tests/report/conftest.py)."""
    return run_dir / "results"


@pytest.fixture(scope="module")
def job_figures(run_dir) -> Path:
    """Every figure, as one figures job drew them all from tables read once (the shared run's)."""
    return run_dir / "reports" / "figures"


@pytest.fixture(scope="module")
def drawn_alone(results_dir, tmp_path_factory) -> Path:
    """Each figure drawn by a job of its own, in a results folder holding only the CSVs it declares it reads
    (FigureSpec.reads), and claims.csv where it needs k: figures/<name>/<name>.png and .svg."""
    root = tmp_path_factory.mktemp("drawn_alone")
    for name, spec in F.FIGURES.items():
        alone = root / name / "results"
        alone.mkdir(parents=True)
        for csv in spec.reads:
            shutil.copy(results_dir / csv, alone / csv)
        if spec.uses_k:  # k from the claims rule's table
            shutil.copy(results_dir / "claims.csv", alone / "claims.csv")
        J.figures_job(alone, root / "figures" / name, names=[name])
    return root / "figures"


@WHOLE_RUN
def test_no_figure_modifies_the_tables_it_shares(results_dir):
    R = Results(results_dir)
    for name, spec in F.FIGURES.items():
        F.render(F.draw(name, R, 4.0), "png")
        for csv in spec.reads:
            pd.testing.assert_frame_equal(R[csv], read_table(results_dir, csv), obj=f"{name}: {csv}")


@WHOLE_RUN
def test_each_figure_drawn_alone_from_the_csvs_it_waits_for_gives_the_jobs_bytes(job_figures, drawn_alone,
                                                                                results_dir):
    """figures_plain waits only for the CSVs its figures declare (FigureSpec.reads), not for every result: a figure
    that read another CSV could run before it exists. Drawn alone, from fresh tables, each figure has the bytes of the
    job that drew them all from tables read once (and of a second run of the same code)."""
    for name in F.FIGURES:
        alone = figure_files(name, str(drawn_alone / name))
        assert sorted(str(p) for p in (drawn_alone / name).rglob("*") if p.is_file()) == sorted(alone.values())
        for kind, path in figure_files(name, str(job_figures)).items():
            assert Path(path).read_bytes() == Path(alone[kind]).read_bytes(), (name, kind)


@WHOLE_RUN
def test_the_figures_with_intervals_are_drawn_with_the_k_of_the_claim_they_show(job_figures, results_dir):
    ks = C.decide(results_dir).ks  # decided afresh; the jobs read it from claims.csv
    for name, spec in F.FIGURES.items():
        if spec.uses_k:
            k = next(ks[claim] for claim in spec.claims if claim in ks)  # its first claim's with statistical checks
            drawn = F.render(F.draw(name, Results(results_dir), k), "png")
            assert drawn == (job_figures / f"{name}.png").read_bytes(), name


def test_the_figure_jobs_split_the_figures_by_whether_they_need_k():
    assert sorted(name for names in FIGURE_JOBS.values() for name in names) == sorted(F.FIGURES)
    assert all(F.FIGURES[name].uses_k == (job == "figures_intervals") for job, names in FIGURE_JOBS.items()
               for name in names)


@WHOLE_RUN
def test_a_figure_job_draws_exactly_its_figures(results_dir, job_figures, tmp_path):
    names = ["softmax_collapse", "forward_heatmap", "learning_success", "learning_curves"]
    J.figures_job(results_dir, tmp_path / "part", names=names)
    drawn = [p for p in (tmp_path / "part").rglob("*") if p.is_file()]
    assert sorted(map(str, drawn)) == sorted(
        path for name in names for path in figure_files(name, str(tmp_path / "part")).values())
    for path in drawn:  # the same bytes as when one job draws them all
        rel = path.relative_to(tmp_path / "part")
        assert path.read_bytes() == (job_figures / rel).read_bytes(), rel
    with pytest.raises(ValueError, match="unknown figures \\['heatmap'\\]"):
        J.figures_job(results_dir, tmp_path / "bad", names=["heatmap"])
    assert not (tmp_path / "bad").exists()


def test_the_report_job_does_not_import_matplotlib():
    """The report job only embeds the PNGs: importing matplotlib would cost it half a second."""
    code = "import sys, sdpa_lab.report.jobs, sdpa_lab.report.html; print('matplotlib' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
