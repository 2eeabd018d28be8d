"""The grader's own preparation of a submission (sdpa_lab.grading.source.prepare: magics, syntax, what of the top-level
code runs) is linear in its size: the worst files built for each of its steps, at the size limit, take seconds.

Each file below makes one step do the most work per character: lines that look like magics but sit inside a string
or brackets (each once needed a tokenizing of everything since the last magic), statements that share lines, some
run and some left out (each once needed the whole source split again), thousands of left-out calls of the exercises
(each once compared with every other). At the size limit, each took past 120 s before; the bound here is generous
for a loaded machine.
"""

from __future__ import annotations

import time

import nbformat
import pytest

from sdpa_lab.grading.files import MAX_FILE_BYTES, read_bytes
from sdpa_lab.grading.source import MAX_CODE, prepare

SECONDS = 60  # a few seconds on an idle machine; the tests share two cores with other work
HEAD = ("import numpy as np\n\n\ndef softmax(x, axis=-1):\n"
        "    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)\n\n\n")


def at_the_limit(unit: str, head: str = HEAD, tail: str = "") -> str:
    """head, `unit` repeated, tail: as many characters of code as the grader reads."""
    return head + unit * ((MAX_CODE - len(head) - len(tail)) // len(unit)) + tail


WORST = {
    "magic-like lines in a string": at_the_limit("%s\n", HEAD + 'x = """\n', '"""\n'),
    "magic-like lines in a docstring": at_the_limit("!x\n", HEAD + '"""\n', '"""\n'),
    "magic-like lines in brackets": at_the_limit("!a,\n", HEAD + "x = [\n", "]\n"),
    "statements on one line, half left out": at_the_limit("import numpy as np;print(1);"),
    "lines of two statements, one left out": at_the_limit("import numpy as np; print(1)\n"),
    "left-out calls of an exercise": at_the_limit("exercise_1()\n"),
    "real magics": at_the_limit("%time f()\n"),
}


@pytest.mark.parametrize("what", list(WORST))
def test_the_worst_file_at_the_size_limit_is_prepared_in_seconds(tmp_path, what):
    path = tmp_path / "worst.py"
    path.write_text(WORST[what])
    assert MAX_CODE - 100 < len(WORST[what]) <= MAX_CODE
    start = time.monotonic()
    prepared = prepare(path)
    assert time.monotonic() - start < SECONDS
    assert prepared.stop or prepared.source.count("\n") == WORST[what].count("\n") + 1  # every line kept its number


def test_a_notebook_of_many_small_cells_at_the_size_limit_is_prepared_in_seconds(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(HEAD)] + [nbformat.v4.new_code_cell("%time f()") for _ in range(
        (MAX_CODE - len(HEAD)) // 10)]
    path = tmp_path / "cells.ipynb"
    nbformat.write(nb, path)
    start = time.monotonic()
    prepared = prepare(path)
    assert time.monotonic() - start < SECONDS
    assert prepared.where(len(prepared.places))[0].startswith(f"cells.ipynb, cell {len(nb.cells)}")


def test_a_file_past_the_size_limit_is_refused_before_it_is_read_whole(tmp_path):
    path = tmp_path / "huge.py"
    with path.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing written to the disk
    for follow in (True, False):
        with pytest.raises(ValueError, match="huge.py is larger than 32 MiB: not read"):
            read_bytes(path, follow_links=follow)
    code = tmp_path / "long.py"
    code.write_text("x = 1\n" * (MAX_CODE // 6 + 1))
    with pytest.raises(ValueError, match="more than 1,000,000 characters of code"):
        prepare(code)


@pytest.mark.parametrize(("code", "magics"), [
    ('"""\n%s\n!x\n"""\n%time f()', [5]),  # a string that opens a statement: its lines are the string's
    ('y = """a\nb"""\n%g', [3]),
    ("x = (\n%a\n)\n%b", [4]),  # brackets
    ("a = 1 + \\\n%c\n%d", [3]),  # a continued line
    ("def f():\n    %time x\n    return 1", [2]),  # in a block
    ("# c\n\n%e\n  \n!f", [3, 5]),
    ("if x:\n        y = 1\n    %time z\n%w", [3, 4]),  # an indent the tokenizer refuses: a fresh one goes on
])
def test_the_one_pass_finds_the_magics_at_a_statements_start_only(code, magics):
    from sdpa_lab.grading.source import Cell, strip_magics

    assert [line for line, _ in strip_magics(Cell("x.py", code)).notes] == magics
