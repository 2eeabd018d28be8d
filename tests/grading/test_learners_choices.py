"""Correct work the lesson leaves room for passes, and outputs that were not drawn fail.

Each learner's file is written here the way learners write them (a notebook of cells with
their own prints, plots and lesson-size calls, or a .py): float32 draws, an entropy guard of
1e-9, the keys drawn before the query, a module the course does not give, a top-level cell that
sets up what a function reads; and two files that fake Exercise 1 without drawing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from sdpa_lab.grading import evidence, machine, sandbox
from sdpa_lab.grading.grade import PASS, UNUSABLE, Grade, grade
from sdpa_lab.grading.modules import named_modules
from sdpa_lab.grading.parts import Part
from sdpa_lab.grading.record import unusable_reason
from sdpa_lab.grading.runner import Calls, LearnerProcess, Outcome

from tests.grading.notebooks import EXAMPLES, notebook

CORRECT = (EXAMPLES / "correct.py").read_text()
N_SAMPLES = 2000  # Exercise 1's pairs here: the same checks, quicker
SEED = 515


def _variant(*swaps: tuple[str, str]) -> str:
    code = CORRECT
    for old, new in swaps:
        assert old in code, old
        code = code.replace(old, new)
    return code


def _parts(path, **kwargs) -> dict:
    g = grade(path, time_limit=60, n_samples=N_SAMPLES, seed=SEED, isolation="none", **kwargs)
    return {p.name: p for p in g.parts}


DRAWS = ("        Q = np.random.randn(n_samples, d)\n        K = np.random.randn(n_samples, d)\n")
FLOAT32 = ("        Q = np.random.randn(n_samples, d).astype(np.float32)  # half the memory\n"
           "        K = np.random.randn(n_samples, d).astype(np.float32)\n")
KEYS_FIRST_2 = ("        q = np.random.randn(d_k)\n        Kmat = np.random.randn(T, d_k)\n",
                "        Kmat = np.random.randn(T, d_k)  # the eight keys first, then the query\n"
                "        q = np.random.randn(d_k)\n")
KEYS_FIRST_3 = ("    q = np.random.randn(d_k)\n    Kmat = np.random.randn(T, d_k)\n",
                "    Kmat = np.random.randn(T, d_k)\n    q = np.random.randn(d_k)\n")


def test_exercise_1_drawn_then_cast_to_float32_passes_as_the_graders_draw(tmp_path):
    path = notebook(_variant((DRAWS, FLOAT32)), tmp_path / "float32.ipynb")
    ex1 = _parts(path)["exercise_1"]
    assert ex1.passed, ex1.checks
    assert all("off the grader's" not in c.what for c in ex1.checks)  # its draw is the grader's, to float32 rounding
    ratio = next(c for c in ex1.checks if "scaled = raw" in c.what)
    assert ratio.passed and "raw / scaled" in ratio.detail


def test_exercise_1_float32_with_ddof_1_is_the_graders_draw_and_costs_no_more_draws(tmp_path):
    code = _variant((DRAWS, FLOAT32), ("raw_var = scores.var()", "raw_var = scores.var(ddof=1)"),
                    ("scaled_var = (scores / np.sqrt(d)).var()", "scaled_var = (scores / np.sqrt(d)).var(ddof=1)"))
    path = tmp_path / "unbiased.py"
    path.write_text(code)
    ex1 = _parts(path)["exercise_1"]
    assert ex1.passed and any("ddof=1" in c.detail for c in ex1.checks)
    assert all("off the grader's" not in c.what for c in ex1.checks)


def test_an_entropy_guard_of_1e_9_is_the_lessons_draw(tmp_path):
    path = notebook(_variant(("np.log(p + 1e-12)", "np.log(p + 1e-9)")), tmp_path / "guard.ipynb")
    ex2 = _parts(path)["exercise_2"]
    assert ex2.passed and all("equal to the grader's draw" in c.detail for c in ex2.checks if "the draw" in c.what)
    assert not ex2.mistakes


def test_keys_drawn_before_the_query_pass_on_the_statistics_with_a_note(tmp_path):
    path = notebook(_variant(KEYS_FIRST_2, KEYS_FIRST_3), tmp_path / "keys_first.ipynb")
    parts = _parts(path)
    for name in ("exercise_2", "exercise_3"):
        part = parts[name]
        assert part.passed and not part.mistakes, part.checks
        assert any("the keys drawn first" in n for n in part.notes)
        assert "over" in part.checks[-1].what and part.checks[-1].passed


def test_exercise_2_returning_the_mean_in_place_of_the_sum_still_fails_off_the_graders_draw(tmp_path):
    code = _variant(KEYS_FIRST_2, ("return float(-np.sum(p * np.log(p + 1e-12)))",
                                   "return float(-np.mean(p * np.log(p + 1e-12)))"))
    path = tmp_path / "mean.py"
    path.write_text(code)
    ex2 = _parts(path)["exercise_2"]
    assert not ex2.passed and "the entropies are not a draw's" in ex2.checks[-1].detail


def test_a_top_level_cell_that_sets_up_what_softmax_reads_runs_as_run_all_runs_it(tmp_path):
    code = _variant(("def softmax(x, axis=-1):\n    x = x - x.max(axis=axis, keepdims=True)",
                     "AXES = []\nAXES.append(-1)  # the last axis, set up once\nSETTINGS = {}\n"
                     "SETTINGS[\"keepdims\"] = True\n\n\n"
                     "def softmax(x, axis=None):\n    axis = AXES[0] if axis is None else axis\n"
                     "    x = x - x.max(axis=axis, keepdims=SETTINGS[\"keepdims\"])"))
    path = notebook(code, tmp_path / "axes.ipynb")
    g = grade(path, time_limit=60, n_samples=N_SAMPLES, seed=SEED, isolation="none")
    assert g.exit_status == PASS, [(p.name, p.verdict, p.error[-300:]) for p in g.parts]


TQDM = ("    for d in [x for x in [4, 16, 64, 256] if x < d_k] + [d_k]:",
        "    for d in tqdm([x for x in [4, 16, 64, 256] if x < d_k] + [d_k]):")


def test_a_module_given_with_grading_modules_is_honoured(tmp_path):
    path = notebook("from tqdm import tqdm\n\n\n" + _variant(TQDM), tmp_path / "progress.ipynb")
    without = grade(path, time_limit=60, n_samples=N_SAMPLES, seed=SEED, isolation="none")
    assert without.exit_status == UNUSABLE and "grading_modules" in without.load.message
    with_it = grade(path, time_limit=60, n_samples=N_SAMPLES, seed=SEED, isolation="none",
                    modules=("numpy", "matplotlib", "tqdm"))
    assert with_it.exit_status == PASS, [(p.name, p.verdict) for p in with_it.parts]


# -- Exercise 1 off the grader's draw: drawn, or faked -------------------------------------------

FAKE_NOISE = '''def exercise_1(seed=42, n_samples=100_000, d_k=1024):
    rng = np.random.default_rng(seed)  # the theory plus noise of the right size: no scores drawn
    raw = d_k + rng.normal(0.0, d_k * np.sqrt((2 + 6 / d_k) / n_samples))
    return raw, raw / d_k
'''
FAKE_CHI = '''def exercise_1(seed=42, n_samples=100_000, d_k=1024):
    rng = np.random.default_rng(seed)  # a sample variance drawn from its (normal scores') law: no scores drawn
    raw = d_k * rng.chisquare(n_samples - 1) / (n_samples - 1)
    return raw, raw / d_k
'''
DEFAULT_RNG = '''def exercise_1(seed=42, n_samples=100_000, d_k=1024):
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((n_samples, d_k))  # the keys first: any order, any generator
    Q = rng.standard_normal((n_samples, d_k))
    scores = np.einsum("nd,nd->n", Q, K)
    return float(scores.var()), float((scores / np.sqrt(d_k)).var())
'''


def _with_exercise_1(body: str) -> str:
    start = CORRECT.index("def exercise_1(")
    end = CORRECT.index("def entropy(")
    return CORRECT[:start] + body + "\n\n" + CORRECT[end:]


@pytest.mark.parametrize(("body", "passes"), [(DEFAULT_RNG, True), (FAKE_NOISE, False), (FAKE_CHI, False)],
                         ids=["default_rng", "theory_plus_noise", "chi_square_statistic"])
def test_exercise_1_off_the_graders_draw_passes_only_where_it_draws(tmp_path, body, passes):
    path = tmp_path / "ex1.py"
    path.write_text(_with_exercise_1(body))
    ex1 = _parts(path)["exercise_1"]
    drew = ex1.checks[-1]
    assert "off the grader's" in drew.what
    assert ex1.passed is passes and drew.passed is passes, drew.detail
    assert all(c.passed for c in ex1.checks[:-1])  # at the two calls themselves, every fake looks right


def _variances(sizes, make, rng) -> tuple[np.ndarray, np.ndarray]:
    raw = np.array([make(n, d, rng) for n, d in sizes])
    return raw, raw / np.array([d for _, d in sizes])


def _drawn(n, d, rng, ddof=0):
    scores = np.sum(rng.standard_normal((n, d)) * rng.standard_normal((n, d)), axis=1)
    return scores.var(ddof=ddof)


def _se(n, d):
    return d * np.sqrt((2 + 6 / d) / n)


STAND_INS = {  # what a fake returns at (n_samples, d_k): each the law a faker would reach for
    "normal": lambda n, d, rng: d + rng.normal(0, _se(n, d)),
    "normal, made positive": lambda n, d, rng: abs(d * (n - 1) / n + rng.normal(0, _se(n, d))),
    "chi-square of normal scores": lambda n, d, rng: d * rng.chisquare(n - 1) / (n - 1),
}


@pytest.mark.parametrize("ddof", [0, 1])
def test_real_draws_pass_the_evidence_at_every_seed(ddof):
    sizes = evidence.evidence_sizes()
    rng = np.random.default_rng(3)
    failed = [evidence.variance_evidence(sizes, *_variances(sizes, lambda n, d, r: _drawn(n, d, r, ddof), rng))
              for _ in range(40)]
    assert not any(failed), [f for f in failed if f]


@pytest.mark.parametrize("name", STAND_INS)
def test_stand_ins_for_the_draws_fail_the_evidence(name):
    sizes = evidence.evidence_sizes()
    rng = np.random.default_rng(4)
    caught = [bool(evidence.variance_evidence(sizes, *_variances(sizes, STAND_INS[name], rng))) for _ in range(40)]
    assert sum(caught) >= 36, f"{name}: caught {sum(caught)} of 40"  # docs/grading.md quotes the rate


def test_the_evidence_asks_for_small_draws_only():
    sizes = evidence.evidence_sizes()
    assert max(n * d for n, d in sizes) <= 64 and len(sizes) == evidence.SHAPE_CALLS + evidence.SPREAD_CALLS
    seeds = evidence.call_seeds(1, "exercise_1", len(sizes))
    assert len(set(seeds)) == len(seeds) and seeds == evidence.call_seeds(1, "exercise_1", len(sizes))


def test_entropies_of_real_draws_pass_and_repeated_ones_or_bits_fail():
    rng = np.random.default_rng(5)
    d_ks, T = (4, 16, 64, 256), 8

    def entropies():
        h = []
        for d in d_ks:
            z = rng.standard_normal((T, d)) @ rng.standard_normal(d)
            p = np.exp(z - z.max())
            p /= p.sum()
            h.append(-np.sum(p * np.log(p + 1e-12)))
        return h

    assert not evidence.entropy_evidence(d_ks, T, np.array([entropies() for _ in range(evidence.ENTROPY_CALLS)]))
    same = np.array([entropies()] * evidence.ENTROPY_CALLS)
    assert "never repeat" in evidence.entropy_evidence(d_ks, T, same)[0]
    bits = np.array([entropies() for _ in range(evidence.ENTROPY_CALLS)]) / np.log(2)
    assert "the entropies are not a draw's" in evidence.entropy_evidence(d_ks, T, bits)[0]


def test_argsorts_that_do_not_change_with_the_seed_fail():
    rng = np.random.default_rng(6)
    drawn = [rng.permutation(8) for _ in range(evidence.ARGSORT_CALLS)]
    assert not evidence.argsort_evidence(drawn)
    assert evidence.argsort_evidence([np.arange(8)] * evidence.ARGSORT_CALLS)


# -- a call lost to the machine is not the learner's -------------------------------------------

SLOW = '''import numpy as np


def exercise_3(seed=42, d_k=256, T=8):
    x = 0
    for i in range(3_000_000):  # about 0.2 s of CPU
        x += i
    return np.arange(T), np.arange(T)
'''


# The starved call, made in a process of its own session: with autogroup scheduling a session shares a CPU as one,
# and a test worker's session holds the other busy workers too, which left the grader itself too little of the loops'
# CPU to hand the call its request (the call then neither ran nor waited, and timed out). Its own session is what a
# grade run from the command line has.
STARVED_CALL = """
import json, os, subprocess, sys, time
from sdpa_lab.grading.runner import Calls, LearnerProcess
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(15)]
try:
    with LearnerProcess("slow.py", sys.argv[1], time_limit=0.5, memory_mib=1024) as process:
        started = time.monotonic()
        outcome = Calls(process, "exercise_3")(seed=1, d_k=16, T=8)
        took = time.monotonic() - started
