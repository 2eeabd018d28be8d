"""What the figure and report rules run, with logging; thin scripts in workflow/scripts/ call these."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from sdpa_lab.claims.deciding import read_claims
from sdpa_lab.claims.verdicts import claim_ks
from sdpa_lab.joblog import job_log
from sdpa_lab.report.specs import FIGURES, figure_files
from sdpa_lab.results import Results


def figures_job(results_dir: str | Path, figures_dir: str | Path, log_path: str | None = None,
                names: Iterable[str] | None = None) -> None:
    """Draw the figures `names` (default: every one in specs.FIGURES) from `results_dir` into `figures_dir`,
    as <name>.png and <name>.svg.

    Figures with k-standard-error intervals take the k of the claim they show from the run's decision, as its
    checks do: read from `results_dir`/claims.csv (the claims rule's), not decided again.
    The CSVs are read once and shared: no figure function modifies a table (tests/report/test_jobs.py).
    """
    from sdpa_lab.report.figures import make_figure  # matplotlib: here, so the report job never imports it

    names = list(FIGURES) if names is None else list(names)
    unknown = [name for name in names if name not in FIGURES]
    if unknown:
        raise ValueError(f"unknown figures {unknown}; known: {', '.join(FIGURES)}")
    with job_log("figures", log_path) as logger:
        R = Results(results_dir)
        checks = read_claims(R.dir / "claims.csv").checks if any(FIGURES[name].uses_k for name in names) else ()
        for name in names:
            k, _ = FIGURES[name].k_in(checks)
            stem = Path(figure_files(name, str(figures_dir))["png"]).with_suffix("")
            paths = make_figure(name, R, stem, k)
            logger.info("figure %s (k = %s): wrote %s", name, k, ", ".join(map(str, paths)))


def report_job(results_dir: str | Path, figures_dir: str | Path, config: Mapping, out: str | Path,
               benchmarks: Iterable[str | Path] = (), log_path: str | None = None,
               solutions: str | Path | None = None, grades: Iterable[str | Path] = ()) -> None:
    """Write the HTML report to `out` from the claims results/claims.csv holds (with a learner's graded
    `solutions` CSV, if given, and a class's overview from its `grades`)."""
    from sdpa_lab.report.html import build_report  # jinja2 and the config schema: not needed by figures_job

    with job_log("report", log_path) as logger:
        decision = build_report(results_dir, figures_dir, config, out, list(benchmarks), solutions=solutions,
                                grades=grades)
        logger.info("report: %d checks (%d failing), %s: wrote %s", len(decision.checks),
                    len(decision.failed), claim_ks(decision), out)
