"""What the figure and report rules run, with logging; thin scripts in workflow/scripts/ call these."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path

from sdpa_lab.claims import ALPHA_FAMILY, bonferroni_k, decide
from sdpa_lab.joblog import job_log
from sdpa_lab.report.figures import make_figure
from sdpa_lab.report.specs import FIGURES, figure_files
from sdpa_lab.results import Results

CLAIMS_CSV = "claims.csv"


def claims_csv_k(results_dir: str | Path) -> float | None:
    """The run's k as results/claims.csv records it, or None when that file cannot be trusted for it.

    claims.csv (the claims rule's output, decided from the same CSVs) holds one row per check;
    k = bonferroni_k(number of statistical checks), exactly as `decide` computes it. The file is
    used only if it is at least as new as every other CSV beside it (else it may be stale).
    """
    path = Path(results_dir) / CLAIMS_CSV
    try:
        mtime = path.stat().st_mtime_ns
        if any(other.stat().st_mtime_ns > mtime for other in path.parent.glob("*.csv") if other != path):
            return None
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    if not rows or "basis" not in rows[0]:
        return None
    return bonferroni_k(sum(row["basis"] == "statistical" for row in rows), ALPHA_FAMILY)


def run_k(results_dir: str | Path) -> float:
    """The k of the run's decision: read from claims.csv when it is current, else decided afresh."""
    k = claims_csv_k(results_dir)
    return decide(results_dir).k if k is None else k


def figures_job(results_dir: str | Path, figures_dir: str | Path, log_path: str | None = None,
                names: Iterable[str] | None = None) -> None:
    """Draw the figures `names` (default: every one in specs.FIGURES) from `results_dir` into `figures_dir`,
    as <name>.png and <name>.svg.

    Figures with k-standard-error intervals take k from the run's decision, as the checks do
    (`run_k`: from results/claims.csv, which the rule has as input); it is found once, for all of them.
    The CSVs are read once and shared: no figure function modifies a table (tests/test_figures_job.py).
    """
    names = list(FIGURES) if names is None else list(names)
    unknown = [name for name in names if name not in FIGURES]
    if unknown:
        raise ValueError(f"unknown figures {unknown}; known: {', '.join(FIGURES)}")
    with job_log("figures", log_path) as logger:
        k_run = run_k(results_dir) if any(FIGURES[name].uses_k for name in names) else None
        R = Results(results_dir)
        for name in names:
            k = k_run if FIGURES[name].uses_k else None
            stem = Path(figure_files(name, str(figures_dir))["png"]).with_suffix("")
            paths = make_figure(name, R, stem, k)
            logger.info("figure %s (k = %s): wrote %s", name, k, ", ".join(map(str, paths)))


def report_job(results_dir: str | Path, figures_dir: str | Path, config: Mapping, out: str | Path,
               benchmarks: Iterable[str | Path] = (), log_path: str | None = None) -> None:
    """Decide every claim and write the HTML report to `out`."""
    from sdpa_lab.report.html import build_report  # jinja2 and the config schema: not needed by figures_job

    with job_log("report", log_path) as logger:
        decision = build_report(results_dir, figures_dir, config, out, list(benchmarks))
        logger.info("report: %d checks (%d failing), k = %.3f: wrote %s", len(decision.checks),
                    len(decision.failed), decision.k, out)
