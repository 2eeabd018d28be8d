"""What the figure and report rules run, with logging; thin scripts in workflow/scripts/ call these."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from sdpa_lab.claims import decide
from sdpa_lab.joblog import job_log
from sdpa_lab.report.figures import make_figure
from sdpa_lab.report.html import build_report
from sdpa_lab.report.specs import FIGURES, figure_files


def figures_job(results_dir: str | Path, figures_dir: str | Path, log_path: str | None = None) -> None:
    """Draw every figure (specs.FIGURES) from `results_dir` into `figures_dir`, as <name>.png and <name>.svg.

    Figures with k-standard-error intervals take k from the run's decision, as the checks do;
    it is decided once, for all of them.
    """
    with job_log("figures", log_path) as logger:
        run_k = decide(results_dir).k if any(spec.uses_k for spec in FIGURES.values()) else None
        for name, spec in FIGURES.items():
            k = run_k if spec.uses_k else None
            stem = Path(figure_files(name, str(figures_dir))["png"]).with_suffix("")
            paths = make_figure(name, results_dir, stem, k)  # fresh tables per figure: none sees another's
            logger.info("figure %s (k = %s): wrote %s", name, k, ", ".join(map(str, paths)))


def report_job(results_dir: str | Path, figures_dir: str | Path, config: Mapping, out: str | Path,
               benchmarks: Iterable[str | Path] = (), log_path: str | None = None) -> None:
    """Decide every claim and write the HTML report to `out`."""
    with job_log("report", log_path) as logger:
        decision = build_report(results_dir, figures_dir, config, out, list(benchmarks))
        logger.info("report: %d checks (%d failing), k = %.3f: wrote %s", len(decision.checks),
                    len(decision.failed), decision.k, out)
