"""sdpa_lab.io: a CSV is written atomically, whole or not at all."""

from __future__ import annotations

import pandas as pd
import pytest

from sdpa_lab.io import write_csv


def test_write_csv_is_atomic_and_readable(tmp_path):
    target = tmp_path / "r" / "t.csv"
    write_csv(pd.DataFrame({"a": [1, 2]}), target)
    write_csv(pd.DataFrame({"a": [3]}), target)  # replaces the old file whole
    assert target.read_text() == "a\n3\n"
    assert target.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["t.csv"]  # no temporary file left

    class Boom(Exception):
        pass

    class Exploding(pd.DataFrame):
        def to_csv(self, *args, **kwargs):
            raise Boom

    with pytest.raises(Boom):
        write_csv(Exploding({"a": [9]}), target)
    assert target.read_text() == "a\n3\n"  # a failed write leaves the previous file as it was
    assert [p.name for p in target.parent.iterdir()] == ["t.csv"]
