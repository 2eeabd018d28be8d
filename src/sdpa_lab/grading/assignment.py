"""The assignment notebook a learner starts from (`sdpa-lab new-assignment FILE.ipynb`), and what the grader tells a
learner whose file defines none of the functions it calls.

The notebook follows the lesson: for each function and exercise, the lesson's own words for the task
(sdpa_lab.grading.lesson_words), a code cell holding the function the grader calls, and a check cell
(`check("softmax")`, sdpa_lab.grading.notebook_check). The functions are those of the solutions
skeleton (sdpa_lab.grading.skeleton), the one place their signatures and contracts are written.
Run as handed out, every check says "not written yet": the functions raise NotImplementedError.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from sdpa_lab.grading.lesson_words import EXERCISES_INTRO, LESSON, PRACTICE, TASKS
from sdpa_lab.grading.skeleton import SKELETON

YOUR_CODE = "# your code here"
NOT_WRITTEN = "raise NotImplementedError"
KERNEL = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def skeleton_functions() -> dict[str, str]:
    """{name: the function's code} of the solutions skeleton, in its order, with `# your code here` put before
    the line that says it is not written yet."""
    text = SKELETON.format(name="FILE")
    tree = ast.parse(text)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            code = ast.get_source_segment(text, node)
            out[node.name] = code.replace(f"    {NOT_WRITTEN}", f"    {YOUR_CODE}\n    {NOT_WRITTEN}", 1)
    return out


def signatures() -> dict[str, str]:
    """{name: its `def` line} as the grader calls it, from the skeleton: `def softmax(x, axis=-1):`."""
    return {name: code.split("\n", 1)[0] for name, code in skeleton_functions().items()}


def none_defined(file: str) -> str:
    """What the grader says of a file that defines none of the functions it calls (code written at the top level,
    as the lesson's `# Your code here` invites, is never called): the functions expected, and where to start."""
    defs = "\n".join(f"    {line}" for line in signatures().values())
    return (f"{file} defines none of the functions the grader calls (code at the top level, outside a function, is "
            "never graded: the grader calls each function with its own inputs).\nPut the code of each task inside "
            f"its function, with this name and these arguments:\n{defs}\n"
            "`sdpa-lab new-assignment hw2.ipynb` writes a notebook to start from, with each function to fill in, "
            "the lesson's words for its task and a check cell (`sdpa-lab new-solutions FILE.py`: the same as a "
            ".py file).")


def not_defined(name: str) -> str:
    """What the grader says of one function the file does not define."""
    return (f"not defined in the file: the grader calls `{signatures()[name]}` (code outside a function is never "
            "called); `sdpa-lab new-assignment hw2.ipynb` writes a notebook with every function to fill in")


def _quote(task, level: str) -> str:
    hint = f"\n>\n> `{task.hint}`" if task.hint else ""
    return (f"{level} {task.section}\n\n> {task.words}{hint}\n\n"
            f"— {LESSON}, section “{task.section}”. Write it as the function below; the grader calls "
            f"`{task.part}` with its own inputs, so keep its name, its arguments and what it returns.")


def build(name: str = "hw2.ipynb"):
    """The assignment notebook (an nbformat v4 NotebookNode, validated), for a file called `name`."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    functions = skeleton_functions()
    cells = [
        new_markdown_cell(
            f"# {LESSON}: the functions and exercises\n\n"
            "Fill in each function below where it says `# your code here`, run its cell, then run the check "
            "cell under it: `check(\"softmax\")` grades the function as the grader does (its checks, the mistake "
            "it finds and its fix, the section to reread). `check()` at the end grades everything. Your code "
            "runs in a separate process with a time and a memory limit, so a hang or a crash is reported, not "
            f"a dead kernel. For the whole file, save it and run `sdpa-lab grade {name}` in a terminal."),
        new_code_cell("import numpy as np\n\nfrom sdpa_lab.grading import check"),
    ]
    first_exercise = next(t for t in TASKS if t.section.startswith("Exercise "))
    level = "##"
    for task in TASKS:
        if task is first_exercise:  # the lesson's words before its exercises, which go under them
            cells.append(new_markdown_cell(f"## {PRACTICE}\n\n> {EXERCISES_INTRO}\n\n— {LESSON}, "
                                           f"section “{PRACTICE}”."))
            level = "###"
        cells += [new_markdown_cell(_quote(task, level)), new_code_cell(functions[task.part]),
                  new_code_cell(f'check("{task.part}")')]
    cells += [new_markdown_cell(f"## Everything\n\n`check()` grades every function and exercise; `sdpa-lab grade "
                                f"{name}` in a terminal grades the saved file the same way."),
              new_code_cell("check()")]
    nb = new_notebook(cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}})
    nbformat.validate(nb)
    return nb


def write_assignment(path: str | os.PathLike) -> Path:
    """Write the assignment notebook to `path`; never overwrites an existing file (FileExistsError)."""
    import nbformat

    path = Path(path)
    text = nbformat.writes(build(path.name))
    with open(path, "x", encoding="utf-8") as f:  # "x": fails if the file exists
        f.write(text)
    return path
