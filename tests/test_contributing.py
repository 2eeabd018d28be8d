"""CONTRIBUTING.md's toy experiment as a maintainer copies it: its module parses and its rule passes the
formatter CI checks the workflow with, so following the guide literally needs no other edit."""

from __future__ import annotations

import ast
import math
import re
import subprocess
import sys
import types

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.house  # the house's invariants (docs/testing.md)

GUIDE = (REPO / "CONTRIBUTING.md").read_text()


def block(language: str, holding: str) -> str:
    """The guide's one ```language code block that holds `holding`."""
    (found,) = [b for b in re.findall(rf"```{language}\n(.*?)```", GUIDE, re.S) if holding in b]
    return found


def test_the_toy_rule_passes_snakefmt_as_ci_runs_it():
    pytest.importorskip("snakefmt")  # the dev extra, which CI installs
    rule = block("snakemake", "rule temperature:")
    proc = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "-"], input=rule, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_toy_module_runs_and_declares_itself(monkeypatch):
    """The guide's module, as written, is the whole of the experiment's Python: the registry gathers its
    declaration (after the schema's sections) and a job runs it by that declaration alone."""
    from sdpa_lab.config import experiment_sections
    from sdpa_lab.experiments.declaration import declared_in
    from sdpa_lab.experiments.registry import EXPERIMENTS, gather, package_modules
    from sdpa_lab.pipeline import run_declared

    source = block("python", "def temperature_tables(")
    ast.parse(source)
    toy = types.ModuleType("sdpa_lab.experiments.temperature")
    monkeypatch.setitem(sys.modules, toy.__name__, toy)  # where the declaration's function is imported from
    exec(compile(source, "temperature.py", "exec"), toy.__dict__)  # noqa: S102 (the guide's own code)
    gathered = gather([*package_modules(), toy], [*experiment_sections(), "temperature"])
    assert list(gathered) == [*EXPERIMENTS][:len(experiment_sections())] + ["temperature"] + [
        name for name, e in EXPERIMENTS.items() if e.section is None]
    experiment = declared_in(toy.__name__, "temperature")
    assert gathered["temperature"] is experiment and experiment.claims == ("X1",)
    settings = {"seed": 3, "temperatures": [0.5, 2.0], "T": 8, "trials": 50}
    tables = run_declared(experiment, settings)
    (table,) = tables.values()
    assert len(table) == toy.temperature_row_counts(settings)["table"] == 4
    assert list(table[0]) == list(experiment.outputs["table"].columns)
    mean = {row["temperature"]: row["value"] for row in table if row["statistic"] == "mean"}
    assert 0 < mean[0.5] < mean[2.0] < math.log(8)  # a hotter softmax spreads more, never past the uniform's


def test_the_toy_claim_is_declared_once_and_quotes_its_sentence_by_its_checks_name():
    """The guide's claim, run as written: its Claim makes checks whose names key the sentence they decide."""
    import math
    from itertools import pairwise

    import pandas as pd

    from sdpa_lab.claims import softmax_saturation
    from sdpa_lab.claims.model import Check, Claim, statistical
    from sdpa_lab.claims.registry import lesson_order
    from sdpa_lab.claims.standard_errors import ALPHA_CLAIM
    from sdpa_lab.results import Results

    names = {"ALPHA_CLAIM": ALPHA_CLAIM, "math": math, "pairwise": pairwise, "Check": Check, "Claim": Claim,
             "Results": Results,
             "statistical": statistical, **{c.id: c for c in softmax_saturation.CLAIMS}}
    exec(block("python", "X1 = Claim("), names)  # noqa: S102 (the guide's own code)
    x1 = names["X1"]
    table = pd.DataFrame([{"temperature": tau, "statistic": stat, "value": value}
                          for tau, mean in ((0.5, 1.0), (1.0, 1.5), (2.0, 1.9))
                          for stat, value in (("mean", mean), ("se", 0.01))])
    checks = x1.decide(Results("mem", {"temperature.csv": table}))
    assert [c.parameters for c in checks] == ["temperature=0.5->1", "temperature=1->2"]
    assert all(x1.sentence(c.check) == names["_SHARPNESS"] for c in checks)
    assert x1.page.startswith("docs/claims/") and x1.tolerance_reason
    assert x1.alpha == ALPHA_CLAIM  # its share of the run's false-fail budget: it makes statistical checks
    # the section's CLAIMS, X1 added, is all the registry reads: the claim takes its place after the lesson's
    assert names["CLAIMS"] == (*softmax_saturation.CLAIMS, x1)
    assert sorted(names["CLAIMS"], key=lesson_order)[-1] is x1


def test_the_attention_calls_run_as_written():
    """The guide's example of an experiment measuring the attention: its calls, run on the shipped attention."""
    import textwrap

    import numpy as np

    from sdpa_lab.attention import SHIPPED, softmax

    rng = np.random.default_rng(0)
    d_k, Q, K, V = 16, rng.standard_normal((3, 16)), rng.standard_normal((5, 16)), rng.standard_normal((5, 4))
    names = {"attention": SHIPPED, "d_k": d_k, "q": Q, "Q": Q, "K": K, "V": V, "g": rng.standard_normal((3, 5))}
    imports, _, function = block("python", "def scores_tables(").partition("\ndef scores_tables(")
    exec(imports, names)  # noqa: S102 (the guide's import line: it names what the snippet uses)
    assert names["SHIPPED"] is SHIPPED
    exec(textwrap.dedent(function.split("\n", 1)[1]), names)  # noqa: S102 (the body, the guide's own code)
    assert names["c"] == 0.25
    assert np.allclose(names["p"], softmax(Q @ K.T * 0.25)) and names["out"].shape == (3, 4)
    assert names["dz"].shape == (3, 5) and np.allclose(names["dz"].sum(-1), 0.0)  # J g sums to 0 across a row
