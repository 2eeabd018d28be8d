"""What is checked in a learner's solutions, function by function and exercise by exercise, tied to the claims.

Each `grade_*` function calls one of the learner's functions (through
`runner.Calls`, in the learner's process) on probe inputs, checks the outputs
against the claims and the reference code (sdpa_lab.attention, the lesson's
seeded streams), and, where a check fails, names the mistake from the
measured outputs (sdpa_lab.grading.mistakes). One module per part graded
(check_softmax, check_attention, check_exercise_1, _2 and _3), what they share
in sdpa_lab.grading.parts; this module is their index.
"""

from __future__ import annotations

from sdpa_lab.grading.check_attention import attention_probes, grade_attention
from sdpa_lab.grading.check_exercise_1 import (
    EXERCISE1_D_K,
    QUICK_N_SAMPLES,
    exercise1_over_samples,
    exercise1_reference,
    grade_exercise_1,
)
from sdpa_lab.grading.check_exercise_2 import EXERCISE2_D_K, EXERCISE2_T, exercise2_reference, grade_exercise_2
from sdpa_lab.grading.check_exercise_3 import exercise3_reference, grade_exercise_3
from sdpa_lab.grading.check_softmax import SOFTMAX_SECTION, grade_softmax, softmax_probes
from sdpa_lab.grading.parts import LOST, Draw, Part, SolutionCheck, fresh_seed, softmax_note

__all__ = [
    "EXERCISE1_D_K", "EXERCISE2_D_K", "EXERCISE2_T", "LOST", "QUICK_N_SAMPLES", "SOFTMAX_SECTION", "Draw", "Part",
    "SolutionCheck", "attention_probes", "exercise1_over_samples", "exercise1_reference", "exercise2_reference",
    "exercise3_reference", "fresh_seed", "grade_attention", "grade_exercise_1", "grade_exercise_2",
    "grade_exercise_3", "grade_softmax", "softmax_note", "softmax_probes",
]
