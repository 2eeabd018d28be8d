"""A class written as learners write it in Jupyter (tests/grading/notebooks.py), graded in the sandbox as
`sdpa-lab grade` grades one file: every correct notebook passes whatever else it holds (magics, shell lines,
plots, lesson-size calls, a late error), errors name the cell, and one file gets one grade alone or in a class."""

from __future__ import annotations

import nbformat
import pytest

from sdpa_lab.grading import classroom, sandbox
from sdpa_lab.grading.grade import PASS, UNUSABLE, format_grade, grade

from tests.grading.notebooks import EXAMPLES, write_class

needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
CORRECT = (EXAMPLES / "correct.py").read_text()
SEED = 20260


@pytest.fixture(scope="module")
def learners(tmp_path_factory):
    return write_class(tmp_path_factory.mktemp("learners") / "class")


CORRECT_ONES = ("ada", "bao", "cyd", "dov", "eun", "fen", "gil", "hoa")


@needs_sandbox
@pytest.mark.parametrize("name", CORRECT_ONES)
def test_every_correct_notebook_passes_in_the_sandbox(learners, name):
    learner = learners[name]
    assert learner.correct
    g = grade(learner.path, seed=SEED, isolation="sandbox")
    assert g.isolation == "bubblewrap sandbox"
    assert g.exit_status == PASS and [p.passed for p in g.parts] == [True] * 5, format_grade(g)
    assert g.peak_mib < 1024  # the learner's own exercise_1() at 100,000 x 1024 (2.4 GB) did not run
    if learner.path.suffix == ".ipynb":
        assert any("`!pip install numpy`" in n and "IPython magics" in n for n in g.notes)
        assert any("`exercise_1()`" in n and "Top-level code not run" in n for n in g.notes)
    if learner.stop:
        stop = next(n for n in g.notes if learner.stop in n)
        assert f"{name}.ipynb, cell " in stop and ", line " in stop
        assert "grading_modules" in stop if learner.stop == "ModuleNotFoundError" else "cell 16, line 1" in stop


def notebook(path, cells: list[str]):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# mine")])
    for count, text in enumerate(cells, 1):
        nb.cells.append(nbformat.v4.new_code_cell(text, execution_count=count + 3))
    nbformat.write(nb, path)
    return path


@needs_sandbox
def test_an_error_in_a_call_names_the_cell_and_its_line(tmp_path):
    chunks = CORRECT.split("\n\n\n")
    broken = "def exercise_3(seed=42, d_k=256, T=8):\n    q = np.random.randn(d_k)\n    return undefined_name"
    path = notebook(tmp_path / "kim.ipynb", ["%matplotlib inline\nimport math\nimport numpy as np",
                                             *[c for c in chunks[1:] if "def exercise_3" not in c], broken])
    g = grade(path, seed=SEED, isolation="sandbox")
    error = g.parts[4].error
    n = len(chunks)  # the broken cell: the last of the notebook's code cells
    assert f'File "kim.ipynb, cell {n}, In [{n + 3}]", line 3, in exercise_3' in error, error
    assert "NameError" in error and "kim.ipynb\", line" not in error


@needs_sandbox
def test_a_syntax_error_before_any_function_is_unusable_in_the_cells_coordinates(tmp_path):
    path = notebook(tmp_path / "lu.ipynb", ["import numpy as np", "def softmax(x, axis=-1)\n    return x"])
    g = grade(path, seed=SEED, isolation="sandbox")
    assert g.exit_status == UNUSABLE and g.load.status == "syntax"
    assert g.load.message.startswith("lu.ipynb, cell 2, In [5], line 1: SyntaxError")
    assert "lu.ipynb, line" not in format_grade(g)


@needs_sandbox
@pytest.mark.parametrize("isolation", ["sandbox", "none"])
def test_a_module_outside_the_list_is_refused_naming_the_setting_and_the_list_extends(tmp_path, isolation):
    path = tmp_path / "mo.py"  # entropy (so exercise_2) reads pandas: its import runs
    path.write_text("import pandas as pd\n" + CORRECT.replace("def entropy(p):\n", "def entropy(p):\n    pd\n"))
    g = grade(path, seed=SEED, isolation=isolation)
    assert g.exit_status == UNUSABLE
    assert "No module named 'pandas'" in g.load.message and "grading_modules" in g.load.message
    extended = grade(path, seed=SEED, isolation=isolation, modules=("numpy", "matplotlib", "pandas"))
    assert extended.exit_status == PASS, format_grade(extended)


@needs_sandbox
def test_one_file_gets_one_grade_self_graded_and_in_a_class(learners):
    path = learners["bao"].path
    alone = grade(path, seed=SEED)  # `sdpa-lab grade`'s defaults
    record = classroom.grade_submission(path, "bao", seed=SEED)
    assert record["parts"] == classroom.grade_record(alone, "bao")["parts"]
    assert record["notes"] == alone.notes and record["exit_status"] == alone.exit_status == PASS
    assert (record["time_limit"], record["memory_mib"]) == (alone.time_limit, alone.memory_mib)
