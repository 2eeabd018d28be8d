"""The largest seed the schema accepts, 2^64 - 1 (int64 reads it as -1), through Snakemake as a user runs it: every
rule, the claims job and the report, then `sdpa-lab check` on what it made. The other ends of the range (0, 2^63 - 1,
2^63) go through the claims job's function and the checker in tests/claims/test_seed_range.py, in process."""

from __future__ import annotations

import copy
import re
import subprocess
import sys

import pandas as pd

from tests.conftest import TINY_CONFIG
from tests.pipeline.conftest import make_workdir, snakemake


def test_the_largest_seed_runs_the_whole_pipeline_and_the_checker(tmp_path):
    seed = 2**64 - 1
    work = make_workdir(tmp_path / "work", copy.deepcopy(TINY_CONFIG) | {"seed": seed})
    proc = snakemake(work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    claims = pd.read_csv(work / "results" / "claims.csv")
    assert (claims.verdict != "fails").all()
    assert {int(s) for s in pd.read_csv(work / "results" / "gradient.csv", dtype=str)["seed"]} == {seed}
    assert str(seed) in (work / "reports" / "report.html").read_text()  # the report's provenance names it
    check = subprocess.run([sys.executable, "-m", "sdpa_lab.cli", "check"], cwd=work, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert re.search(r"^\d+ claims: \d+ hold", check.stdout, re.M)
