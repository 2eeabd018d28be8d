"""What CI guards: the default config, run end to end by Snakemake, decides every claim and none fails."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from sdpa_lab import claims as C
from sdpa_lab.claims.deciding import write_claims
from sdpa_lab.cli import main

from tests.pipeline.conftest import make_workdir, snakemake


@pytest.mark.pipeline
@pytest.mark.default_run
def test_default_pipeline_then_checker(repo, tmp_path, capsys):
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    work = make_workdir(tmp_path / "work", config)
    proc = snakemake(work, cores=4)
    assert proc.returncode == 0, proc.stderr[-3000:]

    status = main(["check", str(work / "results")])  # also compares the CSVs with config/config.yaml
    out = capsys.readouterr().out
    print(out)  # the verdict table, in CI's log
    assert status == 0, out
    for claim_id in C.registry():
        assert f"\n{claim_id} " in out

    # results/claims.csv, written by the pipeline, agrees with the checker's own decision
    table = pd.read_csv(work / "results" / "claims.csv")
    assert set(table.id) == set(C.registry())
    assert (table.verdict != C.FAILS).all()
    assert list(table.columns[:11]) == ["id", "statement", "check", "parameters", "relation", "expected", "measured",
                                        "tolerance", "deviation", "margin", "verdict"]
    # to the byte: the claims job read the expectations the expectations job wrote, the checker computes them
    write_claims(work / "results", tmp_path / "claims.csv")
    assert (tmp_path / "claims.csv").read_bytes() == (work / "results" / "claims.csv").read_bytes()
