"""The expectations table: what the expectations job writes is read back as the very floats computed."""

from __future__ import annotations

import pandas as pd

from sdpa_lab.claims.expectation_table import expectations_job, read_expectations, sweep_expectations
from sdpa_lab.claims.softmax_saturation import expectations_asked


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
