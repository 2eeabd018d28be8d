"""B9 decided on small hand-made forward-shape tables; its output bound against a simulation of float32 rounding."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_lab.claims import model as M
from sdpa_lab.claims.forward_shapes import decide_b9, output_bound
from sdpa_lab.claims.registry import lesson_sentence
from sdpa_lab.results import Results

from tests.claims.tables import by_key, forward_table

WEIGHTS_AXES = "axes of the weights whose size differs from (B, T_q, T_k)"
OUTPUT_AXES = "axes of the output whose size differs from (B, T_q, d_v)"
OUTPUT = ("largest |output - softmax(Q K^T / sqrt(d_k)) V| / (softmax(Q K^T / sqrt(d_k)) |V|) (an independent "
          "reference)")


def b9(table):
    return by_key(decide_b9(Results("mem", {"forward_shape.csv": table})), "B9")


def test_b9_checks():
    p = "(B,T,d_k)=(2,5,3), float32"
    good = b9(forward_table())
    assert len(good) == 5 and all(c.verdict == M.HOLDS for c in good.values())
    bound = good["largest |row sum - 1|", p]
    assert (bound.relation, bound.basis, bound.expected) == ("not above", "rounding", 0.0)
    assert bound.cell == ("forward_shape.csv", (("B", 2), ("T", 5), ("d_k", 3), ("T_q", 5), ("T_k", 5), ("d_v", 3),
                                                ("dtype", "float32"), ("quantity", "max_row_sum_error")), "value")
    assert bound.tolerance == pytest.approx(6 * float(np.finfo(np.float32).eps), rel=1e-15)  # (T_k + 1) eps
    assert b9(forward_table(dtype="float64"))["largest |row sum - 1|", "(B,T,d_k)=(2,5,3), float64"].tolerance == \
        pytest.approx(6 * 2.0**-52, rel=1e-15)
    assert b9(forward_table(weights_T_k=4))[WEIGHTS_AXES, p].measured == 1
    assert b9(forward_table(weights_B=1, weights_T_q=4))[WEIGHTS_AXES, p].measured == 2
    assert b9(forward_table(output_d=5))[OUTPUT_AXES, p].measured == 1
    assert b9(forward_table(output_B=3))[OUTPUT_AXES, p].measured == 1
    assert b9(forward_table(output_T=3))[OUTPUT_AXES, p].measured == 1
    assert b9(forward_table(output_T=3))[WEIGHTS_AXES, p].measured == 0
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
    assert len(both) == 10 and [c.parameters for c in decide_b9(Results("mem", {"forward_shape.csv": two}))][0] == q
    assert all(both[name, p].verdict == M.HOLDS for name, pp in both if pp == p)
    assert both[OUTPUT_AXES, q].measured == 1 and both[WEIGHTS_AXES, q].measured == 0
    assert both["smallest weight is non-negative", q].measured == -1.0
    assert both["largest |row sum - 1|", q].measured == 1.0
    cell = good[WEIGHTS_AXES, p].cell
    assert cell == ("forward_shape.csv", (("B", 2), ("T", 5), ("d_k", 3), ("T_q", 5), ("T_k", 5), ("d_v", 3),
                                          ("dtype", "float32"), ("quantity", "weights_B")), "value")
    assert good[OUTPUT_AXES, p].cell[1][-1] == ("quantity", "output_B")


def test_a_forward_where_every_dimension_differs_is_held_to_its_own_shapes():
    p = "(B,T_q,T_k,d_k,d_v)=(2,5,4,6,3), float32"
    good = b9(forward_table(T=5, T_k=4, d=6, d_v=3))
    # the config's T = d_k: the forward's queries are not the config's T (B, T_q, T_k, d_k, d_v all recorded)
    moved = b9(forward_table(T=6, T_q=7, T_k=8, d=6, d_v=3))
    assert all(c.verdict == M.HOLDS for c in moved.values()) and (OUTPUT_AXES, "(B,T_q,T_k,d_k,d_v)=(2,7,8,6,3), "
                                                                   "float32") in moved
    assert all(c.verdict == M.HOLDS for c in good.values()) and len(good) == 5
    assert good["largest |row sum - 1|", p].tolerance == pytest.approx(5 * 2.0**-23, rel=1e-15)  # T_k + 1
    # weights (B, T_k, T_q): the axes of Q and K swapped; an output of d_k columns: V's width lost
    swapped = b9(forward_table(T=5, T_k=4, d=6, d_v=3, weights_T_q=4, weights_T_k=5))
    assert swapped[WEIGHTS_AXES, p].verdict == M.FAILS
    widened = b9(forward_table(T=5, T_k=4, d=6, d_v=3, output_d=6))
    assert widened[OUTPUT_AXES, p].verdict == M.FAILS


def test_the_output_is_held_to_the_forwards_and_the_references_rounding_bounds():
    p = "(B,T_q,T_k,d_k,d_v)=(2,5,4,6,3), float32"
    table = forward_table(T=5, T_k=4, d=6, d_v=3, max_norm_product=10.0)
    c = b9(table)[OUTPUT, p]
    # relative to the output's magnitude: the bounds at a magnitude of 1, the reference's once more for the
    # magnitude it divides by
    bound = output_bound(4, 6, "float32", 10.0, 1.0, cast=True) + 2 * output_bound(4, 6, "float64", 10.0, 1.0)
    assert (c.relation, c.basis, c.tolerance) == ("not above", "rounding", bound)
    u = 2.0**-24
    gamma = lambda n: n * u / (1 - n * u)  # noqa: E731
    by_hand = (2 * (2 * (gamma(6) + 3 * u) * 10.0 / math.sqrt(6)) + gamma(4) + 10 * u + 2 * gamma(4)) * 2.0
    assert output_bound(4, 6, "float32", 10.0, 2.0) == pytest.approx(by_hand, rel=1e-12)
    cast = (2 * (2 * (gamma(8) + 3 * u) * 10.0 / math.sqrt(6)) + gamma(5) + 10 * u + 2 * gamma(5)) * 2.0 * (1 + u)
    assert output_bound(4, 6, "float32", 10.0, 2.0, cast=True) == pytest.approx(cast, rel=1e-12)
    assert b9(forward_table(T=5, T_k=4, d=6, d_v=3, max_norm_product=10.0,
                            max_relative_output_error=1.01 * bound))[OUTPUT, p].verdict == M.FAILS
    assert b9(forward_table(T=5, T_k=4, d=6, d_v=3, max_norm_product=10.0,
                            max_relative_output_error=0.99 * bound))[OUTPUT, p].verdict == M.HOLDS


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), T_k=st.integers(1, 40), d_k=st.integers(1, 300), spread=st.floats(0.1, 8.0))
def test_the_output_bound_covers_float32_rounding(seed, T_k, d_k, spread):
    """A forward of float64 inputs cast to float32, computed in float32 (by hand, as the attention computes it), is
    within output_bound (cast) of the float64 forward of the inputs, at scores of any spread: relative to the output's
    magnitude sum_j w_j |v_j| element by element, and so within the largest |v|."""
    rng = np.random.default_rng(seed)
    q, K, V = spread * rng.standard_normal(d_k), rng.standard_normal((T_k, d_k)), rng.standard_normal((T_k, 3))
    q32, K32, V32 = (a.astype(np.float32) for a in (q, K, V))
    s32 = (K32 @ q32) * np.float32(1 / math.sqrt(d_k))
    e32 = np.exp(s32 - s32.max())
    out32 = (e32 / e32.sum()) @ V32
    s64 = (K @ q) / math.sqrt(d_k)
    e64 = np.exp(s64 - s64.max())
    out64 = (e64 / e64.sum()) @ V
    products = float(np.abs(K * q).sum(axis=1).max())
    assert np.max(np.abs(out32 - out64)) <= output_bound(T_k, d_k, "float32", products, float(np.abs(V).max()), True)
    magnitude = (e64 / e64.sum()) @ np.abs(V)
    assert np.max(np.abs(out32 - out64) / magnitude) <= output_bound(T_k, d_k, "float32", products, 1.0, True)


def test_b9_quotes_the_formula_for_its_output_and_the_shapes_sentence_for_its_shapes():
    """On a forward where every dimension differs, the output's check decides the lesson's formula sentence
    (softmax(QK^T / sqrt(d_k)) V), the shape checks its shapes sentence, the row checks its rows sentence."""
    checks = decide_b9(Results("mem", {"forward_shape.csv": forward_table(B=2, T=5, d=4, T_k=7, d_v=2)}))
    quoted = {c.check: lesson_sentence("B9", c.check) for c in checks}
    assert set(quoted) == {WEIGHTS_AXES, OUTPUT_AXES, OUTPUT, "smallest weight is non-negative",
                           "largest |row sum - 1|"}
    assert "\\text{softmax}" in quoted[OUTPUT] and "Shapes" not in quoted[OUTPUT]
    assert quoted[WEIGHTS_AXES].startswith("Shapes:") and quoted[OUTPUT_AXES] == quoted[WEIGHTS_AXES]
    assert quoted["largest |row sum - 1|"].startswith("After this, every row is non-negative and sums to 1")


def _forward_scaled_by(size):
    """A forward whose scale is 1/sqrt(size(Q, K, V)) in place of 1/sqrt(d_k): a mistaken axis."""
    from types import SimpleNamespace

    from sdpa_lab.attention import scaled_dot_product_attention

    return SimpleNamespace(forward=lambda Q, K, V: scaled_dot_product_attention(
        Q, K, V, scale=1 / math.sqrt(size(np.shape(Q), np.shape(V)))))


MISTAKEN_SCALES = {"1/sqrt(d_v)": lambda q, v: v[-1], "1/sqrt(T_q)": lambda q, v: q[-2]}


def _b9_of(shapes, attention=None):
    from sdpa_lab.experiments.forward_shape import forward_shape_rows

    rows = forward_shape_rows(3, shapes, **({"attention": attention} if attention else {}))
    return decide_b9(Results("mem", {"forward_shape.csv": pd.DataFrame(rows)}))


@pytest.mark.parametrize("mistake", sorted(MISTAKEN_SCALES))
def test_a_forward_scaled_by_another_axis_fails_in_float32_at_d_k_4096(mistake):
    """At (B, T, d_k) = (1, 1, 4096) the absolute bound of float32 rounding (about 0.3 there, from the largest |v|) let
    a 1/sqrt(d_v) forward pass; held relative to the output's magnitude element by element, the float32 forward
    fails as the float64 one does. The correct forward holds in both."""
    broken = _b9_of([[1, 1, 4096]], _forward_scaled_by(MISTAKEN_SCALES[mistake]))
    failing = {c.parameters for c in broken if c.check == OUTPUT and c.verdict == M.FAILS}
    assert any(p.endswith("float32") for p in failing) and any(p.endswith("float64") for p in failing), failing
    assert all(c.verdict == M.HOLDS for c in _b9_of([[1, 1, 4096]]))


def test_a_forward_scaled_by_the_queries_count_fails_where_the_config_has_t_equal_to_d_k():
    """At the shapes where T = d_k, a 1/sqrt(T_q) forward is 1/sqrt(d_k) on the lesson-shaped forward: the forward
    beside it, whose T_q differs from d_k, tells them apart."""
    shapes = [[1, 2, 2], [2, 8, 8], [1, 16, 16], [4, 32, 32], [1, 64, 64], [1, 128, 128]]
    broken = _b9_of(shapes, _forward_scaled_by(MISTAKEN_SCALES["1/sqrt(T_q)"]))
    for B, T, d in shapes:
        at = [c for c in broken if c.check == OUTPUT and c.verdict == M.FAILS and f",{d},"
              in c.parameters and c.parameters.startswith(f"(B,T_q,T_k,d_k,d_v)=({B},")]
        assert at, (B, T, d)
    assert all(c.verdict == M.HOLDS for c in _b9_of(shapes))
