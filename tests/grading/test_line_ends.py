"""Every line-end convention a learner's editor may save (LF, CRLF, a lone CR as old Macs wrote, any mix) is read
as Python reads it: the same code, the same places in the learner's cells, the same grade."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_lab.grading.grade import PASS, grade
from sdpa_lab.grading.source import prepare

REPO = Path(__file__).resolve().parents[2]
CORRECT = (REPO / "examples" / "solutions" / "correct.py").read_text()
ENDS = ("\n", "\r\n", "\r")
# a file of the learner's: a magic, their own top-level call (left out), a syntax error in a late cell
CELLS = ["%matplotlib inline\nimport numpy as np", CORRECT.split('"""', 2)[-1], "print(softmax(np.ones(3)))",
         "def broken(:\n    pass"]


def with_ends(text: str, ends: list[str]) -> str:
    """`text` with its i-th line end written ends[i % len(ends)] (but a CR that an LF would follow at once, which
    Python reads as one CRLF, the one line end it is, written CRLF itself: the lines stay the same)."""
    out = ""
    for i, line in enumerate(text.split("\n")[:-1]):
        end = ends[i % len(ends)]
        out += line + ("\r\n" if end == "\n" and out.endswith("\r") and not line else end)
    return out + text.split("\n")[-1]


def notebook_bytes(cells: list[str], ends: list[str]) -> bytes:
    """A notebook of `cells` whose code and whose JSON's own line ends are written with `ends`."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(with_ends(c, ends)) for c in cells]
    return with_ends(nbformat.writes(nb), ends).encode()


def python_reads(text: str) -> str:
    """The code as Python's compiler reads it, as a dump of its tree with every node's line."""
    return ast.dump(ast.parse(text), include_attributes=True)


def two(tmp_path_factory, name: str, lf: bytes, other: bytes):
    """The same file name in two folders, once with LF line ends and once with others, prepared."""
    prepared = []
    for data in (lf, other):
        path = tmp_path_factory.mktemp("ends") / name
        path.write_bytes(data)
        prepared.append(prepare(path))
    return prepared


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(ENDS), min_size=1, max_size=7))
def test_a_py_file_of_any_line_ends_is_the_code_python_reads(tmp_path_factory, ends):
    text = "\n\n".join(CELLS[:3])
    lf, mixed = two(tmp_path_factory, "mine.py", text.encode(), with_ends(text, ends).encode())
    assert (mixed.source, mixed.places, mixed.notes) == (lf.source, lf.places, lf.notes)
    # and Python itself reads the two files alike (the magic aside, which is not Python)
    plain = text.replace("%matplotlib inline", "pass")
    assert python_reads(with_ends(plain, ends)) == python_reads(plain)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(ENDS), min_size=1, max_size=7))
def test_a_notebook_of_any_line_ends_has_the_same_cells_places_and_stop(tmp_path_factory, ends):
    lf, mixed = two(tmp_path_factory, "mine.ipynb", notebook_bytes(CELLS, ["\n"]), notebook_bytes(CELLS, ends))
    assert (mixed.source, mixed.places, mixed.notes, mixed.stop) == (lf.source, lf.places, lf.notes, lf.stop)
    assert lf.stop.startswith("mine.ipynb, cell 4, line 1: SyntaxError")


def test_each_statement_of_a_lone_cr_file_is_named_at_the_line_python_gives_it(tmp_path):
    text = with_ends("\n\n".join(CELLS[:3]), ["\r"])
    (tmp_path / "mac.py").write_bytes(text.encode())
    p = prepare(tmp_path / "mac.py")
    sent = p.source.split("\n")
    for node in ast.parse(text.replace("%matplotlib inline", "pass")).body:
        assert p.where(node.lineno) == ("mac.py", node.lineno)
        assert sent[node.lineno - 1] in ("", "pass", text.split("\r")[node.lineno - 1])  # kept as is, or left out


def test_a_lone_cr_notebook_with_correct_code_passes_every_part(tmp_path):
    path = tmp_path / "mac.ipynb"
    path.write_bytes(notebook_bytes(CELLS[:3], ["\r"]))
    g = grade(path, isolation="none", n_samples=2000, time_limit=60, memory_mib=1024)
    assert g.exit_status == PASS, [p.verdict for p in g.parts]
