"""What the report's tests share: one small run as the rules leave it, made once per session without Snakemake."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from sdpa_lab import claims as C
from sdpa_lab.report import html as H
from sdpa_lab.report import jobs as J

from tests.conftest import TINY_CONFIG, write_run

REPORT_CONFIG = copy.deepcopy(TINY_CONFIG)
REPORT_CONFIG["variance"] = {"d_k": [4, 64, 1024], "n_pairs": 2000}  # d_k = 1024 decides B4 too

BENCHMARK_TSV = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n" \
                "1.25\t0:00:01\t106.84\t193.39\t76.91\t89.02\t0.00\t0.00\t50.22\t0.63\n"


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory) -> Path:
    """A small run as the rules leave it: every CSV and claims.csv, every figure (one figures job), a benchmark file
    and the report. Shared: read it, never change it (copy what a test changes)."""
    root = tmp_path_factory.mktemp("report_run")
    results, figures = root / "results", root / "reports" / "figures"
    write_run(root, REPORT_CONFIG)
    C.write_claims(results, results / "claims.csv", REPORT_CONFIG)  # as the claims rule
    J.figures_job(results, figures)  # as the figures rules, k read from claims.csv
    bench = root / "logs" / "benchmarks" / "variance.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text(BENCHMARK_TSV)
    H.build_report(results, figures, REPORT_CONFIG, root / "reports" / "report.html", [bench], repo_dir=root)
    return root
