"""The calibration's tail table (summary.tails): observed |z| beyond 3, 4 and 4.5 per two-sided check family, against
what a normal z predicts (for checks that name no exact law: tests/calibration/test_tail_laws.py has those), with the
Poisson chance of at least that many; on hand-made checks."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from sdpa_lab.calibration.summary import tails
from sdpa_lab.calibration.tails import poisson_at_least


def checks(zs: dict[str, list[float]], relation: str = "within", basis: str = "statistical", law: str = "",
           expected: float = 0.0, se: float = 1.0) -> pd.DataFrame:
    """Hand-made checks of one config and arm, a run per z; `law` the checks table's law cell ("" for none)."""
    rows = [{"config": "c", "arm": "inv_sqrt_dk", "claim": "B1", "check": name, "relation": relation, "basis": basis,
             "z": z, "run": i, "law": law, "expected": expected, "se": se}
            for name, values in zs.items() for i, z in enumerate(values)]
    return pd.DataFrame(rows)


def test_tails_count_what_exceeds_each_threshold_against_a_normal_prediction():
    a = [0.1] * 990 + [3.5, -3.2, 3.01, 4.2, -4.5, 2.99, 0.0, 0.0, 0.0, 0.0]  # 5 beyond 3 (two-sided), 2 beyond 4
    b = [0.0] * 500
    t = tails(checks({"a": a, "b": b})).set_index("check")
    assert t.loc["a", "n"] == 1000 and (t.loc["a", "over_3"], t.loc["a", "over_4"]) == (5, 2)
    assert t.loc["a", "predicted_over_3"] == pytest.approx(1000 * 2 * (1 - NormalDist().cdf(3)), rel=1e-12)
    assert t.loc["a", "predicted_over_4"] == pytest.approx(1000 * 2 * (1 - NormalDist().cdf(4)), rel=1e-12)
    mean = t.loc["a", "predicted_over_4"]  # P(at least 2 | Poisson(mean)) = 1 - e^-m (1 + m)
    assert t.loc["a", "chance_over_4"] == pytest.approx(1 - math.exp(-mean) * (1 + mean), rel=1e-9)
    assert not bool(t.loc["a", "excess"])  # 2 beyond 4 where 0.063 are predicted: chance 0.0019, not below 0.001
    more = tails(checks({"a": a[:-1] + [4.1]})).set_index("check")  # 3 beyond 4: chance 4e-5
    assert more.loc["a", "over_4"] == 3 and more.loc["a", "chance_over_4"] < 1e-3 and bool(more.loc["a", "excess"])
    assert (t.loc["b", "over_3"], t.loc["b", "chance_over_3"], bool(t.loc["b", "excess"])) == (0, 1.0, False)
    every = t.loc["all"]
    assert (every.n, every.over_3, every.over_4) == (1500, 5, 2) and every.claim == "all"
    assert t.loc["a", "over_4.5"] == 0 and t.loc["a", "normal_over_4"] == t.loc["a", "predicted_over_4"]


def test_tails_leave_out_directional_derived_and_unscaled_checks():
    mixed = pd.concat([checks({"up": [5.0] * 10}, relation="above"), checks({"copy": [5.0] * 10}, basis="derived"),
                       checks({"none": [np.nan] * 10}), checks({"kept": [5.0, 0.0]})])
    t = tails(mixed)
    assert sorted(t.check) == ["all", "kept"] and t.set_index("check").loc["kept", "over_4"] == 1


def test_poisson_at_least():
    assert poisson_at_least(0, 3.0) == 1.0
    assert poisson_at_least(1, 0.5) == pytest.approx(1 - math.exp(-0.5), rel=1e-12)
    assert poisson_at_least(3, 2.0) == pytest.approx(1 - math.exp(-2) * (1 + 2 + 2), rel=1e-12)


@pytest.mark.parametrize("observed, mean", [(1589, 1457.9), (1400, 1457.9), (60, 34.2)])
def test_poisson_at_least_where_exp_of_minus_the_mean_underflows(observed, mean):
    """A study's "all" row predicts more than 745 past 3: its chance summed in logs, term by term, far into the tail."""
    log_terms = [i * math.log(mean) - mean - math.lgamma(i + 1) for i in range(observed, observed + 5000)]
    top = max(log_terms)
    assert poisson_at_least(observed, mean) == pytest.approx(math.exp(top) * sum(math.exp(t - top) for t in log_terms),
                                                             rel=1e-9)


def test_only_a_pre_registered_study_shows_the_promise():
    from sdpa_lab.calibration.summary import false_fails

    n = 30_000  # no fail in 30,000 runs bounds the rate at 1e-4 (95%)
    runs = pd.DataFrame({"config": ["registered"] * n + ["extended"] * n, "arm": "inv_sqrt_dk", "n_fails": 0,
                         "n_statistical_fails": 0, "k_min": 4.4, "k_max": 5.1})
    ff = false_fails(runs, 1e-4, preregistered=["registered"]).set_index("config")
    assert ff.loc["registered", "rate_bound"] <= 1e-4 and ff.loc["extended", "rate_bound"] <= 1e-4
    assert bool(ff.loc["registered", "promise_shown"]) and bool(ff.loc["registered", "preregistered"])
    assert not ff.loc["extended", "promise_shown"] and not ff.loc["all", "promise_shown"]  # pooled: not registered
    assert not false_fails(runs, 1e-4).promise_shown.any()


def test_a_study_file_says_its_registration_in_words():
    from sdpa_lab.calibration.studies import check_study, load_studies
    from sdpa_lab.config import ConfigError

    raw = {"seeds": 10, "broken_seeds": 0, "batch": 5, "preregistered": "10 runs, fixed before"}
    s = check_study(raw, "r")
    assert s.preregistered == "10 runs, fixed before" and check_study(s.settings(), "r") == s
    for bad in ("", "  ", 3):
        with pytest.raises(ConfigError, match="setting preregistered"):
            check_study({**raw, "preregistered": bad}, "r")
    shipped = load_studies()
    registered_names = ["crossing", "preregistered", "space_preregistered"]
    assert [name for name, st in shipped.items() if st.preregistered] == registered_names
    registered = shipped["preregistered"]
    assert registered.seeds == 30_000 and "30,000" in registered.preregistered
    roots = [st.space.seed if st.space else st.sweep["seed"] for st in shipped.values()]
    for name in registered_names:
        study = shipped[name]
        root = study.space.seed if study.space else study.sweep["seed"]
        assert roots.count(root) == 1 and str(root) in study.preregistered  # a seed root no other study uses
