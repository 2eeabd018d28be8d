"""What of a learner's file runs (sdpa_lab.grading.source) and what it may import (sdpa_lab.grading.modules):
decided on the grader's side, without running anything."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_lab.config import config_errors
from sdpa_lab.grading import modules
from sdpa_lab.grading.source import Cell, keep_needed, prepare, runs, strip_magics

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "solutions"


def cell(text: str) -> Cell:
    return strip_magics(Cell("x.ipynb, cell 1", text))


@pytest.mark.parametrize("line", ["%matplotlib inline", "!pip install numpy", "files = !ls", "t = %time f()",
                                  "a, b = %time g()", "np.sum?", "??np.sum", "%timeit softmax(x)", "!ls -l | head"])
def test_magic_and_shell_lines_become_pass_and_are_named(line):
    c = cell(f"import numpy as np\n{line}\nx = 1")
    assert c.text.split("\n") == ["import numpy as np", line[:len(line) - len(line.lstrip())] + "pass", "x = 1"]
    assert c.notes == [(2, line.strip())]
    ast.parse(c.text)


@pytest.mark.parametrize("magic", ["%%bash", "%%time", "%%capture out", "%%writefile a.py"])
def test_a_cell_magic_leaves_the_whole_cell_out(magic):
    c = cell(f"{magic}\nls -l\ndef softmax(x):\n    return x")
    assert c.text.strip() == "" and c.text.count("\n") == 3 and c.notes == [(0, magic.split()[0])]


def test_a_magic_in_an_indented_block_keeps_the_block_valid():
    c = cell("for d in [4, 16]:\n    %time f(d)\n    !echo $d\nprint(1)")
    assert c.text == "for d in [4, 16]:\n    pass\n    pass\nprint(1)" and len(c.notes) == 2


def test_lines_inside_strings_and_brackets_are_python_not_magics():
    code = 'doc = """\n%d items\n!important\n"""\ny = (1,\n     !2)\nz = [3,\n%4]\n'
    assert cell(code).text == code and cell(code).notes == []


def test_a_continued_magic_is_left_out_whole():
    c = cell("!pip install \\\n    numpy\nx = 1")
    assert c.text == "pass\n\nx = 1"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(EXAMPLES.glob("*.py"))), st.integers(0, 40))
def test_valid_python_is_never_touched(path, cut):
    """No magic line is valid Python: a file's code (or any prefix of its lines that parses) stays as written."""
    lines = path.read_text().split("\n")
    code = "\n".join(lines[:len(lines) - cut])
    try:
        ast.parse(code)
    except SyntaxError:
        return
    assert cell(code).text == code


def needed(code: str) -> list[bool]:
    return runs(ast.parse(code), code)


def test_only_definitions_and_what_the_functions_need_run():
    code = ("import numpy as np\n"
            "SCALE = 2.0\n"  # softmax reads it
            "raw, scaled = exercise_1()\n"  # a lesson-size call: binds nothing needed
            "def softmax(x, axis=-1):\n    e = np.exp(x * SCALE)\n    return e / e.sum(axis=axis, keepdims=True)\n"
            "print(softmax(np.ones(3)))\n"
            "plt.show()\n"
            "x = np.ones(3)\n"  # `x` is only softmax's own parameter, not a global it reads
            "def exercise_1(seed=42, n_samples=100_000, d_k=1024):\n    return helper(seed)\n"
            "BASE = 3\n"
            "def helper(seed):\n    return seed + BASE\n"  # needed through exercise_1
            "if __name__ == '__main__':\n    exercise_1()\n"
            "import pandas as pd\n"  # nothing graded reads it
            "from __future__ import annotations\n")  # (a syntax error at run time: here, only what runs is decided)
    assert needed(code) == [True, True, False, True, False, False, False, True, True, True, False, False, True]


def test_a_definitions_defaults_and_decorators_need_their_names():
    code = "D = (4, 16)\ndef plot(ds=D):\n    pass\nE = 1\nF = E + 1\ndef exercise_2(T=F):\n    return T\n"
    assert needed(code) == [True, True, True, True, True]


def test_a_left_out_statement_keeps_every_line_number():
    code = ("import numpy as np\nexercise_1()\nx = (1,\n     2)\ndef softmax(x):\n    return np.exp(x)\n"
            "exercise_1(); y = 2\n")
    tree = ast.parse(code)
    out, skipped = keep_needed(code, tree)
    assert out.split("\n") == ["import numpy as np", "", "", "", "def softmax(x):", "    return np.exp(x)", "", ""]
    assert skipped == [2, 3, 7]


