"""A1-A3 decided on tables holding the lesson's printed numbers themselves (copied from the lesson text, as in
experiments/test_replication.py), so every replication check holds; then one cell at a time is moved."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdpa_lab.claims import model as M
from sdpa_lab.results import Results

from tests.claims.tables import by_key, lesson_tables


def lesson_checks(tables=None, **moved):
    from sdpa_lab.claims.replication import decide_a1, decide_a2, decide_a3

    tables = dict(tables or lesson_tables())
    for name, (where, value) in moved.items():
        t = tables[name].copy()
        mask = np.ones(len(t), dtype=bool)
        for col, val in where.items():
            mask &= (t[col] == val).to_numpy()
        assert mask.sum() == 1
        t.loc[mask, "value"] = value
        tables[name] = t
    R = Results("mem", tables)
    return {"A1": by_key(decide_a1(R), "A1"), "A2": by_key(decide_a2(R), "A2"), "A3": by_key(decide_a3(R), "A3")}


def test_replication_checks_hold_on_the_lessons_numbers():
    checks = lesson_checks()
    assert len(checks["A1"]) == 8 and len(checks["A2"]) == 32 + 1 + 5 and len(checks["A3"]) == 3 + 6 + 36 + 2
    for claim in checks.values():
        assert all(c.verdict == M.HOLDS for c in claim.values()), [c for c in claim.values() if c.verdict != M.HOLDS]
    a1 = checks["A1"]
    assert a1["raw score variance", "d_k=64"].tolerance == 0.0005  # half a unit in the 3rd place
    assert a1["scaled score variance", "d_k=64"].tolerance == 0.00005
    assert a1["raw score variance", "d_k=64"].cell == (
        "lesson_variance.csv", (("d_k", 64), ("quantity", "raw_variance")), "value")
    a2 = checks["A2"]
    for name, places in (("raw score", 2), ("scaled score", 2), ("unscaled weight", 4), ("scaled weight", 4)):
        for j in range(8):
            c = a2[name, f"key={j}"]
            assert c.basis == "printed" and c.tolerance == pytest.approx(0.5 * 10.0**-places, rel=1e-12)
    assert a2["scaled score", "key=2"].expected == -1.69
    argmax = a2["unscaled weights one-hot on position", "d_k=256, T=8"]
    assert (argmax.basis, argmax.expected, argmax.measured) == ("exact", 5, 5)
    for name, value in (("unscaled max weight", 1.0), ("unscaled entropy", 0.0003), ("scaled max weight", 0.3514),
                        ("scaled entropy", 1.7909), ("uniform entropy", 2.0794)):
        c = a2[name, "d_k=256, T=8"]
        assert c.expected == value and c.tolerance == pytest.approx(0.00005, rel=1e-12)
    a3 = checks["A3"]
    for name, shape in (("input", (1, 6, 16)), ("weights", (1, 6, 6)), ("output", (1, 6, 16))):
        c = a3[f"axes of the {name} whose size differs from {shape}", "(B,T,d_k)=(1,6,16)"]
        assert (c.measured, c.expected, c.basis) == (0, 0, "exact")
        assert c.cell == ("lesson_forward.csv", (("quantity", f"{name}_shape"), ("col", 0)), "value")
    assert a3["weight row sum", "row=3"].tolerance == pytest.approx(5e-7, rel=1e-12)
    assert a3["attention weight", "row=4, key=3"].expected == 0.301
    assert a3["attention weight", "row=4, key=3"].tolerance == pytest.approx(0.0005, rel=1e-12)
    link = a3["key this query attends to most", "row=5"]
    assert (link.measured, link.expected, link.basis) == (2, 2, "exact")
    assert link.cell == ("lesson_forward.csv", (("quantity", "weight"), ("row", 5), ("col", 2)), "value")
    assert a3["key this query attends to most", "row=1"].measured == 1


def test_replication_checks_do_not_depend_on_the_rows_order():
    tables = lesson_tables()
    shuffled = {name: t.iloc[np.random.default_rng(0).permutation(len(t))] for name, t in tables.items()}
    for claim, checks in lesson_checks(shuffled).items():
        assert {key: (c.measured, c.verdict, c.cell) for key, c in checks.items()} == {
            key: (c.measured, c.verdict, c.cell) for key, c in lesson_checks(tables)[claim].items()}
    # the strongest link is found among its own row's weights, whatever order the rows come in
    forward = tables["lesson_forward.csv"]
    weights = forward[forward.quantity == "weight"]
    by_column = {**tables, "lesson_forward.csv": pd.concat([forward[forward.quantity != "weight"],
                                                            weights.sort_values("col", kind="stable")])}
    a3 = lesson_checks(by_column)["A3"]
    assert [a3["key this query attends to most", f"row={r}"].measured for r in (1, 5)] == [1, 2]


def test_replication_checks_fail_when_a_number_moves():
    a1 = lesson_checks(**{"lesson_variance.csv": ({"d_k": 16, "quantity": "raw_variance"}, 15.8916)})["A1"]
    assert a1["raw score variance", "d_k=16"].verdict == M.FAILS
    a2 = lesson_checks(**{"lesson_softmax_collapse.csv": ({"quantity": "unscaled_argmax"}, 4)})["A2"]
    assert a2["unscaled weights one-hot on position", "d_k=256, T=8"].verdict == M.FAILS
    a2 = lesson_checks(**{"lesson_softmax_collapse.csv": ({"quantity": "scaled_weight", "key": 7}, 0.06486)})["A2"]
    assert a2["scaled weight", "key=7"].verdict == M.FAILS
    a3 = lesson_checks(**{"lesson_forward.csv": ({"quantity": "weights_shape", "col": 2}, 7)})["A3"]
    assert a3["axes of the weights whose size differs from (1, 6, 6)", "(B,T,d_k)=(1,6,16)"].measured == 1
    a3 = lesson_checks(**{"lesson_forward.csv": ({"quantity": "weight", "row": 1, "col": 3}, 0.7)})["A3"]
    link = a3["key this query attends to most", "row=1"]
    assert (link.measured, link.verdict) == (3, M.FAILS)
    a3 = lesson_checks(**{"lesson_forward.csv": ({"quantity": "row_sum", "row": 2}, 1.000001)})["A3"]
    assert a3["weight row sum", "row=2"].verdict == M.FAILS
