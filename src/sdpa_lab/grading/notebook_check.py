"""`check("softmax")` or `check()` in a notebook cell: the grader's verdicts on the functions the kernel defines.

The same grade as `sdpa-lab grade` (sdpa_lab.grading.grade.grade: its checks, seed rules,
mistakes, fixes and points), on the code the kernel ran: the cells in IPython's history, in
the order they ran, written to a temporary notebook that the grader prepares and runs as any
other file, in its own limited process (a sandbox where one starts). So the learner's code never
runs in the kernel for a check, and a hang, a memory blow-up or a crash is reported, never a dead
kernel. What the kernel never ran is left out: a cell that is not valid Python (it defined
nothing), and the cells that only check. Outside IPython, check() grades the script it runs in.

The result shows as HTML in Jupyter (`_repr_html_`) and as text elsewhere (`str`, `repr`).
"""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
from pathlib import Path

from sdpa_lab.grading.assignment import signatures
from sdpa_lab.grading.check_result import CheckResult
from sdpa_lab.grading.limits import MEMORY_MIB, N_SAMPLES, TIME_LIMIT
from sdpa_lab.grading.source import Cell, strip_magics, syntax_error

MAX_HELPER_BYTES = 1_000_000  # a learner's own module beside the notebook, copied for the grader to import


def _only_checks(text: str) -> bool:
    """Whether a cell does nothing but import `check`, call it and show the result (it defines nothing the grader
    needs)."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return False

    def checking(stmt) -> bool:
        if isinstance(stmt, ast.ImportFrom):
            return (stmt.module or "").startswith("sdpa_lab") and all(a.name == "check" for a in stmt.names)
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "check"

    shown = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Name))]  # `r`: shows r
    return bool(shown) and all(checking(s) for s in shown)


def ran(history: list[str]) -> list[tuple[int, str]]:
    """(In [k], code) of the cells of an IPython history (index k: In [k]) that defined something the grader may
    need: not the empty, not those that are not valid Python (they ran nothing), not those that only check."""
    out = []
    for k, text in enumerate(history):
        if k == 0 or not text.strip() or _only_checks(text):
            continue
        if syntax_error(strip_magics(Cell(f"In [{k}]", text))):
            continue
        out.append((k, text))
    return out


def kernel_history() -> list[str] | None:
    """The raw code of every cell this IPython kernel ran, In [0] first (empty); None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return list(shell.history_manager.input_hist_raw) if shell is not None else None


def notebook_name() -> str:
    """The running notebook's file name where Jupyter says it (JPY_SESSION_NAME), else ""."""
    import os

    name = Path(os.environ.get("JPY_SESSION_NAME", "")).name
    return name if name.endswith(".ipynb") else ""


def write_cells(cells: list[tuple[int, str]], path: Path) -> Path:
    """The cells as a notebook at `path`, each with its In [k] as execution count (the grader names it so)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(text, execution_count=k) for k, text in cells])
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path


def copy_helpers(folder: Path, into: Path) -> None:
    """The learner's own modules (*.py) beside the notebook, for the grader to import as `sdpa-lab grade` would."""
    for f in folder.glob("*.py"):
        if f.is_file() and f.stat().st_size <= MAX_HELPER_BYTES:
            shutil.copy(f, into / f.name)


def check(part: str | None = None, *, seed: int | None = None, time_limit: float = TIME_LIMIT,
          memory_mib: int = MEMORY_MIB, n_samples: int | None = N_SAMPLES, isolation: str = "auto") -> CheckResult:
    """Grade the functions this notebook (or script) defines: `part` (e.g. "softmax") or, with None, all of them.

    seed: the grade's inputs (None: a fresh one, shown; give it again to check again the same way);
    time_limit, memory_mib, n_samples, isolation: as `sdpa-lab grade`'s options. ValueError for a part that is
    not one the grader checks.
    """
    from sdpa_lab.grading.grade import grade

    names = signatures()
    if part is not None and part not in names:
        raise ValueError(f"check: part must be one of {', '.join(names)}, got {part!r}")
    settings = {"seed": seed, "time_limit": time_limit, "memory_mib": memory_mib, "n_samples": n_samples,
                "isolation": isolation}
    history = kernel_history()
    if history is None:
        script = getattr(sys.modules.get("__main__"), "__file__", None)
        if script is None:
            return CheckResult.nothing(part)
        return CheckResult(grade(script, **settings), part, Path(script).name)
    name = notebook_name()
    with tempfile.TemporaryDirectory(prefix="sdpa-lab-check-") as tmp:
        copy_helpers(Path.cwd(), Path(tmp))
        g = grade(write_cells(ran(history), Path(tmp) / (name or "notebook.ipynb")), **settings)
    return CheckResult(g, part, name or "YOUR_NOTEBOOK.ipynb", kernel=True)

