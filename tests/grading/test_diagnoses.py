"""The grader names what the outputs show: the mistake, its fix, and nothing the lesson never claims."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdpa_lab.grading import check_exercise_1, checks, parts
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading.evidence import evidence_sizes
from sdpa_lab.grading.grade import FAIL, PASS, format_grade, grade
from sdpa_lab.grading.runner import Outcome
from sdpa_lab.numbers import number

N_SAMPLES = 2000  # Exercise 1's pairs when a whole file is graded here: the same checks, quicker


@pytest.fixture(scope="module")
def examples(request):
    return request.config.rootpath / "examples" / "solutions"


def unwrapped(g) -> str:
    return " ".join(format_grade(g).split())


# -- the example files, each graded to its named mistake ------------------------------------

NEW_MISTAKES = {  # file: {part: mistakes named}; every other part passes
    "divides_by_sqrt_dv": {"scaled_dot_product_attention": ["divides_by_sqrt_dv"]},
    "whole_array_max": {"softmax": ["whole_array_max"]},
    "whole_array_sum": {"softmax": ["whole_array_sum"]},
    "sums_over_samples": {"exercise_1": ["sums_over_samples"]},
    "divides_by_sqrt_tk": {"scaled_dot_product_attention": ["divides_by_sqrt_tk"]},
    "divides_by_sqrt_tq": {"scaled_dot_product_attention": ["divides_by_sqrt_tq"]},
    "softmax_before_scale": {"scaled_dot_product_attention": ["softmax_before_scale"]},
    "exercise_1_std": {"exercise_1": ["standard_deviation"]},
    "exercise_1_rand": {"exercise_1": ["uniform_draws"]},
    "entropy_mean": {"exercise_2": ["entropy_mean"]},
    "causal_mask": {"scaled_dot_product_attention": ["causal_mask"]},
    "k_not_transposed": {"scaled_dot_product_attention": ["k_not_transposed"]},
    "v_transposed": {"scaled_dot_product_attention": ["v_transposed"]},
    "max_without_keepdims": {"softmax": ["max_without_keepdims"]},  # the forward and exercises: right with a right one
    "softmax_without_return": {"softmax": ["returns_none"]},  # charged once: the other parts pass
}


@pytest.mark.parametrize("name", NEW_MISTAKES)
def test_each_new_mistake_example_is_named_with_its_fix(examples, name):
    g = grade(examples / f"{name}.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    assert g.exit_status == FAIL
    assert {p.name: p.mistakes for p in g.parts if not p.passed} == NEW_MISTAKES[name]
    text = unwrapped(g)
    for mistakes in NEW_MISTAKES[name].values():
        for key in mistakes:
            m = M.MISTAKES[key]
            assert f"{m.title}" in text and f"Fix: {m.fix}" in text and m.reread in text
    assert "none of the classic mistakes" not in text


MEASURED = {  # file: what the diagnosis says it measured on the probe Q (2, 4, 8), K (2, 7, 8), V (2, 7, 3)
    "divides_by_sqrt_tk": f"c = {number(1 / math.sqrt(7), digits=4)} on Q (2, 4, 8)",
    "divides_by_sqrt_tq": f"c = {number(1 / math.sqrt(4), digits=4)} on Q (2, 4, 8)",
    "softmax_before_scale": f"the weights' rows sum to {number(1 / math.sqrt(8), digits=4)} on Q (2, 4, 8)",
}


@pytest.mark.parametrize("name", MEASURED)
def test_a_scale_is_named_from_its_measured_value(examples, name):
    g = grade(examples / f"{name}.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    text = unwrapped(g)
    assert MEASURED[name] in text and "where 1/sqrt(d_k) = 0.3536" in text


@pytest.mark.parametrize("name", ["correct", "lesson_forward", "exercise_1_default_rng"])
def test_a_correct_solution_is_given_no_mistake(examples, name):
    g = grade(examples / f"{name}.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    assert g.exit_status == PASS
    assert all(p.mistakes == [] and p.diagnosis == [] for p in g.parts)


def test_exercise_1_drawn_with_default_rng_passes_with_a_note_on_the_lessons_digits(examples):
    g = grade(examples / "exercise_1_default_rng.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    ex1 = next(p for p in g.parts if p.name == "exercise_1")
    assert ex1.passed and len(ex1.checks) == 9 and "small sizes" in ex1.checks[-1].what
    assert any("not np.random.seed(42)'s draw in the lesson's order" in c.detail for c in ex1.checks)
    assert any("the lesson's printed digits need np.random.seed(42)" in n for n in ex1.notes)


@pytest.mark.parametrize("name", ["whole_array_max", "whole_array_sum", "no_max_subtraction"])
def test_a_forward_that_only_calls_a_wrong_softmax_is_not_blamed(examples, name):
    g = grade(examples / f"{name}.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    forward = next(p for p in g.parts if p.name == "scaled_dot_product_attention")
    assert forward.passed and not forward.mistakes
    assert any("with a correct softmax in its place, every check passes" in n for n in forward.notes)
    assert "to fix: softmax" in format_grade(g) and "to fix: softmax, scaled" not in format_grade(g)


def test_the_lessons_forward_copied_verbatim_passes_without_a_dtype_note(examples):
    # Its `/ np.sqrt(d_k)` returns float64 from float32: the lesson's own behaviour, nothing to tell a learner.
    g = grade(examples / "lesson_forward.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    assert g.exit_status == PASS
    forward = next(p for p in g.parts if p.name == "scaled_dot_product_attention")
    assert not any("dtype" in c.what for c in forward.checks)  # no check of what the lesson never claims
    assert not any("float64" in n for p in g.parts for n in p.notes)


def test_the_dtype_note_is_kept_for_a_dtype_neither_float32_nor_the_lessons():
    part = checks.Part("f", "f()")
    parts.dtype_note(part, ["float32", "float32"])
    parts.dtype_note(part, ["float64", "float64"], lesson=["float64", "float64"])
    assert part.notes == []
    parts.dtype_note(part, ["float64", "float64"])
    assert len(part.notes) == 1 and part.passed
    assert "another dtype out (float64, float64)" in part.notes[0] and "not a fail" in part.notes[0]


# -- the forward is graded again with a correct softmax before it is blamed ----------------

class ForwardCalls:
    """Stands in for runner.Calls: runs `forward` in process, with `softmax` or the correct one in its place."""

    def __init__(self, forward, softmax):
        self.forward, self.softmax, self.lost, self.swapped = forward, softmax, None, 0

    def __call__(self, *args, reference_softmax=False, **kwargs):
        self.swapped += reference_softmax
        helper = M.Softmax() if reference_softmax else self.softmax
        values = self.forward(*args, softmax=lambda x, axis=-1: helper(x, axis)[0])
        return Outcome("ok", values, True)


def _forward(scale: str):
    def forward(Q, K, V, softmax):
        d = {"d_k": Q.shape[-1], "d_v": V.shape[-1]}[scale]
        w = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(d), axis=-1)
        return w @ V, w
    return forward


def test_a_forward_with_its_own_mistake_is_named_for_it_alone():
    # sqrt(d_v) in the forward, a whole-array sum in the softmax: only the forward's own mistake is its.
    calls = ForwardCalls(_forward("d_v"), M.Softmax(total="whole"))
    part = checks.grade_attention(calls)
    assert calls.swapped and not part.passed and part.mistakes == ["divides_by_sqrt_dv"]
    assert any("only this function's own mistakes count" in n for n in part.notes)


def test_a_correct_forward_with_a_correct_softmax_is_graded_once():
    calls = ForwardCalls(_forward("d_k"), M.Softmax())
    part = checks.grade_attention(calls)
    assert part.passed and calls.swapped == 0 and part.notes == []


# -- Exercise 1: what was drawn, and the axis -----------------------------------------------

class Exercise1Calls:
    """Stands in for runner.Calls: exercise_1 computed in process, recording the sizes asked for."""

    def __init__(self, axis=1, accepts_n=True, generator="legacy", n_fixed=100_000):
        self.axis, self.accepts_n, self.generator, self.asked, self.lost = axis, accepts_n, generator, [], None
        self.n_fixed = n_fixed  # what it draws when it takes no n_samples

    def __call__(self, seed, n_samples, d_k):
        n = n_samples if self.accepts_n else self.n_fixed
        self.asked.append((seed, n, d_k))
        if self.generator == "legacy":
            rs = np.random.RandomState(seed)
            for d in [x for x in (4, 16, 64, 256) if x < d_k]:
                rs.randn(n, d), rs.randn(n, d)
            Q, K = rs.randn(n, d_k), rs.randn(n, d_k)
        else:  # another generator: decided statistically only
            rng = np.random.default_rng(seed)
            Q, K = rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k))
        scores = np.sum(Q * K, axis=self.axis)
        kwargs = ("seed", "n_samples", "d_k") if self.accepts_n else ("seed", "d_k")
        return Outcome("ok", (np.asarray(scores.var()), np.asarray((scores / np.sqrt(d_k)).var())), True,
                       kwargs=kwargs)


def test_exercise_1_summed_over_the_samples_is_named_not_blamed_on_the_stream():
    calls = Exercise1Calls(axis=0)
    part = checks.grade_exercise_1(calls, checks.Draw(7, 400))  # variance about 400, far from d_k = 1024 and 64
    assert part.mistakes == ["sums_over_samples"]
    draws = [c for c in part.checks if "the draws:" in c.what]
    assert draws and all(c.passed for c in draws)  # the random stream was right
    text = " ".join(part.diagnosis)
    assert "axis=0" in text and "np.sum(Q * K, axis=1)" in text and "exactly the variance" in text


def test_exercise_1_summed_over_the_samples_of_another_generator_is_named_statistically():
    part = checks.grade_exercise_1(Exercise1Calls(axis=0, generator="default_rng"), checks.Draw(7, 400))
    assert part.mistakes == ["sums_over_samples"] and "exactly" not in " ".join(part.diagnosis)


def test_exercise_1_by_default_draws_the_quick_size_and_says_so(monkeypatch):
    assert check_exercise_1.QUICK_N_SAMPLES < check_exercise_1.A1_N_SAMPLES
    monkeypatch.setattr(check_exercise_1, "QUICK_N_SAMPLES", 2500)  # the quick size, made smaller for the test
    calls = Exercise1Calls()
    part = checks.grade_exercise_1(calls, checks.Draw(7))
    assert part.passed
    assert [n for _, n, _ in calls.asked] == [2500] * 2  # no lesson-size draw: the draws are the grader's
    assert part.notes[0].startswith("drawn: 2,500 pairs at the lesson's seed 42")
    assert "--n-samples 100000" in part.notes[0]


def test_exercise_1_off_the_graders_draw_is_asked_for_small_draws_never_the_lessons_size(monkeypatch):
    calls = Exercise1Calls(generator="default_rng")
    monkeypatch.setattr(check_exercise_1, "QUICK_N_SAMPLES", 1000)
    part = checks.grade_exercise_1(calls, checks.Draw(7))
    asked = [(n, d) for _, n, d in calls.asked]
    assert part.passed and asked[:2] == [(1000, 1024), (1000, checks.Draw(7).exercise_1_d_k)]
    assert asked[2:] == evidence_sizes() and max(n * d for n, d in asked[2:]) <= 64  # 64 products at most
    assert len({s for s, _, _ in calls.asked[2:]}) == len(asked) - 2  # a seed of its own per call


def test_exercise_1_without_n_samples_is_told_how_to_grade_quicker(monkeypatch):
    monkeypatch.setattr(check_exercise_1, "A1_N_SAMPLES", 4000)  # what a function without n_samples draws, made small
    part = checks.grade_exercise_1(Exercise1Calls(accepts_n=False, n_fixed=4000), checks.Draw(7))
    assert part.passed, part.checks
    assert "takes no n_samples" in part.notes[0] and "4,000 pairs" in part.notes[0]


def test_exercise_1_off_the_graders_draw_without_n_samples_cannot_show_it_draws_and_draws_no_more(monkeypatch):
    monkeypatch.setattr(check_exercise_1, "A1_N_SAMPLES", 4000)  # what a function without n_samples draws, made small
    calls = Exercise1Calls(accepts_n=False, n_fixed=4000, generator="default_rng")
    part = checks.grade_exercise_1(calls, checks.Draw(7))
    assert not part.passed and "give it the skeleton's parameters" in part.checks[-1].detail
    assert len(calls.asked) == 2  # the two calls only: none at the lesson's size again


# -- notes only where they bear on the failure -----------------------------------------------

class Constant:
    def __init__(self, values):
        self.values, self.lost = values, None

    def __call__(self, **kwargs):
        return Outcome("ok", (np.asarray(self.values(**kwargs)),), False, kwargs=tuple(kwargs))


def test_the_entropy_note_is_not_printed_beside_a_named_mistake():
    def bits(seed, d_ks, T):
        return checks.exercise2_reference(seed, tuple(d_ks), T, reseed=False)["unscaled"] / math.log(2)

    def right(seed, d_ks, T):
        return checks.exercise2_reference(seed, tuple(d_ks), T, reseed=False)["unscaled"]

    wrong = checks.grade_exercise_2(Constant(bits), checks.Draw(7))
    assert wrong.mistakes == ["bits"] and not any("fall at every step" in n for n in wrong.notes)
    ok = checks.grade_exercise_2(Constant(right), checks.Draw(7))
    assert ok.passed and any("fall at every step" in n for n in ok.notes)  # the lesson's draw rises 4 -> 16
