"""A class's submissions: the folder's learners, notebooks graded like files, the gradebook, pages and overview."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from sdpa_lab.grading import classroom, record, sandbox
from sdpa_lab.grading.classroom import ClassError, submissions

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


def test_submissions_lists_py_and_ipynb_by_learner_and_grades_two_files_of_one_apart(tmp_path):
    for name in ("bob.py", "alice.ipynb", "notes.txt", ".hidden.py"):
        (tmp_path / name).write_text("")
    assert submissions(tmp_path) == {"alice": tmp_path / "alice.ipynb", "bob": tmp_path / "bob.py"}
    (tmp_path / "bob.ipynb").write_text("")
    found = submissions(tmp_path)
    assert sorted(found.values()) == sorted(tmp_path / n for n in ("alice.ipynb", "bob.ipynb", "bob.py"))
    assert found["alice"] == tmp_path / "alice.ipynb" and "bob" not in found  # each of bob's files has its own id
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
    assert record.error_line(traceback) == "ModuleNotFoundError: No module named 'sdpa_lab' (zoe.py, line 9)"
    assert record.error_line("ValueError: bad") == "ValueError: bad"
    assert record.error_line("  \n") == "an error"


def test_forged_replies_in_every_function_make_one_line_not_five():
    from types import SimpleNamespace as NS

    lost = [NS(lost=NS(message=f"unusable: the learner's process broke the grader's protocol while running {name}: "
                                "unknown status 'pass'")) for name in classroom.PARTS]
    g = NS(usable=True, load=NS(status="ready", message=""), forged=lost)
    assert record.unusable_reason(g) == ("unusable: the learner's process broke the grader's protocol while running "
                                            "softmax: unknown status 'pass' (and in 4 more functions)")
    g.forged = lost[:1]
    assert record.unusable_reason(g) == lost[0].lost.message


def test_the_config_accepts_a_class_and_its_grading_settings_and_names_a_bad_one(tiny_config):
    from sdpa_lab.config import config_errors

    good = {**tiny_config, "submissions": "class/", "grading_seed": 0, "grading_time_limit": 5,
            "grading_n_samples": 2000}
    assert config_errors(good) == []
    for key, value in (("grading_seed", -1), ("grading_seed", 2**32), ("grading_time_limit", 0),
                       ("grading_n_samples", 10**6), ("submissions", "")):
        errors = config_errors({**good, key: value})
        assert len(errors) == 1 and key in errors[0], (key, value, errors)
