"""sdpa_lab.workflow_support.hooks: the start of a run sweeps the temporaries a killed writer left, and only those."""

from __future__ import annotations

from sdpa_lab.workflow_support.hooks import sweep_temporaries


def test_sweep_removes_only_a_killed_writers_temporaries(tmp_path):
    (tmp_path / "x.csv").write_text("done\n")
    (tmp_path / ".x.csv.k2j3.tmp").write_text("half")
    (tmp_path / ".y.csv.abcd.tmp").write_text("not ours")
    assert sweep_temporaries([tmp_path / "x.csv", tmp_path / "gone" / "z.csv"]) == [str(tmp_path / ".x.csv.k2j3.tmp")]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".y.csv.abcd.tmp", "x.csv"]
