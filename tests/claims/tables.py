"""What the claims' tests on hand-made result tables share: the CSVs each claim reads, checks by key, and the
assertion of a check's numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

E_D_K, E_T = (4, 16, 64), 8  # the entropy tables' sweep
J, LJ, G = "jacobian_norm", "log10_jacobian_norm", "score_grad_norm"  # the gradient table's quantities
SOURCES = {"A1": "lesson_variance.csv", "A2": "lesson_softmax_collapse.csv", "A3": "lesson_forward.csv",
           "B1": "variance.csv", "B2": "variance.csv", "B3": "variance.csv",
           "B4": ("variance.csv", "lesson_variance.csv"), "B5": ("entropy_sweep.csv", "entropy_exercise2.csv"),
           "B6": ("ranking_invariance.csv", "lesson_softmax_collapse.csv"),
           "B7": "gradient.csv", "B8": ("variance.csv", "entropy_sweep.csv"), "B9": "forward_shape.csv",
           "B10": "learning.csv"}


def by_key(checks, claim=None):
    """The checks by (check, parameters); all of claim `claim`, each naming a CSV that claim reads."""
    out = {}
    for c in checks:
        assert (c.check, c.parameters) not in out, c
        if claim is not None:
            assert c.claim == claim, c
            assert c.source in SOURCES[claim], c
        out[c.check, c.parameters] = c
    return out


def assert_check(c, *, measured, expected, se=None, relation, basis="statistical", cell=None, tolerance=None):
    assert c.measured == pytest.approx(measured, rel=1e-12, abs=1e-15), c
    assert c.expected == pytest.approx(expected, rel=1e-12, abs=1e-15), c
    assert c.relation == relation and c.basis == basis, c
    if se is not None:
        assert c.se == pytest.approx(se, rel=1e-12), c
    if tolerance is not None:
        assert c.tolerance == pytest.approx(tolerance, rel=1e-12), c
    if cell is not None:
        assert c.cell == cell, c


def var_se(d, n):
    return math.sqrt((2 * d * d + 6 * d) / n)  # sqrt(Var(q.k)^2 (2 + kurtosis excess) / n), E (q.k)^4 = 3d^2 + 6d


def log_std_var(d, n):
    return (2 + 6 / d) / (4 * n)


def entropy_tables():
    rows = []
    for i, d in enumerate(E_D_K):
        values = {"none": (1.5 / (i + 1), 0.01 * (i + 1)), "inv_sqrt_dk": (1.7, 0.012),
                  "inv_dk": (1.8 + 0.1 * i, 0.005),
                  "unit_variance_reference": (1.69, 0.011), "inv_sqrt_dk_minus_unit_variance_reference": (0.01, 0.002),
                  "inv_dk_minus_inv_sqrt_dk": (0.2 + 0.05 * i, 0.003)}
        for scale, (mean, se) in values.items():
            for statistic, value in (("mean", mean), ("std", se * 10), ("se", se)):
                rows.append({"seed": 1, "d_k": d, "T": E_T, "trials": 100, "scale": scale, "quantity": "entropy",
                             "statistic": statistic, "value": value})
    single = pd.DataFrame([{"d_k": d, "T": 8, "scale": scale, "entropy": h if scale == "none" else 2.0}
                           for d, h in ((4, 1.08), (16, 1.48), (64, 0.3), (256, 0.31))
                           for scale in ("none", "inv_sqrt_dk")])
    exercise2 = pd.DataFrame([{"seed": 1, "T": 8, "trials": 400, "quantity": q, "count": c, "fraction": c / 400}
                              for q, c in (("sequences", 400), ("falls_at_every_step", 37))])
    return {"entropy_sweep.csv": pd.DataFrame(rows), "entropy_single_draw.csv": single.iloc[::-1],
            "entropy_exercise2.csv": exercise2}


G_D_K = (4, 64, 1024)


def gradient_table(ds=G_D_K):
    rows = []
    for i, d in enumerate(ds):
        values = {("none", J): (0.5 / (i + 1), 0.01 * (i + 1)),
                  ("inv_sqrt_dk", J): (0.6, 0.01),
                  ("unit_variance_reference", J): (0.61, 0.011),
                  ("inv_sqrt_dk_minus_unit_variance_reference", J): (-0.001 * (i + 1), 0.002),
                  ("inv_sqrt_dk_minus_none", J): (0.1 * (i + 1), 0.004),
                  ("none", LJ): (-0.5 - i, 0.02), ("inv_sqrt_dk", LJ): (-0.44, 0.001),
                  ("inv_sqrt_dk_minus_none", LJ): (0.06 + i, 0.005 * (i + 1)),
                  ("none", G): (2.0 / (i + 1) ** 2, 0.05 / (i + 1)),
                  ("inv_sqrt_dk", G): (1.5 + 0.1 * i, 0.04),
                  ("inv_sqrt_dk_minus_none", G): (1.5 + 0.1 * i - 2.0 / (i + 1) ** 2, 0.03)}
        for (scale, quantity), (mean, se) in values.items():
            for statistic, value in (("mean", mean), ("std", 10 * se), ("se", se)):
                rows.append({"seed": 1, "d_k": d, "T": 8, "trials": 100, "scale": scale, "quantity": quantity,
                             "statistic": statistic, "value": value})
    return pd.DataFrame(rows)


VARIANCE_PRINTED = {4: (3.988, 0.9971), 16: (15.891, 0.9932), 64: (64.249, 1.0039), 256: (256.391, 1.0015)}


RAW = (-3.12, 13.41, -27.0, 12.41, 2.39, 24.29, -1.23, -2.77)


SCALED = (-0.2, 0.84, -1.69, 0.78, 0.15, 1.52, -0.08, -0.17)


W_SCALED = (0.0634, 0.1781, 0.0142, 0.1673, 0.0894, 0.3514, 0.0713, 0.0648)


def lesson_tables():
    a1 = pd.DataFrame([{"d_k": d, "n_samples": 100000, "quantity": q, "value": v}
                       for d, (raw, scaled) in VARIANCE_PRINTED.items()
                       for q, v in (("raw_variance", raw), ("scaled_variance", scaled))])
    a2 = [{"d_k": 256, "T": 8, "quantity": q, "key": j, "value": values[j]} for j in range(8)
          for q, values in (("raw_score", RAW), ("scaled_score", SCALED),
                            ("unscaled_weight", (0.0,) * 5 + (1.0,) + (0.0,) * 2), ("scaled_weight", W_SCALED))]
    a2 += [{"d_k": 256, "T": 8, "quantity": q, "key": "", "value": v}
           for q, v in (("unscaled_argmax", 5), ("unscaled_max_weight", 1.0), ("unscaled_entropy", 0.0003),
                        ("scaled_max_weight", 0.3514), ("scaled_entropy", 1.7909), ("uniform_entropy", 2.0794))]
    a3 = [{"B": 1, "T": 6, "d_k": 16, "quantity": f"{name}_shape", "row": "", "col": axis, "value": size}
          for name, shape in (("input", (1, 6, 16)), ("weights", (1, 6, 6)), ("output", (1, 6, 16)))
          for axis, size in enumerate(shape)]
    a3 += [{"B": 1, "T": 6, "d_k": 16, "quantity": "row_sum", "row": i, "col": "", "value": 1.0} for i in range(6)]
    a3 += [{"B": 1, "T": 6, "d_k": 16, "quantity": "weight", "row": i, "col": j, "value": W6[i][j]}
           for i in range(6) for j in range(6)]
    return {"lesson_variance.csv": a1, "lesson_softmax_collapse.csv": pd.DataFrame(a2),
            "lesson_forward.csv": pd.DataFrame(a3)}


def ranking_table(counts):
    rows = []
    for (d, dtype), c in counts.items():
        for quantity, n in c.items():
            rows.append({"seed": 1, "d_k": d, "T": 8, "trials": 50, "dtype": dtype, "quantity": quantity,
                         "count": n, "fraction": n / 50})
    return pd.DataFrame(rows)


def argsort_rows(f64=1.0, f32=1.0):
    """lesson_softmax_collapse.csv with Exercise 3's two rows: does the argsort of the weights agree?"""
    t = lesson_tables()["lesson_softmax_collapse.csv"]
    return pd.concat([t, pd.DataFrame([{"d_k": 256, "T": 8, "quantity": f"weight_argsort_agrees_{dtype}", "key": "",
                                        "value": v} for dtype, v in (("float64", f64), ("float32", f32))])],
                     ignore_index=True)


