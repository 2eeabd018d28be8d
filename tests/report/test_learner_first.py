"""The learner first: with `solutions`, their section comes right after the summary, before the claims, and names
the graded file and the command that grades it again with the seed the grade used."""

from __future__ import annotations

import pandas as pd

from sdpa_lab.io import write_csv
from sdpa_lab.report import html as H

from tests.report.conftest import REPORT_CONFIG
from tests.report.test_html import section

ROWS = [{"part": "softmax", "item": "verdict", "claim": "", "verdict": "pass", "detail": ""},
        {"part": "softmax", "item": "sums to 1", "claim": "B9", "verdict": "ok", "detail": "8e-08"},
        {"part": "exercise_1", "item": "verdict", "claim": "", "verdict": "FAIL (1 of 2 checks)", "detail": ""},
        {"part": "exercise_1", "item": "the lesson's seed 42, d_k = 1024: raw variance near d_k", "claim": "B4",
         "verdict": "ok", "detail": "1,036"},
        {"part": "exercise_1", "item": "seed 4184748091, d_k = 64: raw variance near d_k", "claim": "B4",
         "verdict": "FAIL", "detail": "3.9"}]


def build(run_dir, tmp_path, **config) -> str:
    csv_path = tmp_path / "solutions.csv"
    write_csv(pd.DataFrame(ROWS), csv_path)
    out = tmp_path / "report.html"
    H.build_report(run_dir / "results", run_dir / "reports" / "figures", {**REPORT_CONFIG, **config}, out,
                   repo_dir=run_dir, solutions=csv_path)
    return out.read_text(encoding="utf-8")


def test_the_learners_section_follows_the_summary_and_names_file_and_command(run_dir, tmp_path):
    html = build(run_dir, tmp_path, solutions="my/solutions.py")
    summary_end = html.index("</section>", html.index('id="summary"'))
    assert summary_end < html.index('id="your-solutions"') < html.index('id="A1"')
    yours = section(html, "your-solutions")
    assert "Graded file: <code>my/solutions.py</code>" in yours
    assert "<code class=\"command\">sdpa-lab grade my/solutions.py --seed 4184748091</code>" in yours


def test_the_command_carries_the_configs_grading_seed(run_dir, tmp_path):
    html = build(run_dir, tmp_path, solutions="s.py", grading_seed=7)
    assert "sdpa-lab grade s.py --seed 7</code>" in section(html, "your-solutions")


def test_the_seed_is_read_from_the_grades_own_checks():
    parts = [{"checks": [{"what": "the lesson's seed 42, d_k = 4: x"}]}, {"checks": [{"what": "seed 91, T = 8: y"}]}]
    assert H.graded_seed(parts) == 91 and H.graded_seed([{"checks": []}]) is None
    assert H.regrade_command("f.py", None) == "sdpa-lab grade f.py"
