"""sdpa_lab.previous: the previous version of an output a failed run removed, set aside under <path>.previous,
and the temporaries of a killed writer swept."""

from __future__ import annotations

import os
from pathlib import Path

from sdpa_lab.previous import aside_name, settle, snapshot, sweep_temporaries


def test_snapshot_and_settle(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = Path("store")
    Path("results").mkdir()
    Path("results/a.csv").write_text("old a\n")
    Path("results/b.csv").write_text("old b\n")
    os.utime("results/a.csv", ns=(10**18, 10**18))
    assert snapshot(["results/a.csv", "results/b.csv", "results/missing.csv"], store) == [
        "results/a.csv", "results/b.csv"]
    Path("results/a.csv").unlink()  # what Snakemake does before (re)running a job
    Path("results/b.csv").unlink()
    Path("results/b.csv").write_text("new b\n")  # b was rebuilt, a was not
    assert settle(["results/a.csv", "results/b.csv"], store) == ["results/a.csv"]
    assert aside_name("results/a.csv") == Path("results/a.csv.previous")
    assert Path("results/a.csv.previous").read_text() == "old a\n"
    assert Path("results/a.csv.previous").stat().st_mtime_ns == 10**18
    assert not Path("results/b.csv.previous").exists() and Path("results/b.csv").read_text() == "new b\n"
    assert not any(p.is_file() for p in store.rglob("*"))
    Path("results/a.csv").write_text("new a\n")  # the next successful run rebuilds a
    assert settle(["results/a.csv", "results/b.csv"], store) == []
    assert not Path("results/a.csv.previous").exists()


def test_sweep_removes_only_a_killed_writers_temporaries(tmp_path):
    (tmp_path / "x.csv").write_text("done\n")
    (tmp_path / ".x.csv.k2j3.tmp").write_text("half")
    (tmp_path / ".y.csv.abcd.tmp").write_text("not ours")
    assert sweep_temporaries([tmp_path / "x.csv", tmp_path / "gone" / "z.csv"]) == [str(tmp_path / ".x.csv.k2j3.tmp")]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".y.csv.abcd.tmp", "x.csv"]


def test_snapshot_survives_a_kill_until_settled(tmp_path, monkeypatch):
    """A run killed without hooks leaves its snapshot; the next run's snapshot keeps it, then settles it."""
    monkeypatch.chdir(tmp_path)
    store = Path("store")
    Path("r").mkdir()
    Path("r/x.csv").write_text("old\n")
    snapshot(["r/x.csv"], store)
    Path("r/x.csv").unlink()  # removed, then the run was killed (no settle)
    assert snapshot(["r/x.csv"], store) == []  # next run: nothing to link, the old snapshot stays
    assert settle(["r/x.csv"], store) == ["r/x.csv"]
    assert Path("r/x.csv.previous").read_text() == "old\n"
