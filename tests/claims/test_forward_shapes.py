"""B9 decided on small hand-made forward-shape tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdpa_lab.claims import model as M
from sdpa_lab.claims.forward_shapes import decide_b9
from sdpa_lab.results import Results

from tests.claims.tables import by_key, forward_table


def b9(table):
    return by_key(decide_b9(Results("mem", {"forward_shape.csv": table})), "B9")


def test_b9_checks():
    p = "(B,T,d_k)=(2,5,3), float32"
    good = b9(forward_table())
    assert len(good) == 4 and all(c.verdict == M.HOLDS for c in good.values())
    bound = good["largest |row sum - 1|", p]
    assert (bound.relation, bound.basis, bound.expected) == ("not above", "rounding", 0.0)
    assert bound.cell == ("forward_shape.csv", (("B", 2), ("T", 5), ("d_k", 3), ("dtype", "float32"),
                                                ("quantity", "max_row_sum_error")), "value")
    assert bound.tolerance == pytest.approx(6 * float(np.finfo(np.float32).eps), rel=1e-15)  # (T + 1) eps
    assert b9(forward_table(dtype="float64"))["largest |row sum - 1|", "(B,T,d_k)=(2,5,3), float64"].tolerance == \
        pytest.approx(6 * 2.0**-52, rel=1e-15)
    weights_axes = "axes of the weights whose size differs from (B, T, T)"
    output_axes = "axes of the output whose size differs from (B, T, d_k)"
    assert b9(forward_table(weights_T_k=4))[weights_axes, p].measured == 1
    assert b9(forward_table(weights_B=1, weights_T_q=4))[weights_axes, p].measured == 2
    assert b9(forward_table(output_d=5))[output_axes, p].measured == 1
    assert b9(forward_table(output_B=3))[output_axes, p].measured == 1
    assert b9(forward_table(output_T=3))[output_axes, p].measured == 1
    assert b9(forward_table(output_T=3))[weights_axes, p].measured == 0
    # the input dtype kept is the package's promise, not the lesson's: recorded, not decided
    assert all(name != "output and weights keep the input dtype" for name, _ in b9(forward_table(dtype_kept=0.0)))
    neg = b9(forward_table(min_weight=-1e-30))["smallest weight is non-negative", p]
    assert (neg.relation, neg.verdict) == ("not below", M.FAILS)
    assert b9(forward_table(min_weight=0.3))["smallest weight is non-negative", p].verdict == M.HOLDS
    assert b9(forward_table(max_row_sum_error=7 * 2.0**-23))["largest |row sum - 1|", p].verdict == M.FAILS
    assert b9(forward_table(max_row_sum_error=5.9 * 2.0**-23))["largest |row sum - 1|", p].verdict == M.HOLDS
    two = pd.concat([forward_table(), forward_table(B=1, T=4, d=2, dtype="float64", output_d=3, dtype_kept=0.0,
                                                   min_weight=-1.0, max_row_sum_error=1.0)])
    both = b9(two)
    q = "(B,T,d_k)=(1,4,2), float64"
    assert len(both) == 8 and [c.parameters for c in decide_b9(Results("mem", {"forward_shape.csv": two}))][0] == q
    assert all(both[name, p].verdict == M.HOLDS for name, pp in both if pp == p)
    assert both[output_axes, q].measured == 1 and both[weights_axes, q].measured == 0
    assert both["smallest weight is non-negative", q].measured == -1.0
    assert both["largest |row sum - 1|", q].measured == 1.0
    cell = good[weights_axes, p].cell
    assert cell == ("forward_shape.csv", (("B", 2), ("T", 5), ("d_k", 3), ("dtype", "float32"),
                                          ("quantity", "weights_B")), "value")
    assert good[output_axes, p].cell[1][-1] == ("quantity", "output_B")