finally:
    for hog in hogs:
        hog.kill()
        hog.wait()
print(json.dumps({"status": outcome.status, "message": outcome.message, "took": took}))
"""


def test_a_call_starved_of_cpu_is_retried_and_then_left_ungraded_not_failed():
    """Every process of the call on one CPU beside 15 busy loops, each a session of its own (the scheduler shares a
    CPU between sessions first): the learner's code waits far more than it runs."""
    made = subprocess.run([sys.executable, "-c", STARVED_CALL, SLOW], capture_output=True, text=True, timeout=300,
                          start_new_session=True, check=True)
    outcome = json.loads(made.stdout.splitlines()[-1])
    took = outcome["took"]
    assert outcome["status"] == "loaded" and "could not be graded" in outcome["message"], outcome
    assert "waited" in outcome["message"] and took >= machine.WALL_FACTOR * 0.5 * (machine.RETRIES + 1)


def test_the_same_slow_call_on_a_free_cpu_finishes():
    with LearnerProcess("slow.py", SLOW, time_limit=30, memory_mib=1024) as process:
        assert process.call("exercise_3", seed=1, d_k=16, T=8).ok


@pytest.mark.parametrize(("run", "waited", "elapsed", "more", "lost"), [
    (2.0, 0.0, 2.0, False, False),  # ran its CPU time away: an endless loop, the learner's
    (0.0, 0.0, 2.0, False, False),  # neither ran nor waited: a sleep, the learner's
    (8.0, 30.0, 2.0, False, False),  # many processes, more CPU than the limit: a fork bomb, the learner's
    (0.6, 1.4, 2.0, True, True),  # waited most of the time, short of its CPU: the machine's
    (1.9, 4.1, 6.0, False, True),  # still starved at WALL_FACTOR times the limit
])
def test_the_machine_is_blamed_only_for_a_starved_call_short_of_its_cpu(run, waited, elapsed, more, lost):
    assert (machine.more_time(run, waited, elapsed, 2.0) > 0) is more
    assert machine.lost_to_load(run, waited, elapsed, 2.0) is lost


