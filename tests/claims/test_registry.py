"""The claims registry and the checker: verdicts from real runs, and proof that each check can fail."""

from __future__ import annotations

import copy
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdpa_lab import claims as C
from sdpa_lab.cli import main
from sdpa_lab.io import write_csv
from sdpa_lab.results import COLUMNS, Results, read_table

from tests.conftest import TINY_CONFIG, write_run

# On one test worker (pytest-xdist, --dist loadgroup): results_dir, made once.
pytestmark = pytest.mark.xdist_group("claims_registry")

# The tests that decide results_dir: every experiment run in process and every claim decided, end to end (the
# claims' unit tests decide small hand-made tables: tests/claims/test_<claim module>.py, test_deciding.py).
WHOLE_RUN = pytest.mark.pipeline

# Moderate sample sizes: every claim is decided (d_k = 1024 for B4), in a few seconds.
CLAIMS_CONFIG = copy.deepcopy(TINY_CONFIG)
CLAIMS_CONFIG["variance"] = {"d_k": [4, 16, 64, 256, 1024], "n_pairs": 20000}
CLAIMS_CONFIG["entropy_sweep"] = {"d_k": [4, 16, 64, 256, 1024], "T": 8, "trials": 2000}
CLAIMS_CONFIG["gradient"] = {"d_k": [4, 64, 1024], "T": 8, "trials": 1000}
CLAIMS_CONFIG["learning"] = {"d_k": [4, 256], "T": 8, "runs": 64, "steps": 100,
                             "learning_rates": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0], "loss_threshold": 0.1}


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory) -> Path:
    """Every experiment's CSVs for CLAIMS_CONFIG, as the rules write them (no claims.csv)."""
    return write_run(tmp_path_factory.mktemp("run"), CLAIMS_CONFIG)


@pytest.fixture(scope="module")
def decision(results_dir) -> C.Decision:
    """results_dir decided, once for the module (a test that changes a table decides its own copy)."""
    return C.decide(results_dir)


@pytest.fixture
def results_copy(results_dir, tmp_path) -> Path:
    dst = tmp_path / "results"
    shutil.copytree(results_dir, dst)
    return dst


def load_tables(results_dir: Path) -> dict[str, pd.DataFrame]:
    return {p.name: read_table(results_dir, p.name) for p in results_dir.glob("*.csv")}


def set_cell(tables: dict[str, pd.DataFrame], cell, value: float) -> dict[str, pd.DataFrame]:
    name, where, column = cell
    out = dict(tables)
    t = tables[name].copy()
    mask = np.ones(len(t), dtype=bool)
    for col, val in where:
        mask &= (t[col] == val).to_numpy()
    assert mask.sum() == 1, cell
    t[column] = t[column].astype(float)
    t.loc[mask, column] = value
    out[name] = t
    return out


def get_cell(tables, cell) -> float:
    name, where, column = cell
    t = tables[name]
    mask = np.ones(len(t), dtype=bool)
    for col, val in where:
        mask &= (t[col] == val).to_numpy()
    return float(t.loc[mask, column].iloc[0])


_SOURCES: dict[str, list[C.Claim]] = {}  # claim id -> the claims whose checks its derived ones repeat (from any tables)


def redecide(tables, claim_id: str, check: C.Check) -> C.Check:
    """`check` decided again on `tables`: its claim, with the claims whose checks its derived ones repeat (they take
    those claims' k), so with the k it has in the whole run (each claim's own, whatever the other claims)."""
    claim = C.registry()[claim_id]
    if claim_id not in _SOURCES:
        repeated = {c.of_claim for c in claim.decide(Results("mem", tables))} - {"", claim_id}
        _SOURCES[claim_id] = [C.registry()[cid] for cid in sorted(repeated)]
    d = C.decide(Results("mem", tables), claims=[*_SOURCES[claim_id], claim])
    (found,) = [c for c in d.checks if c.check == check.check and c.parameters == check.parameters]
    return found


