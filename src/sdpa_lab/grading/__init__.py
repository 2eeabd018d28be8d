"""Grade a learner's own solutions to the lesson: their softmax, their forward and the three exercises.

- `skeleton`: the file a learner fills in (`sdpa-lab new-solutions FILE`);
- `runner`: the learner's code in its own process, with a time and a memory limit;
- `checks`: what each function and exercise must satisfy, tied to the claims;
- `mistakes`: the classic mistakes as runnable variants, and the diagnosis that names them;
- `grade`: all of it for one file, and the terminal report (`sdpa-lab grade FILE`);
- `assignment`: the notebook a learner starts from (`sdpa-lab new-assignment FILE.ipynb`);
- `notebook_check`: `check("softmax")` / `check()` in a notebook cell (`from sdpa_lab.grading import check`);
- `cli`: the subcommands.
"""


def __getattr__(name: str):
    # `check` is imported on first use: the light modules here (points, limits) are read at the workflow's parse
    # time, without NumPy.
    if name == "check":
        from sdpa_lab.grading.notebook_check import check

        return check
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