def learning_table(success, best, runs=64, lrs=(0.1, 1.0, 10.0), only=(20, 3), on_target=0.0, **premises):
    """success[(d_k, scale)] = success fraction per lr; best[(d_k, scale)] = index of the best lr; at each d_k the
    paired counts of runs only the scaled (only[0]) or only the unscaled head (only[1]) learns, and the premise
    statistics (premise_values, those in `premises` changed)."""
    rows = []
    common = {"seed": 1, "T": 8, "runs": runs, "steps": 100, "loss_threshold": 0.1}
    for (d, scale), fractions in success.items():
        for i, (lr, f) in enumerate(zip(lrs, fractions, strict=True)):
            for statistic, value in (("success_fraction", f), ("starts_on_target", on_target)):
                rows.append({**common, "d_k": d, "scale": scale, "lr": lr, "best_lr": int(i == best[d, scale]),
                             "statistic": statistic, "value": value})
    for d in sorted({d for d, _ in success}):
        for statistic, n in zip(("only_scaled_succeeds", "only_unscaled_succeeds"), only, strict=True):
            rows.append({**common, "d_k": d, "scale": "inv_sqrt_dk_minus_none", "lr": lrs[1], "best_lr": 1,
                         "statistic": statistic, "value": n})
        for scale in ("none", "inv_sqrt_dk"):
            rows += [{**common, "d_k": d, "scale": scale, "lr": lrs[best[d, scale]], "best_lr": 1,
                      "statistic": statistic, "value": value}
                     for statistic, value in premise_values(d, scale, **premises).items()]
    return pd.DataFrame(rows)


