"""A class of submissions written the way learners write them in Jupyter, for the grading tests.

`write_class(folder)` writes about twenty files (nbformat notebooks, and a .py saved on Windows
with a byte-order mark) and returns {learner: Learner}. Each notebook holds what a learner's
notebook holds: markdown cells, execution counts, `%matplotlib inline`, `!pip install numpy`,
imports of NumPy and matplotlib, prints, plots and `plt.show()`, the learner's own calls of the
exercises at the lesson's sizes (`exercise_1()` draws 100,000 x 1024), and in some a `%%bash`
cell, `x = !ls`, `%time`, a late cell with an error. The functions are the bodies of
examples/solutions/*.py (correct, or with one classic mistake), and three slips written here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "solutions"
MISTAKES = ("no_scale", "divides_by_dk", "wrong_axis", "swapped_outputs", "no_max_subtraction", "whole_array_sum",
            "k_transpose_3d", "sums_over_samples")


@dataclass
class Learner:
    path: Path
    correct: bool  # every function and exercise is the lesson's: all five parts must pass
    stop: str = ""  # what stops the file part-way (a late cell's error), if anything


def _chunks(code: str) -> list[str]:
    """A solutions file's functions and imports, one chunk per top-level block (as a learner splits cells)."""
    body = code.split('"""', 2)[-1] if code.lstrip().startswith('"""') else code
    return [c.strip("\n") for c in body.split("\n\n\n") if c.strip()]


def _uses(chunk: str) -> list[str]:
    """The learner's own top-level cells after a function's cell: prints, plots, lesson-size calls."""
    if "def softmax" in chunk:
        return ["x = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])\nprint(softmax(x))\nprint(softmax(x).sum(axis=-1))"]
    if "def scaled_dot_product_attention" in chunk:
        return ["rng = np.random.default_rng(0)\nQ = rng.standard_normal((1, 6, 16))\n"
                "K = rng.standard_normal((1, 6, 16))\nV = rng.standard_normal((1, 6, 16))\n"
                "out, w = scaled_dot_product_attention(Q, K, V)\n"
                "plt.imshow(w[0], cmap='viridis')\nplt.colorbar()\nplt.title('attention weights')\nplt.show()"]
    if "def exercise_1" in chunk:  # the lesson's size: 100,000 x 1024, about 2.5 GB if it ran
        return ["raw, scaled = exercise_1()\nprint(f'raw {raw:.1f}, scaled {scaled:.4f}')", "exercise_1()"]
    if "def exercise_2" in chunk:
        return ["ents = exercise_2()\nplt.plot([4, 16, 64, 256], ents, marker='o')\nplt.xscale('log')\nplt.show()"]
    if "def exercise_3" in chunk:
        return ["print(exercise_3())"]
    return []


def notebook(code: str, path: Path, *, bash: bool = False, shell_assign: bool = False, late: str = "",
             counts: bool = True) -> Path:
    """A notebook of `code` as a learner writes it (see the module's docstring); `late`: a last code cell."""
    cells = [nbformat.v4.new_markdown_cell("# Lesson 2: scaled dot-product attention\n\nMy solutions."),
             nbformat.v4.new_code_cell("%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt"),
             nbformat.v4.new_code_cell("!pip install numpy")]
    if bash:
        cells.append(nbformat.v4.new_code_cell("%%bash\necho 'checking the environment'\nls -l"))
    if shell_assign:
        cells.append(nbformat.v4.new_code_cell("files = !ls\nprint(files)\nnp.sum?"))
    for chunk in _chunks(code):
        if chunk.startswith(("import", "from")) and "def " not in chunk:
            cells.append(nbformat.v4.new_code_cell(chunk))
            continue
        name = chunk.split("def ", 1)[-1].split("(", 1)[0]
        cells.append(nbformat.v4.new_markdown_cell(f"## `{name}`"))
        cells.append(nbformat.v4.new_code_cell(chunk))
        cells += [nbformat.v4.new_code_cell(use) for use in _uses(chunk)]
    if shell_assign:
        cells.append(nbformat.v4.new_code_cell("t = %time exercise_3()\n%timeit softmax(np.ones(8))"))
    if late:
        cells += [nbformat.v4.new_markdown_cell("## Extra"), nbformat.v4.new_code_cell(late)]
    count = 0
    for cell in cells:
        if cell.cell_type == "code" and counts:
            count += 1
            cell.execution_count = count
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def _example(name: str) -> str:
    return (EXAMPLES / f"{name}.py").read_text()


