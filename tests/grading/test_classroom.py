"""A class's submissions: the folder's learners, notebooks graded like files, the gradebook, pages and overview."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import nbformat
import pytest

from sdpa_lab.grading import classroom, sandbox
from sdpa_lab.grading.classroom import ClassError, gradebook_job, gradebook_rows, overview, submissions

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "solutions"
needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")


def notebook_of(source: str, path: Path) -> Path:
    """A notebook holding `source` as a markdown cell, a magic, and its functions as code cells."""
    nb = nbformat.v4.new_notebook()
    chunks = source.split("\n\n\n")
    nb.cells = [nbformat.v4.new_markdown_cell("# My solutions"), nbformat.v4.new_code_cell("%matplotlib inline")]
    nb.cells += [nbformat.v4.new_code_cell(chunk) for chunk in chunks]
    nbformat.write(nb, path)
    return path


def test_submissions_lists_py_and_ipynb_by_learner_and_refuses_ambiguity(tmp_path):
    for name in ("bob.py", "alice.ipynb", "notes.txt", ".hidden.py"):
        (tmp_path / name).write_text("")
    assert submissions(tmp_path) == {"alice": tmp_path / "alice.ipynb", "bob": tmp_path / "bob.py"}
    (tmp_path / "bob.ipynb").write_text("")
    with pytest.raises(ClassError, match="two files for learner bob"):
        submissions(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ClassError, match="no .py or .ipynb"):
        submissions(tmp_path / "empty")
    with pytest.raises(ClassError, match="not a folder"):
        submissions(tmp_path / "missing")


@needs_sandbox
def test_a_correct_notebook_and_the_same_py_get_the_same_grade(tmp_path):
    source = (EXAMPLES / "correct.py").read_text()
    py = tmp_path / "ann.py"
    py.write_text(source)
    nb = notebook_of(source, tmp_path / "ann.ipynb")
    a = classroom.grade_submission(py, "ann", seed=11, n_samples=2000)
    b = classroom.grade_submission(nb, "ann", seed=11, n_samples=2000)
    assert a["exit_status"] == 0 and a["passed"] == 5
    assert a["parts"] == b["parts"]
    assert (a["seed"], a["n_samples"]) == (11, 2000)  # what `sdpa-lab grade --seed --n-samples` needs to regrade


@needs_sandbox
def test_a_file_that_is_not_a_notebook_is_unusable_in_one_line(tmp_path):
    bad = tmp_path / "zed.ipynb"
    bad.write_text("{not json")
    record = classroom.grade_submission(bad, "zed", seed=1)
    assert record["exit_status"] == 2 and "not a readable Jupyter notebook" in record["unusable"]
    assert "\n" not in record["unusable"]


@needs_sandbox
def test_a_file_that_raises_at_import_is_unusable_with_its_error_and_line(tmp_path):
    path = tmp_path / "wen.py"
    # an assignment softmax needs runs at import, before softmax is defined
    path.write_text("import numpy as np\n\nSCALE = int('oops')\n\n\ndef softmax(x, axis=-1):\n    return x * SCALE\n")
    record = classroom.grade_submission(path, "wen", seed=1)
    assert record["exit_status"] == 2
    assert record["unusable"] == "ValueError: invalid literal for int() with base 10: 'oops' (wen.py, line 3)"


def test_a_traceback_in_one_line_is_its_error_and_the_deepest_place_in_the_learners_file():
    traceback = ('  File "zoe.py", line 3, in <module>\n    helper()\n  File "zoe.py", line 9, in helper\n'
                 '    import sdpa_lab\nModuleNotFoundError: No module named \'sdpa_lab\'\n')
    assert classroom.error_line(traceback) == "ModuleNotFoundError: No module named 'sdpa_lab' (zoe.py, line 9)"
    assert classroom.error_line("ValueError: bad") == "ValueError: bad"
    assert classroom.error_line("  \n") == "an error"


def test_forged_replies_in_every_function_make_one_line_not_five():
    from types import SimpleNamespace as NS

    lost = [NS(lost=NS(message=f"unusable: the learner's process broke the grader's protocol while running {name}: "
                                "unknown status 'pass'")) for name in classroom.PARTS]
    g = NS(usable=True, load=NS(status="ready", message=""), forged=lost)
    assert classroom.unusable_reason(g) == ("unusable: the learner's process broke the grader's protocol while running "
                                            "softmax: unknown status 'pass' (and in 4 more functions)")
    g.forged = lost[:1]
    assert classroom.unusable_reason(g) == lost[0].lost.message


def _record(learner, parts, exit_status=1, unusable=""):
    return {"learner": learner, "file": f"{learner}.py", "seed": 5, "n_samples": 2000, "exit_status": exit_status,
            "usable": exit_status != 2 or bool(parts), "unusable": unusable, "passed": sum(p["passed"] for p in parts),
            "parts": parts, "isolation": "bubblewrap sandbox", "time_limit": 20, "memory_mib": 1024,
            "load_message": unusable}


def _part(name, passed, mistakes=()):
    return {"name": name, "signature": f"{name}(...)", "verdict": "pass" if passed else "FAIL (1 of 1 checks)",
            "passed": passed, "lost": "", "checks": [{"claim": "B9", "what": "a check", "passed": passed,
                                                     "detail": "measured"}],
            "notes": [], "error": "", "diagnosis": [], "mistakes": list(mistakes), "reread": []}


RECORDS = [
    _record("ann", [_part(n, True) for n in classroom.PARTS], exit_status=0),
    _record("ben", [_part(n, n != "scaled_dot_product_attention", ["no_scale"] if n.startswith("scaled") else [])
                    for n in classroom.PARTS]),
    _record("cat", [_part(n, n == "softmax", ["no_scale"] if n.startswith("scaled") else [])
                    for n in classroom.PARTS]),
    _record("dan", [], exit_status=2, unusable="dan.py, line 1: SyntaxError: '(' was never closed"),
]


def test_the_gradebook_has_a_row_per_learner_and_check_and_one_with_the_totals():
    rows = gradebook_rows(RECORDS)
    assert all(tuple(r) == classroom.COLUMNS for r in rows)
    totals = {r["learner"]: r for r in rows if r["part"] == "total"}
    assert {k: v["verdict"] for k, v in totals.items()} == {"ann": "5 of 5 pass", "ben": "4 of 5 pass",
                                                          "cat": "1 of 5 pass", "dan": "unusable"}
    assert all(r["seed"] == 5 for r in rows)  # each row carries the seed that reproduces it
    assert "SyntaxError" in totals["dan"]["detail"]
    assert len([r for r in rows if r["learner"] == "ben" and r["item"] == "a check"]) == 5


def test_the_overview_counts_pass_rates_mistakes_and_unusable_files():
    o = overview(RECORDS)
    assert o["n"] == 4 and o["all_pass"] == 1
    rates = {r["part"]: (r["passed"], r["of"]) for r in o["rates"]}
    assert rates["softmax"] == (3, 3) and rates["scaled_dot_product_attention"] == (1, 3)
    assert rates["exercise_1"] == (2, 3)
    assert o["mistakes"][0]["key"] == "no_scale" and o["mistakes"][0]["learners"] == 2
    assert o["unusable"] == [{"learner": "dan", "file": "dan.py", "why": RECORDS[3]["unusable"]}]


def test_gradebook_job_writes_the_csv_and_a_self_contained_page_per_learner(tmp_path):
    paths = []
    for r in RECORDS:
        paths.append(tmp_path / f"{r['learner']}.json")
        paths[-1].write_text(json.dumps(r))
    gradebook_job([str(p) for p in paths], str(tmp_path / "gradebook.csv"), str(tmp_path / "pages"))
    table = list(csv.DictReader(io.StringIO((tmp_path / "gradebook.csv").read_text())))
    assert {r["learner"] for r in table} == {"ann", "ben", "cat", "dan"}
    pages = {p.stem: p.read_text() for p in (tmp_path / "pages").glob("*.html")}
    assert set(pages) == {"ann", "ben", "cat", "dan"}
    for page in pages.values():
        assert "<style>" in page and 'src="http' not in page and "<link" not in page  # nothing fetched
    assert "could not be graded" in pages["dan"] and "SyntaxError" in pages["dan"]
    assert "4 of 5 pass" in pages["ben"] and "--seed 5 --n-samples 2000" in pages["ben"]


def test_the_report_adds_the_class_overview_and_nothing_else(tmp_path):
    from sdpa_lab import claims as C
    from sdpa_lab.report import html as H
    from sdpa_lab.report import provenance as P

    decision = C.Decision((), float("nan"), 0)
    prov = P.provenance({"seed": 1}, [], tmp_path)
    without = H.render_report(decision, {}, prov)
    with_class = H.render_report(decision, {}, prov, class_overview=overview(RECORDS))
    assert 'id="class"' not in without and 'id="class"' in with_class
    assert "dan.py" in with_class and "no scale" in with_class.lower()


def test_the_config_accepts_a_class_and_its_grading_settings_and_names_a_bad_one(tiny_config):
    from sdpa_lab.config import config_errors

    good = {**tiny_config, "submissions": "class/", "grading_seed": 0, "grading_time_limit": 5,
            "grading_n_samples": 2000}
    assert config_errors(good) == []
    for key, value in (("grading_seed", -1), ("grading_seed", 2**32), ("grading_time_limit", 0),
                       ("grading_n_samples", 10**6), ("submissions", "")):
        errors = config_errors({**good, key: value})
        assert len(errors) == 1 and key in errors[0], (key, value, errors)
