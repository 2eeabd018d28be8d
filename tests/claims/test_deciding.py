"""Deciding a results folder: every claim decided from the CSVs, stale results refused, claims.csv written and
read back to the last bit (the hand-made tables of the claims' other tests)."""

from __future__ import annotations

import pandas as pd
import pytest

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims import model as M
from sdpa_lab.claims.registry import CLAIMS as REGISTRY
from sdpa_lab.config import check_config
from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of
from sdpa_lab.pipeline import run_experiment
from sdpa_lab.results import ResultsError

from tests.claims.tables import (
    D_K,
    argsort_rows,
    entropy_tables,
    forward_table,
    gradient_table,
    learning_table,
    lesson_tables,
    lesson_variance_1024,
    ranking_table,
    variance_table,
)


def test_write_claims_decides_every_claim_from_the_csvs_and_refuses_stale_ones(tmp_path):
    """decide_checked / write_claims on a results folder of the hand-made tables above."""
    from sdpa_lab.io import write_csv

    success = {(4, "none"): (0.2, 0.9, 0.5), (4, "inv_sqrt_dk"): (0.3, 0.8, 0.7),
               (256, "none"): (0.05, 0.1, 0.3), (256, "inv_sqrt_dk"): (0.5, 0.9, 0.6)}
    best = dict.fromkeys(success, 1)
    tables = {"variance.csv": variance_table(), **entropy_tables(), "gradient.csv": gradient_table(),
              "ranking_invariance.csv": ranking_table({(4, "float64"): {
                  "logit_rank_agrees": 50, "weight_argsort_agrees": 50, "unscaled_weight_ties": 0,
                  "weight_argsort_disagrees_without_ties": 0}}),
              "forward_shape.csv": forward_table(), "learning.csv": learning_table(success, best), **lesson_tables(),
              "lesson_variance.csv": lesson_variance_1024(), "lesson_softmax_collapse.csv": argsort_rows()}
    for name, table in tables.items():
        write_csv(table, tmp_path / "results" / name)
    curves = pd.DataFrame([{"seed": 1, "d_k": 4, "T": 8, "runs": 64, "scale": "none", "lr": 1.0, "step": 0,
                            "mean_relative_loss": 1.0}])
    write_csv(curves, tmp_path / "results" / "learning_curves.csv")
    # An experiment of the registry these hand-made tables leave out (one added later): its own rows (seed 1,
    # its default settings), so that every claim of the registry is decided.
    made = {*tables, "learning_curves.csv"}
    for name, experiment in EXPERIMENTS.items():
        if not {o.file for o in experiment.outputs.values()} & made:
            for key, rows in run_experiment(name, settings_of(check_config({"seed": 1}), name)).items():
                write_csv(rows, tmp_path / "results" / experiment.outputs[key].file)
    out = tmp_path / "results" / "claims.csv"
    decision = D.write_claims(tmp_path / "results", out)
    written = pd.read_csv(out)
    assert len(written) == len(decision.checks) > 100
    # derived checks (B2, B8, B4's) repeat B1's evidence: decided, not counted in the Bonferroni split
    assert decision.n_statistical == (written.basis == "statistical").sum() > 0
    assert (written.basis == "derived").sum() == 2 * len(D_K) + 3
    assert sorted(set(written.id)) == sorted(c.id for c in REGISTRY)
    stale = {"seed": 2, "variance": {"d_k": list(D_K), "n_pairs": 1000}}
    with pytest.raises(ResultsError, match="seed"):
        D.decide_checked(tmp_path / "results", stale)
    with pytest.raises(ResultsError, match="seed"):
        D.write_claims(tmp_path / "results", tmp_path / "other.csv", stale)
    both_stale = {**stale, "gradient": {"d_k": [4, 64, 1024], "T": 9, "trials": 100}}
    with pytest.raises(ResultsError) as err:
        D.decide_checked(tmp_path / "results", both_stale)
    assert len(str(err.value).split("\n")) >= 3 and "XX" not in str(err.value)  # one line per stale setting
    assert len(D.decide(str(tmp_path / "results")).checks) == len(decision.checks)  # a path, not Results
    fresh = {"seed": 1, "variance": {"d_k": list(D_K), "n_pairs": 1000}}
    assert len(D.decide_checked(tmp_path / "results", fresh).checks) == len(decision.checks)

    # read back (the figures and the report do): every number, verdict and k as decided, to the last bit
    back = D.read_claims(out)
    assert (back.ks, back.n_statistical, back.alpha_family) == (decision.ks, decision.n_statistical, M.ALPHA_FAMILY)
    assert [repr(c.k) for c in back.checks] == [repr(c.k) for c in decision.checks]
    assert [c.of_claim for c in back.checks] == [c.of_claim for c in decision.checks]
    shown = ("claim", "check", "parameters", "relation", "expected", "measured", "basis", "source", "tolerance",
             "se", "literal", "note", "deviation", "margin", "verdict")
    assert [tuple(map(repr, (getattr(c, f) for f in shown))) for c in back.checks] == \
        [tuple(map(repr, (getattr(c, f) for f in shown))) for c in decision.checks]
    assert {c.verdict for c in back.checks} >= {M.HOLDS, M.FAILS}
    assert back.statements["B1"] == next(c.statement for c in REGISTRY if c.id == "B1")
    assert back.table().equals(decision.table())
    tampered = out.read_text().replace(",holds,", ",fails,", 1)
    (tmp_path / "tampered.csv").write_text(tampered)
    line = next(i for i, text in enumerate(tampered.split("\n"), start=1) if ",fails," in text)  # header: line 1
    with pytest.raises(ResultsError, match=f"row {line} .* says 'fails', but its numbers give 'holds'"):
        D.read_claims(tmp_path / "tampered.csv")
    # a note that holds a line break (CRLF inside a quoted field) reads back as written
    from sdpa_lab.io import write_csv

    table = decision.table()
    table.loc[0, "note"] = "two\r\nlines"
    write_csv(table, tmp_path / "crlf.csv")
    assert D.read_claims(tmp_path / "crlf.csv").checks[0].note == "two\r\nlines"
