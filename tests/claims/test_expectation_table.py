"""The expectations table: what the expectations job writes is read back as the very floats computed."""

from __future__ import annotations

import pandas as pd
import pytest

from sdpa_lab.claims.expectation_table import expectations_job, read_expectations, sweep_expectations
from sdpa_lab.claims.registry import CLAIMS, expectation_settings, expectation_sweep, expectations_asked
from sdpa_lab.expectation_inputs import EXPECTATION_SETTINGS


def test_the_expectations_table_reads_back_the_same_floats(tmp_path, tiny_config):
    path = tmp_path / "results" / "expectations.csv"
    expectations_job(tiny_config, path, str(tmp_path / "expectations.log"))
    back, computed = read_expectations(path), sweep_expectations(tiny_config)
    assert list(back) == expectations_asked(tiny_config)  # one row per expectation asked, in the order asked
    assert back == computed  # == on floats: exactly the same numbers
    assert all(type(v) is float for pair in back.values() for v in pair)
    assert all(type(d_k) is int and type(T) is int for _, _, d_k, T in back)
    assert pd.read_csv(path).columns.tolist() == ["kind", "statistic", "d_k", "T", "mean", "se"]
    assert f"{len(back)} expectations written" in (tmp_path / "expectations.log").read_text()


# ---- each claim's expectations, declared beside it, gathered by the registry ------------------------------------

@pytest.mark.house
def test_each_claims_expectations_are_made_from_the_settings_it_declares_alone(tiny_config):
    asking = [c for c in CLAIMS if c.expectations is not None]
    assert asking and all(bool(c.expectation_settings) == (c.expectations is not None) for c in CLAIMS)
    for claim in asking:
        declared = {section: {key: tiny_config[section][key] for key in keys}
                    for section, keys in claim.expectation_settings.items()}
        assert claim.expectations(declared) == claim.expectations(tiny_config), claim.id  # a KeyError: undeclared
    assert expectations_asked(tiny_config) == [key for c in asking for key in c.expectations(tiny_config)]


@pytest.mark.house
def test_the_settings_the_workflow_reruns_the_expectations_on_are_the_claims_declared_ones(tiny_config):
    # the expectations job's params: every setting a claim declares, gathered from the claims, no other
    declared = {(section, key) for c in CLAIMS for section, keys in c.expectation_settings.items() for key in keys}
    params = expectation_sweep(tiny_config)
    assert {(section, key) for section, keys in params.items() for key in keys} == declared
    assert all(params[section][key] == tiny_config[section][key] for section, key in declared)
    assert set(expectation_settings()) == {section for section, _ in declared}
    # what the Snakefile reads at parse time (no pandas there): the schema sections' marks, no more, no less
    assert EXPECTATION_SETTINGS == expectation_settings(), \
        "mark each section's settings the claims' expectations read in config.schema.yaml: x-expectations"