def move_to(tables, check: C.Check, target: float):
    """Tables in which `check` measures `target`, by moving its cell (Newton steps on a smooth map)."""
    c0 = get_cell(tables, check.cell)
    c, m = c0, check.measured
    for _ in range(30):
        if math.isclose(m, target, rel_tol=1e-9, abs_tol=1e-3 * check.tolerance):
            return set_cell(tables, check.cell, c)
        h = 1e-6 * max(abs(c), 1e-3)
        slope = (redecide(set_cell(tables, check.cell, c + h), check.claim, check).measured - m) / h
        assert slope != 0, f"{check.claim} {check.check}: measured does not move with its cell"
        c = c + (target - m) / slope
        m = redecide(set_cell(tables, check.cell, c), check.claim, check).measured
    raise AssertionError(f"could not move {check.claim} {check.check} [{check.parameters}] to {target}")


# Where to put `measured`, in tolerances from `expected`: (a factor that fails, one that holds).
FAIL_HOLD = {"within": (2.0, 0.5), "not above": (2.0, 0.5), "not below": (-2.0, -0.5),
             "above": (-2.0, 2.0), "below": (2.0, -2.0)}


def fail_and_hold(check: C.Check) -> tuple[float, float]:
    """Where `check` fails and where it holds: twice its tolerance the wrong way and half (a claimed rise: twice) its
    tolerance the right way from its expected value; for one held to a theory value besides (a claimed fall theory
    gives), twice that tolerance below theory's value, and theory's value itself."""
    if math.isfinite(check.theory):
        return check.theory - 2 * check.theory_tolerance, check.theory
    fail, hold = FAIL_HOLD[check.relation]
    return check.expected + fail * check.tolerance, check.expected + hold * check.tolerance


