"""check() in a running Jupyter kernel (nbclient): the assignment notebook runs top to bottom as handed out, and on a
saved notebook check() gives the verdicts `sdpa-lab grade` gives on the file, for the correct example and every
mistake example."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbclient
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from sdpa_lab.grading.assignment import write_assignment
from sdpa_lab.grading.child import FUNCTIONS
from sdpa_lab.grading.grade import grade
from sdpa_lab.grading.limits import TIME_LIMIT

from tests.grading.notebooks import EXAMPLES, _chunks

pytestmark = pytest.mark.pipeline  # a kernel per notebook, and a grade per check: seconds each

KERNEL = "sdpa-lab-test"
SEED = 1234
N_SAMPLES = 2000  # Exercise 1's pairs: the same checks, a fraction of a second


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """A Jupyter kernel of this test's Python (the venv sdpa_lab is installed in), found through JUPYTER_PATH:
    nothing outside a temporary folder is written, and no other Python's kernel is picked up."""
    prefix = tmp_path_factory.mktemp("kernel")
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", str(prefix), "--name", KERNEL],
                   check=True, capture_output=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", ""))
        yield KERNEL


def execute(nb, folder, kernel: str):
    """The notebook run top to bottom in a fresh kernel (nbclient raises CellExecutionError where a cell raises)."""
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(folder)}})
    client.execute()
    return nb


def outputs(cell) -> tuple[str, str]:
    """(text/plain, text/html) of a code cell's displayed result."""
    data = next((o["data"] for o in cell.outputs if o.get("output_type") == "execute_result"), {})
    return data.get("text/plain", ""), data.get("text/html", "")


def test_the_assignment_notebook_runs_as_handed_out_and_every_check_says_not_written_yet(tmp_path, kernel):
    nb = execute(nbformat.read(write_assignment(tmp_path / "hw2.ipynb"), as_version=4), tmp_path, kernel)
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("check(")]
    assert len(checks) == len(FUNCTIONS) + 1
    for name, cell in zip(FUNCTIONS, checks, strict=False):
        text, page = outputs(cell)
        assert text.startswith(f"{name}(") and text.splitlines()[0].split(": ", 1)[1].startswith("not written yet")
        assert "not written yet" in page
    text, _ = outputs(checks[-1])
    assert text.startswith("0 of 5 pass") and text.count("not written yet (0 of") == len(FUNCTIONS)


EXAMPLE_FILES = sorted(EXAMPLES.glob("*.py"))


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_check_in_the_kernel_gives_the_verdicts_grade_gives_on_the_saved_notebook(tmp_path, kernel, example):
    cells = [new_code_cell(c) for c in _chunks(example.read_text())]
    cells += [new_code_cell("from sdpa_lab.grading import check"),
              new_code_cell(f"r = check(seed={SEED}, n_samples={N_SAMPLES})\nr"),
              new_code_cell("import json\nprint(json.dumps(r.verdicts))")]
    path = tmp_path / f"{example.stem}.ipynb"
    nb = execute(new_notebook(cells=cells), tmp_path, kernel)
    nbformat.write(nb, path)  # saved, as a learner's notebook is

    in_kernel = json.loads(nb.cells[-1].outputs[0]["text"])
    on_file = grade(path, seed=SEED, n_samples=N_SAMPLES, time_limit=TIME_LIMIT)
    assert in_kernel == {p.name: p.verdict for p in on_file.parts}
    if example.stem == "correct":
        assert set(in_kernel.values()) == {"pass"}
    text, page = outputs(nb.cells[-2])
    assert text.splitlines()[0].startswith(f"{sum(p.passed for p in on_file.parts)} of 5 pass")
    assert all(p.verdict in text for p in on_file.parts) and 'class="sdpa-lab-check"' in page


def test_a_hang_a_crash_and_a_memory_blow_up_are_reported_and_the_kernel_lives_on(tmp_path, kernel):
    cells = [new_code_cell(c) for c in _chunks((EXAMPLES / "correct.py").read_text())]
    cells += [new_code_cell("def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):\n    while True:\n        pass"),
              new_code_cell("import os\n\n\ndef scaled_dot_product_attention(Q, K, V):\n    os.abort()"),
              new_code_cell("def exercise_1(seed=42, n_samples=100_000, d_k=1024):\n"
                            "    return np.ones(2**40), 1.0"),
              new_code_cell("from sdpa_lab.grading import check\n"
                            f"r = check(seed={SEED}, n_samples={N_SAMPLES}, time_limit=5, memory_mib=1024)\nr"),
              new_code_cell("import json\nprint(json.dumps(r.verdicts))")]
    nb = execute(new_notebook(cells=cells), tmp_path, kernel)
    assert json.loads(nb.cells[-1].outputs[0]["text"]) == {  # the kernel ran the cell after the check
        "softmax": "pass", "scaled_dot_product_attention": "crashes", "exercise_1": "runs out of memory",
        "exercise_2": "hangs", "exercise_3": "pass"}


def test_check_in_a_plain_python_script_grades_the_script_and_prints_text(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text((EXAMPLES / "correct.py").read_text() + "\n\nfrom sdpa_lab.grading import check\n\n"
                      f"print(check(seed={SEED}, n_samples={N_SAMPLES}))\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, check=True)
    assert run.stdout.startswith("5 of 5 pass, 10 of 10 points")
    assert "sdpa-lab grade mine.py" in run.stdout and "<" not in run.stdout
