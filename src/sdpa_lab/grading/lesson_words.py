"""The lesson's own words for each task the grader checks, quoted from Lesson 2 with the section each comes from.

The package carries these excerpts so the assignment notebook (sdpa_lab.grading.assignment) can
quote the task a learner is asked to do without reading the lesson at run time. Each excerpt is
verbatim (the lesson's $...$ mathematics kept for Jupyter's Markdown); the section titles are
mistakes.py's, the ones a diagnosis asks the learner to reread. In the lesson's order, which is
the grader's (child.FUNCTIONS).
"""

from __future__ import annotations

from dataclasses import dataclass

import sdpa_lab.grading.mistakes as M

LESSON = "Lesson 2 - Scaled Dot-Product Attention"
PRACTICE = "Practice Exercises"


@dataclass(frozen=True)
class Task:
    """One task of the lesson: the function the grader calls, the section it comes from, and its words."""

    part: str  # the function the grader calls (child.FUNCTIONS)
    section: str  # the lesson's section title
    words: str  # the lesson's paragraph, verbatim
    hint: str = ""  # the lesson's own `# Your code here` line for the task, verbatim, if it has one


TASKS: tuple[Task, ...] = (
    Task("softmax", M.FULL_FORMULA,
         "Step 3: softmax over the last axis. Each row of the (B, T, T) score matrix is turned into a probability "
         "distribution over the T key positions, using the numerically stable softmax (subtract the row max, "
         "exponentiate, normalize). After this, every row is non-negative and sums to 1: these are the attention "
         "weights, still (B, T, T)."),
    Task("scaled_dot_product_attention", M.CANONICAL_FORWARD,
         "You now have every reason the formula is written the way it is. Here it is as one reusable function, the "
         "non-causal scaled dot-product attention that every head in your mini-GPT will call. It takes $Q$, $K$, $V$ "
         "already projected (Lesson 1’s job) and returns both the output and the attention weights, so later "
         "lessons can inspect what the head attended to."),
    Task("exercise_1", M.EXERCISE_1,
         "The lesson tested $d_k$ up to 256. Extend the sweep to $d_k = 1024$: draw random $Q$ and $K$, compute the "
         "raw dot-product variance and the scaled variance, and confirm the raw variance is near 1024 while the "
         "scaled variance stays near 1.",
         "# Your code here (reuse np.random.seed(42) and the Experiment 1 pattern)"),
    Task("exercise_2", M.EXERCISE_2,
         "Show the collapse happening gradually. For $d_k$ in [4, 16, 64, 256], build one query against eight keys, "
         "take the softmax of the unscaled raw scores, and print its entropy. Watch the entropy fall toward 0 as "
         "$d_k$ grows.",
         "# Your code here: loop over d_k, build q and Kmat, softmax(Kmat @ q), print entropy"),
    Task("exercise_3", M.EXERCISE_3,
         "The scale changes the sharpness of the attention distribution but not the order of the scores. For one "
         "query against eight keys at d_k = 256, confirm that the unscaled and scaled softmax weights produce the "
         "same argsort (the same ranking of positions), even though the actual weights differ wildly.",
         "# Your code here: compare argsort of w_unscaled and w_scaled"),
)

# The lesson's opening of its exercises, quoted before them.
EXERCISES_INTRO = ("Try these before checking the hints. They reuse the softmax and scaled_dot_product_attention "
                   "functions and the experiments above.")