@pytest.mark.house
def test_every_claim_in_the_inventory_is_registered():
    lesson_order = ["A1", "A2", "A3", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10"]  # a contract
    ids = [c.id for c in C.CLAIMS]
    assert [i for i in ids if i in lesson_order] == lesson_order and len(set(ids)) == len(ids)
    assert list(C.registry()) == ids
    for claim in C.CLAIMS:
        assert claim.statement and claim.lesson_says and claim.tolerance_reason
        assert set(claim.reads) <= set(COLUMNS) | {"gradient.csv", "learning.csv", "learning_curves.csv"}


@WHOLE_RUN
def test_every_check_quotes_the_lesson_sentence_it_decides(decision, tmp_path):
    """Every check a run makes, decided or not measured, has the lesson's sentence it decides in its claim's
    declaration (a check decides that sentence and nothing more), and no claim quotes a sentence for a check no run
    makes."""
    narrow = copy.deepcopy(TINY_CONFIG)  # one d_k everywhere: the checks that need two say they are not measured
    for section in ("variance", "entropy_sweep", "ranking_invariance", "gradient"):
        narrow[section]["d_k"] = [4]
    narrow["learning"]["d_k"] = [2]
    checks = [*decision.checks, *C.decide(write_run(tmp_path, narrow)).checks]
    assert any(c.verdict == C.NOT_MEASURED for c in checks)
    quoted = {(claim.id, check) for claim in C.CLAIMS for check in claim.sentences}
    assert {(c.claim, c.check) for c in checks} == quoted
    for c in checks:
        assert C.lesson_sentence(c.claim, c.check).strip(), (c.claim, c.check)


@WHOLE_RUN
def test_a_correct_run_holds(decision):
    d = decision
    verdicts = {c.verdict for c in d.checks if not c.literal}
    assert verdicts == {C.HOLDS}, [c for c in d.checks if c.verdict != C.HOLDS and not c.literal]
    (literal,) = [c for c in d.checks if c.literal]
    # Exercise 2 as written: about a third of learners see the entropy fall at every step
    assert literal.verdict == C.NOT_PER_DRAW and 0.25 < literal.measured < 0.5
    assert "entropies 1.08, 1.48, 0.014, 0.103, 2 of 3 steps not falling" in literal.note  # the lesson's own draw


def test_bonferroni_k():
    k = C.bonferroni_k(50)
    # 50 two-sided tails at k together hold alpha_family of probability
    tail = 2 * (1 - 0.5 * (1 + math.erf(k / math.sqrt(2))))
    assert 50 * tail == pytest.approx(C.ALPHA_FAMILY, rel=1e-6)
    assert C.bonferroni_k(100) > k


def test_variance_standard_error_matches_simulation():
    # the SE formula the B1/B2 tolerances rest on, against the spread of simulated sample variances
    rng = np.random.default_rng(0)
    d, n, reps = 8, 400, 2000
    s = np.einsum("rnd,rnd->rn", rng.standard_normal((reps, n, d)), rng.standard_normal((reps, n, d)))
    assert s.var(axis=1).std() == pytest.approx(C.variance_se(d, n), rel=0.06)


def _representative_checks(decision):
    """One check of each kind per claim (first sweep point), to keep the test quick."""
    seen, out = set(), []
    for c in decision.checks:
        if c.literal or c.cell is None or (c.claim, c.check) in seen:
            continue
        seen.add((c.claim, c.check))
        out.append(c)
    return out


@WHOLE_RUN
def test_each_check_fails_at_twice_its_tolerance_and_holds_at_half(results_dir):
    tables = load_tables(results_dir)
    decision = C.decide(Results(results_dir, tables))
    checked = set()
    for check in _representative_checks(decision):
        if check.tolerance == 0:  # exact: any change of its cell in one direction breaks it
            verdicts = {redecide(set_cell(tables, check.cell, get_cell(tables, check.cell) + s), check.claim,
                                 check).verdict for s in (-1.0, 1.0)}
            assert C.FAILS in verdicts, check
        else:
            for target, verdict in zip(fail_and_hold(check), (C.FAILS, C.HOLDS), strict=True):
                moved = move_to(tables, check, target)
                got = redecide(moved, check.claim, check)
                assert got.verdict == verdict, (check, target, got)
        checked.add(check.claim)
    assert checked == set(C.registry())


def _perturb_csv(results: Path, check: C.Check, target: float) -> None:
    tables = load_tables(results)
    moved = move_to(tables, check, target)
    name = check.cell[0]
    write_csv(moved[name], results / name)


@WHOLE_RUN
@pytest.mark.parametrize("claim_id", ["A1", "A2", "B1", "B2", "B3", "B4", "B5", "B7", "B8", "B9", "B10"])
def test_checker_exit_status_names_the_claim(results_dir, decision, tmp_path, claim_id, capsys):
    check = next(c for c in decision.checks if c.claim == claim_id and c.tolerance > 0 and c.cell)
    fail, hold = fail_and_hold(check)
    for name, target, status in (("hold", hold, 0), ("fail", fail, 1)):
        work = tmp_path / name
        shutil.copytree(results_dir, work)
        _perturb_csv(work, check, target)
        assert main(["check", str(work), "--no-config"]) == status
        out = capsys.readouterr().out
        if status:
            failing = out.split("FAILING: ")[1].split()
            assert claim_id in [f.strip(",") for f in failing]
        else:
            assert re.search(r"^\d+ claims: \d+ hold", out, re.M) and "FAILING" not in out


@WHOLE_RUN
@pytest.mark.parametrize("claim_id", ["A3", "B6"])
def test_checker_fails_exact_claims(decision, results_copy, claim_id, capsys):
    check = next(c for c in decision.checks if c.claim == claim_id and c.tolerance == 0)
    tables = load_tables(results_copy)
    for step in (1.0, -1.0):
        moved = set_cell(tables, check.cell, get_cell(tables, check.cell) + step)
        if redecide(moved, claim_id, check).verdict == C.FAILS:
            break
    name = check.cell[0]
    moved[name][check.cell[2]] = moved[name][check.cell[2]].astype(float)
    write_csv(moved[name], results_copy / name)
    assert main(["check", str(results_copy), "--no-config"]) == 1
    assert f"FAILING: {claim_id}" in capsys.readouterr().out


@WHOLE_RUN
def test_checker_passes_on_a_correct_run(results_dir, capsys):
    assert main(["check", str(results_dir), "--no-config"]) == 0
    out = capsys.readouterr().out
    for claim_id in C.registry():
        assert f"\n{claim_id} " in out
    assert "holds on average, not per draw" in out


def _edit(path: Path, column: str, row: int, value: str) -> None:
    t = pd.read_csv(path, dtype=str, keep_default_na=False)
    t.loc[row, column] = value
    t.to_csv(path, index=False)


@WHOLE_RUN
def test_checker_refuses_results_of_another_config(results_copy, tmp_path, capsys):
    import yaml

    other = copy.deepcopy(CLAIMS_CONFIG)
    other["variance"]["n_pairs"] = 30000
    cfg = tmp_path / "other.yaml"
    cfg.write_text(yaml.safe_dump(other))
    assert main(["check", str(results_copy), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "variance.csv: column 'n_pairs'" in err and "another config" in err
    same = tmp_path / "same.yaml"
    same.write_text(yaml.safe_dump(CLAIMS_CONFIG))
    assert main(["check", str(results_copy), "--config", str(same)]) == 0


@WHOLE_RUN
def test_checker_never_trusts_claims_csv(results_copy, capsys):
    (results_copy / "claims.csv").write_text("id,verdict\nA1,holds\n")
    _edit(results_copy / "lesson_variance.csv", "value", 0, "3.99")
    assert main(["check", str(results_copy), "--no-config"]) == 1
    assert "FAILING: A1" in capsys.readouterr().out


def test_missing_results_folder(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope")]) == 2
    assert "no such results folder" in capsys.readouterr().err


@WHOLE_RUN
def test_derived_checks_repeat_their_source_and_are_counted_once(decision):
    # variance.csv's scaled variances are the raw ones times c^2: B2, B4 and B8's variance checks are B1's
    # evidence again (B4's Exercise-1 scaled variance: B4's own raw one), so they move with their source's
    # margin and stay out of the Bonferroni count.
    d = decision
    derived = [c for c in d.checks if c.basis == "derived"]
    assert {c.claim for c in derived} == {"B2", "B4", "B8"}
    assert d.n_statistical == sum(c.basis == "statistical" for c in d.checks)
    for claim, k in d.ks.items():  # each claim's k: its own share over its own statistical checks
        own = [c for c in d.checks if c.claim == claim and c.basis == "statistical"]
        assert k == pytest.approx(C.bonferroni_k(len(own), C.registry()[claim].alpha)) and {c.k for c in own} == {k}
    sources = {f"{c.claim} {c.check} [{c.parameters}]": c for c in d.checks if c.basis == "statistical"}
    for c in derived:
        source = sources[c.note.removeprefix("derived from ").split(": the same evidence")[0]]
        assert c.k == source.k and c.of_claim == source.claim  # the same evidence, its source's k
        assert c.margin == pytest.approx(source.margin, rel=1e-9, abs=1e-12)
        assert c.tolerance / c.se == pytest.approx(source.tolerance / source.se)


def test_variance_shape_matches_simulation():
    # the skewness and kurtosis the Cornish-Fisher tolerance of a sample variance uses (at n = 1: of S^2 itself)
    from sdpa_lab.claims.standard_errors import variance_excess_kurtosis, variance_skewness

    rng = np.random.default_rng(5)
    for d in (1, 4):
        s2 = np.einsum("nd,nd->n", rng.standard_normal((2_000_000, d)), rng.standard_normal((2_000_000, d))) ** 2
        z = (s2 - s2.mean()) / s2.std()
        assert np.mean(z**3) == pytest.approx(variance_skewness(d, 1), rel=0.05)
        assert np.mean(z**4) - 3 == pytest.approx(variance_excess_kurtosis(d, 1), rel=0.25)


def test_cornish_fisher_tolerance_keeps_the_tail_rate_of_a_small_sample_variance():
    # At n = 100 (ten times fewer scores than the schema allows, so the skew is sqrt(10) times larger) the
    # normal k puts several times the nominal rate in the upper tail; the Cornish-Fisher k' does not.
    # (Slower runs at n = 1000, d = 2, 100,000 repetitions: upper tail at nominal 1e-4: normal 4.2e-4,
    # Cornish-Fisher 0.5e-4; at n = 100, d = 1, 2, 4, nominal 1e-4: normal 1.2e-3 to 3.0e-3, CF 0.7e-4 to 1.4e-4.)
    from statistics import NormalDist

    from sdpa_lab.claims.standard_errors import cornish_fisher, variance_excess_kurtosis, variance_skewness

    d, n, reps = 2, 100, 200_000
    rng = np.random.default_rng(11)
    z = np.concatenate([
        (np.einsum("rnd,rnd->rn", rng.standard_normal((m, n, d)), rng.standard_normal((m, n, d))).var(axis=1) - d)
        / C.variance_se(d, n) for m in [20_000] * (reps // 20_000)])
    k = NormalDist().inv_cdf(1 - 1e-3)  # a per-tail rate that 200,000 repetitions can measure
    k_cf = cornish_fisher(k, variance_skewness(d, n), variance_excess_kurtosis(d, n))
    assert np.mean(z > k) > 4e-3  # the normal tolerance: more than four times the nominal 1e-3
    assert 0.5e-3 < np.mean(z > k_cf) < 1.5e-3
    assert np.mean(z < -k_cf) < 1.5e-3
    assert cornish_fisher(k) == k


@WHOLE_RUN
def test_entropy_exponent_is_reported_with_its_interval_and_not_decided(decision):
    assert not [c for c in decision.checks if c.check.startswith("power-law exponent")]
    (c,) = [c for c in decision.checks if c.check == "fall of mean unscaled entropy" and "fitted exponent" in c.note]
    assert c.note.startswith("power law not decided (theory gives its exponent, -1/2, only as d_k -> infinity)")
    assert "95% interval" in c.note


@WHOLE_RUN
def test_b10_says_when_its_runs_are_too_few_to_decide(results_dir):
    tables = load_tables(results_dir)
    from sdpa_lab.claims.learning import PREMISES

    d = C.decide(Results("mem", tables), claims=[C.registry()["B10"]], k=4.8)
    assert [c.check.split(" (")[0] for c in d.checks if c.check not in PREMISES] == [
        "slope of scaled minus unscaled success fraction vs log d_k over the wide heads",
        "scaled minus unscaled success fraction at the widest head"]  # beside its premises, decided without an SE
    assert not any("cannot be decided" in c.note for c in d.checks)  # 64 runs: every check can go either way
    few = dict(tables)
    few["learning.csv"] = tables["learning.csv"].assign(runs=5)
    d = C.decide(Results("mem", few), claims=[C.registry()["B10"]], k=4.8)
    assert all("cannot be decided at this sample size" in c.note for c in d.checks if c.check.startswith("slope"))


def test_b7_says_the_premise_is_not_met_where_the_unscaled_jacobian_norm_first_rises():
    # d_k 1 -> 2 at T = 16: the mean unscaled Jacobian norm rises (softmax not yet saturated): the lesson's sentence,
    # about a saturated softmax, does not speak there; B7 holds the step to theory's value, "condition not met" where
    # it agrees, counted neither for nor against (the claim holds on its other checks), and decides the ratio only
    # where the norm falls
    from sdpa_lab.experiments.gradient import gradient_rows

    table = pd.DataFrame(gradient_rows(5, [1, 2, 256], 16, 20000))
    d = C.decide(Results("mem", {"gradient.csv": table}), claims=[C.registry()["B7"]], k=4.8)
    first = [c for c in d.checks if c.parameters == "d_k=1->2, T=16"]
    assert {c.verdict for c in d.checks if c not in first} == {C.HOLDS}
    assert {c.verdict for c in first} == {C.CONDITION_NOT_MET} and C.claim_verdict(d.checks) == C.HOLDS
    assert {c.relation for c in first} == {"within"} and all("not yet saturated" in c.note for c in first)
    assert [c.parameters for c in d.checks if c.check.startswith("fall of unscaled / scaled")] == ["d_k=2->256, T=16"]


def test_paired_standard_errors_match_simulation():
    from sdpa_lab.claims.standard_errors import paired_proportion_se, paired_ratio_se

    rng = np.random.default_rng(3)
    n, reps = 400, 4000
    # two positively correlated positive quantities on the same trials
    z = rng.standard_normal((reps, n))
    a = np.exp(0.5 * z + 0.3 * rng.standard_normal((reps, n)))
    b = 2.0 + z + 0.5 * rng.standard_normal((reps, n)) + 3.0
    ratios = a.mean(axis=1) / b.mean(axis=1)
    se = np.mean([paired_ratio_se(x.mean(), y.mean(), x.std(ddof=1), y.std(ddof=1), (x - y).std(ddof=1), n)
                  for x, y in zip(a[:200], b[:200], strict=True)])
    assert se == pytest.approx(ratios.std(), rel=0.08)
    # paired successes: a succeeds with b most of the time
    u = rng.random((reps, n))
    sa, sb = u < 0.6, u < 0.5
    flip = rng.random((reps, n)) < 0.1
    sb = sb ^ flip
    diffs = sa.mean(axis=1) - sb.mean(axis=1)
    ses = [paired_proportion_se(int((x & ~y).sum()), int((~x & y).sum()), n) for x, y in zip(sa, sb, strict=True)]
    assert np.mean(ses) == pytest.approx(diffs.std(), rel=0.08)