def _slips() -> dict[str, str]:
    """Three slips learners make that no example file holds: a scale by sqrt(T) (a shape-index slip), a softmax
    applied before the scaling, and Exercise 1 drawn with np.random.default_rng."""
    correct = _example("correct")
    d_k = "    d_k = Q.shape[-1]\n"
    assert d_k in correct
    forward = "    scores = Q @ K.transpose(0, 2, 1) / math.sqrt(d_k)  # (B, T_q, T_k); a Python float keeps float32\n"
    weights = "    weights = softmax(scores, axis=-1)  # (B, T_q, T_k)\n"
    draws = "    np.random.seed(seed)\n    for d in"
    assert forward in correct and weights in correct and draws in correct
    return {
        "sqrt_t": correct.replace(d_k, "    d_k = Q.shape[1]  # T_q, not d_k\n"),
        "sqrt_tk": correct.replace(d_k, "    d_k = K.shape[-2]  # T_k, not d_k\n"),
        "softmax_first": correct.replace(forward, "    scores = Q @ K.transpose(0, 2, 1)\n").replace(
            weights, "    weights = softmax(scores, axis=-1) / math.sqrt(d_k)  # softmax, then the scale\n"),
        "default_rng": correct.replace(draws, "    rng = np.random.default_rng(seed)\n    for d in").replace(
            "        Q = np.random.randn(n_samples, d)\n        K = np.random.randn(n_samples, d)\n",
            "        Q = rng.standard_normal((n_samples, d))\n        K = rng.standard_normal((n_samples, d))\n"),
    }


LATE_IMPORT = ("import pandas as pd  # not among the course's modules\n\n\n"  # a rewrite of exercise_2 needs it
               "def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):\n    return list(pd.Series([0.0] * len(d_ks)))")
LATE_SYNTAX = "def plot_everything(:\n    pass"


def write_class(folder: Path) -> dict[str, Learner]:
    """The class in `folder`: {learner: Learner}."""
    folder.mkdir(parents=True, exist_ok=True)
    correct = _example("correct")
    c = {}
    c["ada"] = Learner(notebook(correct, folder / "ada.ipynb"), True)
    c["bao"] = Learner(notebook(correct, folder / "bao.ipynb", bash=True, shell_assign=True), True)
    c["cyd"] = Learner(notebook(correct, folder / "cyd.ipynb", late=LATE_IMPORT), True, "ModuleNotFoundError")
    c["dov"] = Learner(notebook(correct, folder / "dov.ipynb", late=LATE_SYNTAX, counts=False), True, "SyntaxError")
    c["eun"] = Learner(notebook(_example("lesson_forward"), folder / "eun.ipynb", bash=True), True)
    constants = correct.replace("def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):",  # globals it needs
                                "D_KS = (4, 16, 64, 256)\nT_KEYS = 8\n\n\n"
                                "def exercise_2(seed=42, d_ks=D_KS, T=T_KEYS):")
    c["fen"] = Learner(notebook(constants, folder / "fen.ipynb", shell_assign=True), True)
    plots = correct.replace("        print(d_k, entropies[-1])\n    return entropies",
                            "        print(d_k, entropies[-1])\n    plt.plot(d_ks, entropies)\n    plt.show()\n"
                            "    return entropies")
    assert plots != correct
    c["gil"] = Learner(notebook(plots, folder / "gil.ipynb", late="plt.savefig('entropies.png')"), True)
    windows = ("import matplotlib.pyplot as plt\n" + correct + "\n\nprint(exercise_1())\nexercise_2()\n\n"
               "if __name__ == '__main__':\n    exercise_1()\n")
    (folder / "hoa.py").write_bytes(b"\xef\xbb\xbf" + windows.replace("\n", "\r\n").encode("utf-8"))
    c["hoa"] = Learner(folder / "hoa.py", True)
    for name in MISTAKES:
        c[name] = Learner(notebook(_example(name), folder / f"{name}.ipynb", bash=name == "no_scale"), False)
    for name, code in _slips().items():
        c[name] = Learner(notebook(code, folder / f"{name}.ipynb", shell_assign=True), False)
    return c
