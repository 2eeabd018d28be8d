"""A run of the tiny config by Snakemake, as a user makes it: every CSV, the figures and the report, the logs
and benchmark files, Snakemake's own report, and a learner's solutions file added to a finished run."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile

import pandas as pd

from sdpa_lab.experiments.registry import EXPERIMENTS, output_paths
from sdpa_lab.report import figures as F
from sdpa_lab.report.specs import FIGURE_JOBS

from tests.pipeline.conftest import copy_of, snakemake


def test_snakemake_builds_every_csv(tiny_run):
    work = tiny_run
    for name in EXPERIMENTS:
        for rel in output_paths(name).values():
            table = pd.read_csv(work / rel)
            assert len(table) > 0, rel
    variance = pd.read_csv(work / "results/variance.csv")
    assert sorted(variance.d_k.unique()) == [4, 64]
    assert (variance.n_pairs == 2000).all()
    lesson = pd.read_csv(work / "results/lesson_variance.csv").set_index(["d_k", "quantity"])["value"]
    assert round(lesson[256, "raw_variance"], 3) == 256.391  # the lesson's number, whatever the config
    for rule in ("variance", "lesson_forward"):
        assert (work / "logs" / f"{rule}.log").exists()
        assert (work / "logs" / "benchmarks" / f"{rule}.tsv").exists()
    # Byte-identical CSVs across --cores, folders, touched inputs and interruptions: test_robustness.py.


def test_snakemake_builds_figures_and_report_last_and_its_own_report(tiny_run, tmp_path):
    work = tiny_run
    html = work / "reports" / "report.html"
    for name in F.FIGURES:
        for fmt in F.FORMATS:
            assert (work / "reports" / "figures" / f"{name}.{fmt}").stat().st_size > 0, (name, fmt)
    root = work / "logs" / "benchmarks"
    assert all((root / f"{job}.tsv").is_file() for job in FIGURE_JOBS)
    benchmarks = sorted(root.rglob("*.tsv"))
    assert any(b.parent.name == "trial_scores" for b in benchmarks)
    assert all(b.stat().st_mtime <= html.stat().st_mtime for b in benchmarks if b.stem != "report")
    text = html.read_text(encoding="utf-8")
    for b in benchmarks:  # every other job's runtime is in the report, the trial draws' too
        if b.stem != "report":
            name = b.relative_to(root).with_suffix("").as_posix()
            assert f"<td>{name}</td>" in text, name
    logs = {job: (work / "logs" / f"{job}.log").read_text() for job in FIGURE_JOBS}
    for name in F.FIGURES:  # each figure drawn by exactly one job, with the run's k where it draws intervals
        assert sum(f"figure {name} (k = " in log for log in logs.values()) == 1, name
    assert all(f"figure {name} (k = None)" in logs["figures_plain"] for name in FIGURE_JOBS["figures_plain"])
    assert not any("(k = None)" in line for line in logs["figures_intervals"].splitlines())
    assert all(log.count("figures: done in") == 1 for log in logs.values())
    assert "report: done in" in (work / "logs" / "report.log").read_text()
    zipped = tmp_path / "snakemake-report.zip"
    proc = snakemake(work, "--report", str(zipped))
    assert proc.returncode == 0 and zipped.stat().st_size > 0, proc.stderr[-3000:]
    with zipfile.ZipFile(zipped) as z:
        packed = z.read(next(n for n in z.namelist() if n.count("/") == 1 and n.endswith("/report.html"))).decode()
    for name, spec in F.FIGURES.items():  # every PNG with its own caption
        entry = packed.split(f'"reports/figures/{name}.png": {{', 1)[1]
        assert json.dumps(spec.caption_generic()[:25])[1:-1] in entry.split('"caption":', 1)[1][:200], name


def test_snakemake_with_a_bad_solutions_file_reruns_nothing_else_and_records_it(tiny_run, tmp_path):
    work = copy_of(tiny_run, tmp_path / "work")
    assert not (work / "results/solutions.csv").exists()
    before = {p.name: hashlib.sha256(p.read_bytes()).digest() for p in (work / "results").glob("*.csv")}
    (work / "s.py").write_text("def softmax(x, axis=-1)\n    return x\n")

    dry = snakemake(work, "--dry-run", "--config", "solutions=s.py")
    assert dry.returncode == 0, dry.stderr[-2000:]
    jobs = set(re.findall(r"^(?:local)?rule (\w+):", dry.stdout, re.M))
    assert jobs == {"solutions", "report", "all"}, jobs  # no experiment, no claim reruns

    proc = snakemake(work, "--config", "solutions=s.py")
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = (work / "results/solutions.csv").read_text()
    assert "unusable" in table and "line 1" in table and "SyntaxError" in table
    html = (work / "reports/report.html").read_text()
    assert 'id="your-solutions"' in html and "SyntaxError" in html
    after = {p.name: hashlib.sha256(p.read_bytes()).digest() for p in (work / "results").glob("*.csv")}
    assert {k: v for k, v in after.items() if k != "solutions.csv"} == before
