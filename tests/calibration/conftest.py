"""Fixtures the calibration tests share."""

from __future__ import annotations

import pytest

from sdpa_lab.io import write_csv

from tests.conftest import lesson_tables


@pytest.fixture(scope="module")
def lesson_dir(tmp_path_factory):
    """The lesson replications' tables (the same in every run) written once, as the workflow gives them to a batch."""
    out = tmp_path_factory.mktemp("lesson")
    for name, table in lesson_tables().items():
        write_csv(table, out / name)
    return out
