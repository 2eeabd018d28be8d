"""Every seed the schema accepts runs: 0, 2^63 - 1, 2^63 and 2^64 - 1 (the last two wrap to negative numbers as
int64). Each seed's tiny run is made as the rules make it (every experiment's CSVs), decided by the claims job's
own function (write_claims, which refuses results of another config) and by `sdpa-lab check` with that config."""

from __future__ import annotations

import copy
import re

import pandas as pd
import pytest
import yaml

from sdpa_lab.claims.deciding import read_claims, write_claims
from sdpa_lab.cli import main

from tests.conftest import TINY_CONFIG, write_run

SEEDS = [0, 2**63 - 1, 2**63, 2**64 - 1]


@pytest.mark.parametrize("seed", SEEDS)
def test_every_valid_seed_runs_through_the_claims_job_and_the_checker(seed, tmp_path, capsys):
    config = copy.deepcopy(TINY_CONFIG) | {"seed": seed}
    results = write_run(tmp_path, config)
    assert {int(s) for s in pd.read_csv(results / "variance.csv", dtype=str)["seed"]} == {seed}  # as written
    decision = write_claims(results, results / "claims.csv", config)
    assert not decision.failed
    # the report reads back what the job wrote (read_claims refuses a verdict its numbers do not give)
    assert [c.verdict for c in read_claims(results / "claims.csv").checks] == [c.verdict for c in decision.checks]
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    assert main(["check", str(results)]) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    assert out.err == "" and re.search(r"^\d+ claims: \d+ hold", out.out, re.M)
    other = config | {"seed": (seed + 1) % 2**64}  # and another seed is still told apart, by its exact value
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(other))
    assert main(["check", str(results)]) == 2
    assert f"column 'seed' holds [{seed}], but the config's seed is {(seed + 1) % 2**64}" in capsys.readouterr().err