def notebook(path: Path, cells: list[str], counts: list | None = None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# mine")]
    for i, text in enumerate(cells):
        c = nbformat.v4.new_code_cell(text)
        c.execution_count = counts[i] if counts else None
        nb.cells += [c, nbformat.v4.new_markdown_cell("next")]
    nbformat.write(nb, path)
    return path


def test_places_are_the_notebooks_cells_and_their_lines(tmp_path):
    p = prepare(notebook(tmp_path / "ann.ipynb", ["import numpy as np", "x = 1\n\ndef softmax(x):\n    return 1 / 0"],
                         counts=[3, 7]))
    assert p.where(5) == ("ann.ipynb, cell 2, In [7]", 4)
    assert p.relocate('File "ann.ipynb", line 5, in softmax\nZeroDivisionError') == \
        'File "ann.ipynb, cell 2, In [7]", line 4, in softmax\nZeroDivisionError'


def test_a_syntax_error_in_a_late_cell_stops_the_file_there(tmp_path):
    p = prepare(notebook(tmp_path / "bo.ipynb", ["def softmax(x):\n    return x", "y = 1\ndef f(:\n    pass",
                                                 "def exercise_3():\n    return 1"]))
    assert p.stop.splitlines()[0] == "bo.ipynb, cell 2, line 2: SyntaxError: invalid syntax"
    assert "def softmax" in p.source and "exercise_3" not in p.source


def test_a_byte_order_mark_and_windows_newlines_are_read(tmp_path):
    path = tmp_path / "win.py"
    path.write_bytes(b"\xef\xbb\xbfimport numpy as np\r\ndef softmax(x):\r\n    return np.exp(x)\r\n")
    p = prepare(path)
    assert p.source == "import numpy as np\ndef softmax(x):\n    return np.exp(x)\n\n" and not p.stop


def test_a_notebook_saved_with_a_byte_order_mark_is_read(tmp_path):
    path = notebook(tmp_path / "bom.ipynb", ["import numpy as np\ndef softmax(x):\n    return x"])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert "def softmax(x):" in prepare(path).source


def test_a_missing_module_is_named_with_the_setting_to_extend():
    text = "Traceback\nModuleNotFoundError: No module named 'pandas'\n"
    hinted = modules.missing_module_hint(text, ("numpy", "matplotlib"))
    assert "No module named 'pandas' (the grader gives" in hinted and "grading_modules" in hinted
    assert modules.missing_module_hint("ModuleNotFoundError: No module named 'numpy.x'", ("numpy",)).endswith("x'")


def test_the_course_modules_are_their_distributions_files_and_nothing_of_the_project():
    entries = modules.site_entries(modules.COURSE_MODULES)
    names = {e.name for e in entries}
    assert {"numpy", "matplotlib", "PIL", "kiwisolver", "pyparsing"} <= names  # matplotlib's requirements, traced
    assert not any(n.startswith(("sdpa_lab", "__editable__", "pandas", "snakemake")) for n in names)
    assert all(e.parent.name in ("site-packages", "dist-packages") for e in entries)
    assert len(names) < len(list(entries[0].parent.iterdir())) / 2  # never the whole site-packages


@pytest.mark.parametrize("bad, why", [(["sdpa_lab"], "the project itself"), (["no_such_module_x"], "not installed"),
                                      (["os; rm -rf /"], "not a top-level module's name"), ("numpy", "a list")])
def test_a_bad_module_list_is_refused_naming_the_setting(bad, why):
    with pytest.raises(modules.ModulesError, match=f"grading_modules.*{why}"):
        modules.site_entries(tuple(bad) if isinstance(bad, list) else bad)


def test_the_config_names_a_bad_module_or_too_little_memory(tiny_config):
    assert config_errors({**tiny_config, "grading_modules": ["numpy", "pandas"]}) == []
    assert any("grading_modules" in e and "not installed" in e
               for e in config_errors({**tiny_config, "grading_modules": ["no_such_module_x"]}))
    assert any("grading_modules" in e for e in config_errors({**tiny_config, "grading_modules": ["a.b"]}))
    assert any("grading_memory_mib" in e for e in config_errors({**tiny_config, "grading_memory_mib": 300}))
    assert config_errors({**tiny_config, "grading_memory_mib": 300, "grading_n_samples": 2000}) == []


def test_the_plain_process_sees_only_the_course_modules(tmp_path):
    site = modules.linked_site(tmp_path / "site", ("numpy",))
    assert {p.name for p in site.iterdir()} >= {"numpy"} and "matplotlib" not in {p.name for p in site.iterdir()}
    assert all(p.is_symlink() and p.resolve().exists() for p in site.iterdir())


def test_sdpa_lab_grade_refuses_a_bad_module_name_before_any_work(tmp_path, capsys):
    from sdpa_lab.cli import main

    path = tmp_path / "s.py"
    path.write_text("import numpy as np\n")
    assert main(["grade", str(path), "--module", "os; rm"]) == 2
    assert "--module: 'os; rm' is not a top-level module's name" in capsys.readouterr().err


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=6))
def test_every_line_sent_is_found_in_its_cell_at_the_place_given(tmp_path_factory, cuts):
    """A notebook of any split of a file into cells: each non-blank line of the source sent is the line `where`
    names, in the cell it names (counted among the code cells, markdown cells between them); a split inside a
    function stops the file at that cell, and the cells before it are checked."""
    lines = (EXAMPLES / "correct.py").read_text().split("\n")
    bounds = sorted({0, *(c for c in cuts if c < len(lines)), len(lines)})
    cells = ["\n".join(lines[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    path = notebook(tmp_path_factory.mktemp("nb") / "cut.ipynb", cells, counts=list(range(10, 10 + len(cells))))
    p = prepare(path)
    for n, line in enumerate(p.source.split("\n"), 1):
        if line.strip():
            label, k = p.where(n)
            index = int(label.split("cell ")[1].split(",")[0]) - 1
            assert label == f"cut.ipynb, cell {index + 1}, In [{10 + index}]"
            assert cells[index].split("\n")[k - 1] == line