def test_a_call_that_sleeps_past_the_limit_hangs_as_before(tmp_path):
    code = "import time\n\n\ndef exercise_3(seed=42, d_k=256, T=8):\n    time.sleep(60)\n"
    with LearnerProcess("sleeps.py", code, time_limit=1.5, memory_mib=1024) as process:
        outcome = process.call("exercise_3", seed=1)
    assert outcome.status == "timeout"


def test_a_grade_with_a_part_left_ungraded_exits_unusable_not_fail():
    lost = Part("exercise_3", "exercise_3()", lost=Outcome("loaded", message="could not be graded: ..."))
    g = Grade(EXAMPLES / "correct.py", Outcome("ready", functions=("exercise_3",)), [lost], 1.0, 1024)
    assert g.exit_status == UNUSABLE and lost.verdict == "could not be graded"


def test_a_class_record_says_why_a_part_was_left_ungraded():
    lost = Part("exercise_3", "exercise_3()", lost=Outcome("loaded", message="could not be graded: overloaded"))
    g = Grade(EXAMPLES / "correct.py", Outcome("ready", functions=("exercise_3",)), [lost], 1.0, 1024)
    assert unusable_reason(g) == "exercise_3: could not be graded: overloaded"


def test_a_class_reruns_on_a_new_module_only_the_files_that_name_it(tmp_path):
    course = ("numpy", "matplotlib", "tqdm")
    (tmp_path / "bar.py").write_text("from tqdm import tqdm\nimport numpy as np\n")
    (tmp_path / "plain.py").write_text(CORRECT)
    (tmp_path / "link.py").symlink_to(tmp_path / "bar.py")
    assert named_modules(tmp_path / "bar.py", course) == ["numpy", "tqdm"]
    assert named_modules(tmp_path / "plain.py", course) == named_modules(tmp_path / "plain.py", course[:2])
    assert named_modules(tmp_path / "link.py", course) == ["numpy"]  # a link is never read


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
def test_a_notebook_with_every_choice_at_once_passes_in_the_sandbox(tmp_path):
    code = _variant((DRAWS, FLOAT32), KEYS_FIRST_2, KEYS_FIRST_3, ("np.log(p + 1e-12)", "np.log(p + 1e-9)"),
                    ("def softmax(x, axis=-1):\n", "AXES = []\nAXES.append(-1)\n\n\ndef softmax(x, axis=None):\n"
                                                   "    axis = AXES[0] if axis is None else axis\n"))
    path = notebook(code, tmp_path / "all_choices.ipynb", bash=True, shell_assign=True)
    g = grade(path, time_limit=60, n_samples=N_SAMPLES, seed=SEED, isolation="sandbox")
    assert g.exit_status == PASS, [(p.name, p.verdict, [c.detail for c in p.checks if not c.passed]) for p in g.parts]


KILLED = "import os\n\n\ndef exercise_3(seed=42, d_k=256, T=8):\n    os.kill(os.getpid(), 9)\n"


def test_a_call_killed_while_the_machine_ran_out_of_memory_is_left_ungraded(monkeypatch):
    kills = iter(range(1000))  # the machine's count of kills for memory, growing at every look: the kernel killing
    monkeypatch.setattr(machine, "machine_oom_kills", lambda: next(kills))
    with LearnerProcess("killed.py", KILLED, time_limit=30, memory_mib=1024) as process:
        outcome = Calls(process, "exercise_3")(seed=1)
    assert outcome.status == "loaded" and "the machine ran out of memory" in outcome.message


def test_a_call_killed_by_its_own_code_is_a_crash_as_before():
    with LearnerProcess("killed.py", KILLED, time_limit=30, memory_mib=1024) as process:
        outcome = Calls(process, "exercise_3")(seed=1)
    assert outcome.status == "died" and "SIGKILL" in outcome.message
