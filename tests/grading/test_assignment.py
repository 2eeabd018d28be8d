"""The assignment notebook (`sdpa-lab new-assignment`), check() outside a kernel, its display, and what the grader
tells a learner whose file defines none of the functions it calls."""

from __future__ import annotations

import ast
import dataclasses
import html
import textwrap

import nbformat
import pytest

from sdpa_lab.cli import main
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading.assignment import YOUR_CODE, build, signatures, skeleton_functions
from sdpa_lab.grading.check_result import CheckResult, in_kernel_terms
from sdpa_lab.grading.child import FUNCTIONS
from sdpa_lab.grading.grade import UNUSABLE, format_grade, grade
from sdpa_lab.grading.lesson_words import TASKS
from sdpa_lab.grading.notebook_check import check, ran
from sdpa_lab.grading.skeleton import SKELETON

N_SAMPLES = 2000  # Exercise 1's pairs in these tests: the same checks, a fraction of a second


def _code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def test_new_assignment_writes_a_valid_notebook_and_never_overwrites(tmp_path, capsys):
    path = tmp_path / "hw2.ipynb"
    assert main(["new-assignment", str(path)]) == 0
    nbformat.validate(nbformat.read(path, as_version=4))
    before = path.read_bytes()
    assert main(["new-assignment", str(path)]) == 2
    assert "exists; not overwriting it" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_the_notebook_follows_the_lesson_with_the_skeletons_functions_and_a_check_under_each():
    nb = build("hw2.ipynb")
    code = _code(nb)
    defined = [node.name for c in code for node in ast.parse(c).body if isinstance(node, ast.FunctionDef)]
    assert defined == list(FUNCTIONS)  # the lesson's order, the grader's functions
    skeleton = {n.name: n for n in ast.parse(SKELETON.format(name="x")).body if isinstance(n, ast.FunctionDef)}
    for name in FUNCTIONS:
        cell = next(c for c in code if c.startswith(f"def {name}("))
        node = ast.parse(cell).body[0]
        assert ast.dump(node.args) == ast.dump(skeleton[name].args)  # the signature the grader calls
        assert YOUR_CODE in cell and cell.rstrip().endswith("raise NotImplementedError")
        assert code[code.index(cell) + 1] == f'check("{name}")'  # its check right under it
    assert code[-1] == "check()"
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for task in TASKS:  # quoted, with where it comes from
        assert f"> {task.words}" in markdown and f"section “{task.section}”" in markdown


def test_signatures_are_the_skeletons_def_lines():
    assert signatures()["softmax"] == "def softmax(x, axis=-1):"
    assert list(signatures()) == list(skeleton_functions()) == list(FUNCTIONS)


def test_a_file_of_top_level_code_is_told_each_function_expected_and_where_to_start(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np
        np.random.seed(42)
        Q = np.random.randn(1000, 1024)
        K = np.random.randn(1000, 1024)
        scores = np.sum(Q * K, axis=1)
        print(scores.var(), (scores / np.sqrt(1024)).var())
        """))
    g = grade(path, time_limit=30, n_samples=N_SAMPLES)
    assert g.exit_status == UNUSABLE
    text = format_grade(g)
    for line in signatures().values():
        assert line in text
    assert "sdpa-lab new-assignment" in text and "top level" in text


def test_a_function_the_file_lacks_names_the_signature_the_grader_calls(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("import numpy as np\n\n\ndef softmax(x, axis=-1):\n"
                    "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
                    "    return e / e.sum(axis=axis, keepdims=True)\n")
    g = grade(path, time_limit=30, n_samples=N_SAMPLES)
    lost = {p.name: p.lost for p in g.parts if p.lost is not None}
    assert set(lost) == set(FUNCTIONS) - {"softmax"}
    assert all(o.status == "missing" for o in lost.values())
    assert "`def scaled_dot_product_attention(Q, K, V):`" in lost["scaled_dot_product_attention"].message


def test_the_kernel_history_keeps_what_ran_and_defined_something():
    history = ["", "import numpy as np\nfrom sdpa_lab.grading import check", "def softmax(x):\n    return x",
               "def broken(:\n    pass", 'check("softmax")', "%matplotlib inline\nx = 1", "r = check()\nr", "   ",
               "x"]
    assert ran(history) == [(1, history[1]), (2, history[2]), (5, history[5]), (8, history[8])]


def test_places_in_the_cells_that_ran_are_shown_as_jupyter_shows_them():
    assert in_kernel_terms("an error (cell 3, In [7], line 2)") == "an error (In [7], line 2)"


def test_check_refuses_a_part_the_grader_does_not_check_in_one_line():
    with pytest.raises(ValueError, match="part must be one of softmax, .*got 'sofmax'"):
        check("sofmax")


def test_check_in_a_session_with_no_code_says_so_and_never_raises(monkeypatch):
    import sys
    import types

    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # an interactive python: no file
    monkeypatch.setattr("sdpa_lab.grading.notebook_check.kernel_history", lambda: None)
    r = check()
    assert not r.passed and "sdpa-lab grade FILE" in str(r) and "nothing to check" in r._repr_html_()


def test_the_display_puts_the_verdict_first_then_the_failing_checks_the_mistake_its_fix_and_what_to_reread(request):
    example = request.config.rootpath / "examples" / "solutions" / "no_scale.py"
    g = grade(example, time_limit=60, n_samples=N_SAMPLES, seed=11)
    attention = next(p for p in g.parts if p.name == "scaled_dot_product_attention")
    assert not attention.passed and "no_scale" in attention.mistakes
    r = CheckResult(g, "scaled_dot_product_attention", example.name)
    text, page = str(r), r._repr_html_()
    assert text.splitlines()[0].startswith(f"{attention.signature}: {attention.verdict} (")
    failing = [c for c in attention.checks if not c.passed]
    assert failing and all(c.what in text and html.escape(c.what) in page for c in failing)
    assert M.MISTAKES["no_scale"].fix in text and html.escape(M.MISTAKES["no_scale"].fix) in page
    assert M.MISTAKES["no_scale"].reread in text and html.escape(M.MISTAKES["no_scale"].reread) in page
    assert "softmax(x, axis=-1)" not in text  # one part asked for, one part shown
    assert r.verdicts == {"scaled_dot_product_attention": attention.verdict}
    whole = CheckResult(g, None, example.name)
    assert str(whole).splitlines()[0].startswith(f"{sum(p.passed for p in g.parts)} of 5 pass")


def test_a_failing_part_with_no_mistake_named_is_sent_to_its_task_in_the_lesson(request):
    path = request.config.rootpath / "examples" / "solutions" / "correct.py"
    g = grade(path, time_limit=60, n_samples=N_SAMPLES, seed=11)
    part = next(p for p in g.parts if p.name == "exercise_3")
    part.checks[0] = dataclasses.replace(part.checks[0], passed=False)  # as a check that failed with no diagnosis
    part.diagnosis, part.mistakes = [], []
    text = str(CheckResult(g, "exercise_3", path.name))
    assert f'Reread in the lesson: "{M.EXERCISE_3}".' in text
