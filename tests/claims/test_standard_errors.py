"""The standard errors the checks use, against the spread of their statistics over many seeds, at the schema's
edges: the smallest sizes, many trials at small heads, and the widest heads. Fails if an SE is off by 1.5x,
or if a two-sided check's statistic is centred away from its expected value (a finite-d_k bias)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdpa_lab import claims as C
from sdpa_lab.experiments.entropy_sweep import entropy_single_draw_rows, entropy_sweep_rows, exercise2_rows
from sdpa_lab.experiments.gradient import gradient_rows
from sdpa_lab.experiments.variance import variance_rows
from sdpa_lab.results import Results

# A study over many seeded runs of the experiments, in process: out of the fast lane.
pytestmark = pytest.mark.pipeline

# name: (variance (d_k, n_pairs), entropy (d_k, T, trials), gradient (d_k, T, trials), seeds)
EDGES = {
    "smallest sizes": (([1, 2, 4], 1000), ([1, 2, 4], 2, 100), ([1, 4], 2, 100), 100),
    "many trials at small heads": (([1, 2], 20000), ([1, 4], 8, 10000), ([1, 4], 8, 10000), 50),
    "widest heads": (([1024, 4096], 1000), ([4096, 16384], 2, 100), ([4096, 16384], 3, 100), 50),
}
CLAIMS = ["B1", "B2", "B3", "B5", "B7", "B8"]  # B4: the lesson's own draw (its SE is B1's)

# Checks whose SE is an upper bound by design (may overstate the spread, never understate it): none left.
BOUNDS: set[str] = set()


def _decide(seed: int, variance, entropy, gradient) -> list[C.Check]:
    tables = {
        "variance.csv": pd.DataFrame(variance_rows(seed, *variance)),
        "entropy_sweep.csv": pd.DataFrame(entropy_sweep_rows(seed, *entropy)),
        "entropy_single_draw.csv": pd.DataFrame(entropy_single_draw_rows()),
        "entropy_exercise2.csv": pd.DataFrame(exercise2_rows(seed, entropy[2])),
        "gradient.csv": pd.DataFrame(gradient_rows(seed, *gradient)),
    }
    registry = C.registry()
    decision = C.decide(Results("mem", tables), claims=[registry[i] for i in CLAIMS], k=4.8)
    return [c for c in decision.checks if c.basis in ("statistical", "derived")]


@pytest.mark.parametrize("edge", list(EDGES))
def test_standard_errors_match_the_spread_over_seeds(edge):
    variance, entropy, gradient, seeds = EDGES[edge]
    runs = [_decide(seed, variance, entropy, gradient) for seed in range(seeds)]
    keys = [(c.claim, c.check, c.parameters) for c in runs[0]]
    assert all([(c.claim, c.check, c.parameters) for c in run] == keys for run in runs)
    problems = []
    for i, (claim, check, parameters) in enumerate(keys):
        measured = np.array([run[i].measured for run in runs])
        se = np.array([run[i].se for run in runs])
        ratio = float(np.mean(se)) / float(np.std(measured, ddof=1))  # the SE the checks use / the true spread
        where = f"{claim} {check} [{parameters}]"
        if ratio < 1 / 1.5 or (ratio > 1.5 and check not in BOUNDS):
            problems.append(f"{where}: SE / spread = {ratio:.2f}")
        if runs[0][i].relation == "within":  # centred on its expected value: mean z near 0
            z = (measured - runs[0][i].expected) / se
            if abs(z.mean()) > 4.5 / np.sqrt(seeds):
                problems.append(f"{where}: mean z = {z.mean():.2f} over {seeds} seeds")
        theory, theory_se = runs[0][i].theory, runs[0][i].theory_se
        # held to theory's value besides its relation: centred on it too, up to its Monte Carlo error (a fixed offset)
        if np.isfinite(theory) and abs(measured.mean() - theory) > 4.5 * se.mean() / np.sqrt(seeds) + 4 * theory_se:
            problems.append(f"{where}: mean {measured.mean():.4g} over {seeds} seeds, theory's {theory:.4g}")
    assert not problems, "\n".join(problems)


def test_b10_paired_standard_errors_match_the_spread_over_seeds():
    # the gap checks' SEs come from each d_k's discordant runs; the learning-rate pick (on selection runs of
    # their own) varies from seed to seed too, and the SE must still cover the spread. The scaled head's trend
    # uses the worst-case binomial SE: a bound (about twice the spread here), never below it.
    from sdpa_lab.experiments.learning import learning_rows

    runs = []
    for seed in range(40):
        rows, _ = learning_rows(seed, [4, 16], 4, 64, 30, [0.1, 1.0, 10.0, 100.0], 0.1)
        decision = C.decide(Results("mem", {"learning.csv": pd.DataFrame(rows)}), claims=[C.registry()["B10"]],
                            k=4.8)
        # the statistical checks: the premises are held to rounding bounds, not SEs
        runs.append({c.check: (c.measured, c.se) for c in decision.checks if c.basis == "statistical"})
    for check in runs[0]:
        measured = np.array([run[check][0] for run in runs])
        ratio = float(np.mean([run[check][1] for run in runs])) / float(np.std(measured, ddof=1))
        if check.startswith("slope of scaled success"):
            assert ratio > 1 / 1.5, (check, ratio)
        else:
            assert 1 / 1.5 < ratio < 1.5, (check, ratio)
