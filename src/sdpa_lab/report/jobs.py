"""What the figure and report rules run, with logging; thin scripts in workflow/scripts/ call these."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from sdpa_lab.claims import decide
from sdpa_lab.report.figures import FIGURES, make_figure
from sdpa_lab.report.html import build_report


def _logged(what: str, log_path: str | None, work: Callable[[logging.Logger], None]) -> None:
    """Run `work(logger)` with the sdpa_lab logger writing to `log_path`; log its time or its traceback."""
    logger = logging.getLogger("sdpa_lab.report")
    handler = None
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_path, mode="w")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:
        start = time.perf_counter()
        work(logger)
        logger.info("%s: done in %.2f s", what, time.perf_counter() - start)
    except Exception:
        logger.exception("%s failed", what)
        raise
    finally:
        if handler:
            logger.removeHandler(handler)
            handler.close()


def figure_job(name: str, results_dir: str | Path, png: str | Path, log_path: str | None = None) -> None:
    """Draw figure `name` from `results_dir` to `png` (and the SVG beside it).

    A figure with k-standard-error intervals takes k from the run's decision, as the checks do.
    """
    def work(logger: logging.Logger) -> None:
        k = decide(results_dir).k if FIGURES[name].uses_k else None
        paths = make_figure(name, results_dir, Path(png).with_suffix(""), k)
        logger.info("figure %s (k = %s): wrote %s", name, k, ", ".join(map(str, paths)))

    _logged(f"figure {name}", log_path, work)


def report_job(results_dir: str | Path, figures_dir: str | Path, config: Mapping, out: str | Path,
               benchmarks: Iterable[str | Path] = (), log_path: str | None = None) -> None:
    """Decide every claim and write the HTML report to `out`."""
    def work(logger: logging.Logger) -> None:
        decision = build_report(results_dir, figures_dir, config, out, list(benchmarks))
        logger.info("report: %d checks (%d failing), k = %.3f: wrote %s", len(decision.checks),
                    len(decision.failed), decision.k, out)

    _logged("report", log_path, work)