def premise_values(d_k, scale, **changed):
    """B10's premise statistics of one d_k and head (experiments.learning_premises) as a correct run of 64 runs
    of N(0, 1) draws makes them (sizes of that order, differences at rounding level), except those `changed`."""
    values = {"start_gradient_error": 1e-9, "start_derivative_size": 5.0, "start_score_spread": 6.0 * d_k**0.5,
              "start_score_abs_sum": float(d_k), "start_value_norm": 3.0 + min(d_k, 64) ** 0.5,
              "finite_difference_step": 2.0**-19}
    if scale == "inv_sqrt_dk":
        values |= {"start_weight_error": 2e-16, "start_score_spread": 6.0}
    return values | changed


def forward_table(B=2, T=5, d=3, dtype="float32", T_k=None, d_v=None, T_q=None, **changed):
    """One forward's rows of forward_shape.csv: Q (B, T_q, d), K (B, T_k, d), V (B, T_k, d_v) (T_q = T_k = T,
    d_v = d unless given), its quantities as a correct forward makes them, except those `changed`."""
    T_q, T_k, d_v = T if T_q is None else T_q, T if T_k is None else T_k, d if d_v is None else d_v
    values = {"weights_B": B, "weights_T_q": T_q, "weights_T_k": T_k, "output_B": B, "output_T": T_q,
              "output_d": d_v, "output_ndim": 3, "weights_ndim": 3, "dtype_kept": 1.0, "max_row_sum_error": 1e-7,
              "min_weight": 0.0, "all_finite": 1.0, "max_relative_output_error": 1e-7,
              "max_norm_product": 2.0 * d} | changed
    return pd.DataFrame([{"seed": 1, "B": B, "T": T, "d_k": d, "T_q": T_q, "T_k": T_k, "d_v": d_v, "dtype": dtype,
                          "quantity": q, "value": v} for q, v in values.items()])


D_K = (4, 16, 64, 256, 1024)


def variance_table(ds=D_K, n=1000):
    rows = []
    for i, d in enumerate(ds):
        raw_var = d * (1 + 0.01 * (i + 1))  # a little off, differently at each d_k
        raw_mean = 0.05 * (i - 2)
        for scale, c in (("none", 1.0), ("inv_sqrt_dk", 1 / math.sqrt(d)), ("inv_dk", 1 / d)):
            for statistic, value in (("mean", raw_mean * c), ("variance", raw_var * c * c),
                                     ("std", math.sqrt(raw_var) * c)):
                rows.append({"seed": 1, "d_k": d, "n_pairs": n, "scale": scale, "statistic": statistic,
                             "value": value})
    return pd.DataFrame(rows)


def variance_skewness_d4(n):
    """Skewness of the sample variance of n scores at d = 4, by hand: S = q.k has E S^2 = 4, E S^4 = 3*16 + 6*4 = 72,
    E S^6 = 15*64 + 90*16 + 120*4 = 2880, so Y = S^2 has variance 72 - 16 = 56 and third central moment
    2880 - 3*4*72 + 2*64 = 2144; a mean of n Y's has skewness 2144 / 56^1.5 / sqrt(n)."""
    return 2144 / 56**1.5 / math.sqrt(n)


def lesson_variance_1024(raw=1030.0, n=100000):
    """lesson_variance.csv with Exercise 1's d_k = 1024 row (the lesson's seed-42 stream continued)."""
    t = lesson_tables()["lesson_variance.csv"]
    return pd.concat([t, pd.DataFrame([{"d_k": 1024, "n_samples": n, "quantity": "raw_variance", "value": raw},
                                       {"d_k": 1024, "n_samples": n, "quantity": "scaled_variance",
                                        "value": raw / 1024}])], ignore_index=True)


W6 = ((0.057, 0.41, 0.13, 0.21, 0.104, 0.09), (0.072, 0.606, 0.025, 0.089, 0.079, 0.128),
      (0.172, 0.162, 0.096, 0.093, 0.185, 0.291), (0.116, 0.108, 0.216, 0.123, 0.173, 0.263),
      (0.056, 0.104, 0.27, 0.301, 0.05, 0.219), (0.1, 0.083, 0.496, 0.134, 0.107, 0.081))


def lesson_csvs() -> dict[str, pd.DataFrame]:
    """Every lesson replication's table by file name, hand-made: the lesson's printed numbers, Exercise 1's d_k = 1024
    rows and Exercise 3's argsort rows, for a test that needs a whole run's fixed tables but not the lesson's draws
    (tests/conftest.py's lesson_tables(), the slowest experiment)."""
    return {**lesson_tables(), "lesson_variance.csv": lesson_variance_1024(),
            "lesson_softmax_collapse.csv": argsort_rows()}
