"""The grader names what the outputs show: the mistake, its fix, and nothing the lesson never claims."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdpa_lab.grading import checks
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading import scale as S
from sdpa_lab.grading.grade import FAIL, PASS, format_grade, grade
from sdpa_lab.grading.runner import Outcome

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
    "divides_by_sqrt_tk": f"c = {1 / math.sqrt(7):.4g} on Q (2, 4, 8)",
    "divides_by_sqrt_tq": f"c = {1 / math.sqrt(4):.4g} on Q (2, 4, 8)",
    "softmax_before_scale": f"the weights' rows sum to {1 / math.sqrt(8):.4g} on Q (2, 4, 8)",
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
    assert ex1.passed and len(ex1.checks) == 8
    assert any("not np.random.seed(42)'s stream" in c.detail for c in ex1.checks)
    assert any("the lesson's printed digits need np.random.seed(42)" in n for n in ex1.notes)


@pytest.mark.parametrize("name", ["whole_array_max", "whole_array_sum", "no_max_subtraction"])
def test_a_forward_that_only_calls_a_wrong_softmax_is_not_blamed(examples, name):
    g = grade(examples / f"{name}.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    forward = next(p for p in g.parts if p.name == "scaled_dot_product_attention")
    assert forward.passed and not forward.mistakes
    assert any("with a correct softmax in its place, every check passes" in n for n in forward.notes)
    assert "to fix: softmax" in format_grade(g) and "to fix: softmax, scaled" not in format_grade(g)


def test_the_lessons_forward_copied_verbatim_passes_with_a_dtype_note(examples):
    g = grade(examples / "lesson_forward.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    assert g.exit_status == PASS
    forward = next(p for p in g.parts if p.name == "scaled_dot_product_attention")
    assert not any("dtype" in c.what for c in forward.checks)  # no check of what the lesson never claims
    (note,) = [n for n in forward.notes if "float64" in n]
    assert "float32 in, float64 out" in note and "math.sqrt(d_k)" in note and "not a fail" in note


def test_the_dtype_note_is_kept_for_float32_only():
    part = checks.Part("f", "f()")
    checks._dtype_note(part, ["float32", "float32"])
    assert part.notes == []
    checks._dtype_note(part, ["float64", "float64"])
    assert len(part.notes) == 1 and part.passed


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
    assert checks.QUICK_N_SAMPLES < checks.A1_N_SAMPLES
    monkeypatch.setattr(checks, "QUICK_N_SAMPLES", 2500)  # the quick size, made smaller for the test
    calls = Exercise1Calls()
    part = checks.grade_exercise_1(calls, checks.Draw(7))
    assert part.passed
    assert [n for _, n, _ in calls.asked] == [2500] * 2  # no lesson-size draw: the draws are the grader's
    assert part.notes[0].startswith("drawn: 2,500 pairs at the lesson's seed 42")
    assert "--n-samples 100000" in part.notes[0]


def test_exercise_1_draws_the_lessons_size_where_the_draw_is_not_the_graders(monkeypatch):
    calls = Exercise1Calls(generator="default_rng")
    monkeypatch.setattr(checks, "QUICK_N_SAMPLES", 1000)
    monkeypatch.setattr(checks, "A1_N_SAMPLES", 2000)  # the lesson's size, made small for the test
    part = checks.grade_exercise_1(calls, checks.Draw(7))
    assert [n for _, n, _ in calls.asked] == [1000, 2000, 1000]  # at seed 42 only
    assert "decided statistically, on the lesson's own 2,000 pairs" in " ".join(part.notes)
    assert "--n-samples 1000" in " ".join(part.notes)


def test_exercise_1_without_n_samples_is_told_how_to_grade_quicker(monkeypatch):
    monkeypatch.setattr(checks, "A1_N_SAMPLES", 4000)  # what a function without n_samples draws, made small
    part = checks.grade_exercise_1(Exercise1Calls(accepts_n=False, n_fixed=4000), checks.Draw(7))
    assert part.passed, part.checks
    assert "takes no n_samples" in part.notes[0] and "4,000 pairs" in part.notes[0]


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


# -- the forward's scale, measured from its outputs -------------------------------------------

LEARNER_SCALES = {  # a scale as a learner writes it (not scale.SCALES's formulas), and the mistakes it is
    "1 / math.sqrt(Q.shape[-1])": (lambda Q, K, V: 1 / math.sqrt(Q.shape[-1]), []),
    "1 (no scale)": (lambda Q, K, V: 1.0, ["no_scale"]),
    "1 / Q.shape[-1]": (lambda Q, K, V: 1 / Q.shape[-1], ["divides_by_dk"]),
    "1 / math.sqrt(d_k), twice": (lambda Q, K, V: (1 / math.sqrt(Q.shape[-1])) / math.sqrt(Q.shape[-1]),
                                  ["divides_by_dk"]),
    "1 / math.sqrt(V.shape[-1])": (lambda Q, K, V: 1 / math.sqrt(V.shape[-1]), ["divides_by_sqrt_dv"]),
    "1 / math.sqrt(K.shape[-2])": (lambda Q, K, V: 1 / math.sqrt(K.shape[-2]), ["divides_by_sqrt_tk"]),
    "1 / math.sqrt(K.shape[1])": (lambda Q, K, V: 1 / math.sqrt(K.shape[1]), ["divides_by_sqrt_tk"]),
    "1 / math.sqrt(Q.shape[1])": (lambda Q, K, V: 1 / math.sqrt(Q.shape[1]), ["divides_by_sqrt_tq"]),
    "1 / math.sqrt(Q.shape[0])": (lambda Q, K, V: 1 / math.sqrt(Q.shape[0]), ["divides_by_sqrt_b"]),
    "1 / np.sqrt(np.sqrt(d_k))": (lambda Q, K, V: 1 / np.sqrt(np.sqrt(Q.shape[-1])), ["divides_by_fourth_root_dk"]),
    "math.sqrt(Q.shape[-1])": (lambda Q, K, V: math.sqrt(Q.shape[-1]), ["multiplies_by_sqrt_dk"]),
    "0.25, written in": (lambda Q, K, V: 0.25, ["other_scale"]),
}


def learner_forward(scale, where="scores"):
    """A forward as a learner might write it, with `scale` applied to the scores, the weights or the output."""
    def forward(Q, K, V):
        c = scale(Q, K, V)
        scores = Q @ np.swapaxes(K, -1, -2)
        z = scores * c if where == "scores" else scores
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        w = w * c if where == "weights" else w
        out = w @ V
        return (out * c if where == "output" else out), w
    return forward


class Forward:
    """Stands in for runner.Calls: runs a forward in process."""

    def __init__(self, forward):
        self.forward, self.lost = forward, None

    def __call__(self, *args, reference_softmax=False, **kwargs):
        return Outcome("ok", self.forward(*args), True)


@pytest.mark.parametrize("where", S.WHERE)
@pytest.mark.parametrize("code", LEARNER_SCALES)
def test_each_scale_is_named_by_its_measured_value(code, where):
    scale, named = LEARNER_SCALES[code]
    part = checks.grade_attention(Forward(learner_forward(scale, where)), checks.Draw(7))
    # A factor of 1 after the softmax changes nothing: that is no scale at all.
    want = named + (["softmax_before_scale"] if where != "scores" and named != ["no_scale"] else [])
    assert part.mistakes == want
    assert part.passed == (want == [])
    text = " ".join(part.diagnosis)
    assert "none of the classic mistakes" not in text and "something else differs" not in text
    if "other_scale" in want:
        assert "c = 0.25 on all 6 probes" in text or "rows sum to 0.25" in text \
            or "weights @ V times 0.25" in text


def test_a_scale_that_depends_on_the_shapes_but_matches_nothing_is_reported_with_its_values():
    part = checks.grade_attention(Forward(learner_forward(lambda Q, K, V: 1 / math.log(Q.shape[-1] + 3))),
                                  checks.Draw(7))
    assert part.mistakes == ["other_scale"]
    text = " ".join(part.diagnosis)
    assert f"c = {1 / math.log(11):.4g} on Q (2, 4, 8)" in text and "matches none of" in text
    assert "fix the scale, then grade again" in text and "something else differs" not in text


TRUE_SCALES = {  # each candidate's value, written out here apart from scale.SCALES
    "sqrt_dk": lambda s: 1 / math.sqrt(s.d_k), "none": lambda s: 1.0, "dk": lambda s: 1 / s.d_k,
    "sqrt_dv": lambda s: 1 / math.sqrt(s.d_v), "sqrt_tk": lambda s: 1 / math.sqrt(s.T_k),
    "sqrt_tq": lambda s: 1 / math.sqrt(s.T_q), "sqrt_b": lambda s: 1 / math.sqrt(s.B),
    "fourth_root_dk": lambda s: s.d_k ** -0.25, "times_sqrt_dk": lambda s: math.sqrt(s.d_k),
}


def test_the_candidates_are_the_ones_written_out_here():
    assert set(TRUE_SCALES) == set(S.SCALES)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(TRUE_SCALES)), st.sampled_from(S.WHERE), st.integers(1, 4), st.integers(1, 9),
       st.integers(2, 9), st.integers(2, 32), st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_the_reading_names_a_scale_by_its_value_on_any_sizes(key, where, B, T_q, T_k, d_k, d_v, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal(shape) for shape in ((B, T_q, d_k), (B, T_k, d_k), (B, T_k, d_v)))
    shapes = S.Shapes(B, T_q, T_k, d_k, d_v)
    c = TRUE_SCALES[key](shapes)
    outcome = Outcome("ok", learner_forward(lambda *_: c, where)(Q, K, V), True)
    reading = S.read([("probe", (Q, K, V), {})], [outcome])
    assume(reading.fits)  # not every row one-hot
    (_, fit), = reading.fits
    assert fit.c == pytest.approx(1.0 if where != "scores" else c, rel=1e-9)
    assert reading.where == ("scores" if abs(c - 1) < 1e-12 else where)
    # The scale is named, with every candidate that has the same value on these sizes, and no other.
    assert key in reading.scales
    assert all(abs(TRUE_SCALES[k](shapes) - c) <= S.MATCH * c for k in reading.scales)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 9), st.integers(2, 9), st.integers(2, 64), st.integers(1, 9),
       st.integers(0, 2**32 - 1), st.sampled_from([np.float64, np.float32]))
def test_the_correct_forward_is_never_given_a_scale_mistake(B, T_q, T_k, d_k, d_v, seed, dtype):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal(shape).astype(dtype) for shape in ((B, T_q, d_k), (B, T_k, d_k), (B, T_k, d_v)))
    outcome = Outcome("ok", learner_forward(lambda Q, K, V: 1 / math.sqrt(Q.shape[-1]))(Q, K, V), True)
    reading = S.read([("probe", (Q, K, V), {})], [outcome])
    assert reading.mistakes() == [] and S.describe(reading) == []
    if reading.fits:
        assert reading.scales[0] == "sqrt_dk" and reading.where == "scores"


EXERCISE_1_SCALES = {  # the factor on Exercise 1's scores, as a learner writes it, and the mistake named
    "1 (no scale)": (lambda d, n: 1.0, "no_scale"),
    "1 / d": (lambda d, n: 1 / d, "divides_by_dk"),
    "1 / np.sqrt(np.sqrt(d))": (lambda d, n: 1 / np.sqrt(np.sqrt(d)), "divides_by_fourth_root_dk"),
    "np.sqrt(d)": (lambda d, n: np.sqrt(d), "multiplies_by_sqrt_dk"),
    "1 / np.sqrt(Q.shape[0])": (lambda d, n: 1 / np.sqrt(n), "divides_by_sqrt_n"),
    "0.3, written in": (lambda d, n: 0.3, "other_scale"),
}


@pytest.mark.parametrize("code", EXERCISE_1_SCALES)
def test_exercise_1_names_its_scale_by_value(code):
    scale, key = EXERCISE_1_SCALES[code]

    def answer(seed, n_samples, d_k):
        raw = checks.exercise1_reference(seed, n_samples, d_k, True)[0]
        return raw, raw * scale(d_k, n_samples) ** 2  # the variance of c * scores

    part = checks.grade_exercise_1(Exercise1Answer(answer), checks.Draw(7, 3000))
    assert part.mistakes == [key]
    assert f"so the scores were multiplied by c = {scale(1024, 3000):.4g}" in " ".join(part.diagnosis)
    # the draw and its raw variance are right at both calls: only the scaled variance and raw / scaled fail
    assert [c.passed for c in part.checks] == [True, False, False, True] * 2


class Exercise1Answer:
    """Stands in for runner.Calls: exercise_1 answered by `answer` in process."""

    def __init__(self, answer):
        self.answer, self.lost = answer, None

    def __call__(self, **kwargs):
        return Outcome("ok", tuple(np.asarray(v) for v in self.answer(**kwargs)), True, kwargs=tuple(kwargs))


EXERCISE_2_SCALES = {  # the factor a learner's Exercise 2 puts on Kmat @ q, and the c the diagnosis names
    "1 / np.sqrt(d_k)": (lambda d, T: 1 / np.sqrt(d), "1/sqrt(d_k)"),
    "1 / d_k": (lambda d, T: 1 / d, "1/d_k (= 1/sqrt(d_k) applied twice)"),
    "1 / np.sqrt(Kmat.shape[0])": (lambda d, T: 1 / np.sqrt(T), "1/sqrt(T_k)"),
    "0.5, written in": (lambda d, T: 0.5, "a constant"),
}


def _entropies(seed, d_ks, T, scale):
    """Exercise 2 as the lesson draws it, with `scale` on the raw scores (computed here, apart from the grader)."""
    np_rs = np.random.RandomState(seed)
    out = []
    for d_k in d_ks:
        q, K = np_rs.randn(d_k), np_rs.randn(T, d_k)
        z = (K @ q) * scale(d_k, T)
        p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        out.append(float(-np.sum(p * np.log(p + 1e-12))))
    return out


@pytest.mark.parametrize("code", EXERCISE_2_SCALES)
def test_exercise_2_names_a_scale_on_the_entropies_by_its_value(code):
    scale, label = EXERCISE_2_SCALES[code]
    part = checks.grade_exercise_2(Constant(lambda seed, d_ks, T: _entropies(seed, d_ks, T, scale)), checks.Draw(7))
    assert part.mistakes == ["scaled_entropies"]
    text = " ".join(part.diagnosis)
    assert f"softmax(c * Kmat @ q) with c = {label} (c = {scale(4, 8):.4g}" in text


def test_exercise_2_unscaled_entropies_pass_and_a_stream_reseeded_is_no_scale():
    ok = checks.grade_exercise_2(Constant(lambda seed, d_ks, T: _entropies(seed, d_ks, T, lambda d, T: 1.0)),
                                 checks.Draw(7))
    assert ok.passed and ok.mistakes == []

    def reseeded(seed, d_ks, T):
        return [_entropies(seed, [d], T, lambda d, T: 1.0)[0] for d in d_ks]

    assert checks.grade_exercise_2(Constant(reseeded), checks.Draw(7)).mistakes == ["reseeded"]


@pytest.mark.parametrize("variant", [v for v in M.ATTENTION_VARIANTS if len(v.mistakes()) <= 2]
                         + [M.Attention(scale=k, where=w) for k in S.SCALES for w in S.WHERE],
                         ids=lambda v: f"{v.where}:" + "+".join(v.mistakes()) or "correct")
def test_the_measured_scale_keeps_every_variants_mistakes_named(variant):
    # The grader compares only the variants with the measured scale: that must not lose any mistake.
    probes = checks.attention_probes(7)
    outcomes = []
    for _, args, _ in probes:
        got = variant(*args)
        outcomes.append(Outcome("error") if isinstance(got, str) else Outcome("ok", got, True))
    reading = S.read(probes, outcomes)
    if reading.named and not isinstance(reading.scales[0], float) and variant.scale != "none":
        assert variant.scale in reading.scales and reading.where == variant.where
    d = M.diagnose(M.forward_variants(reading), [(args, kwargs) for _, args, kwargs in probes], outcomes)
    assert d.variant is not None
    if "k_transpose" not in variant.mistakes() or len(variant.mistakes()) == 1:  # as test_grading's own test
        assert set(d.mistakes) == set(variant.mistakes())


def test_the_graders_probes_tell_every_pair_of_candidate_scales_apart():
    # On one probe or another, any two candidates differ by far more than the match tolerance, so a
    # measured factor names one candidate (1/d_k and sqrt(d_k) applied twice are one number, one name).
    shapes = [S.Shapes.of(*args) for _, args, _ in checks.attention_probes(7)]
    for a in S.SCALES:
        for b in S.SCALES:
            if a < b:
                gap = max(abs(math.log(S.SCALES[a].value(s) / S.SCALES[b].value(s))) for s in shapes)
                assert gap > 100 * S.MATCH, (a, b, gap)


def test_a_wrong_scale_is_named_even_where_something_else_differs_too():
    def forward(Q, K, V):
        out, w = learner_forward(lambda Q, K, V: 1 / math.sqrt(K.shape[1]))(Q, K, V)
        return out + 0.01, w  # and an output no variant of the lesson's code gives

    part = checks.grade_attention(Forward(forward), checks.Draw(7))
    assert part.mistakes == ["divides_by_sqrt_tk"]
    text = " ".join(part.diagnosis)
    assert "1/sqrt(T_k)" in text and "something else differs too" in text


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(EXERCISE_1_SCALES)), st.integers(2, 4096), st.integers(100, 100_000),
       st.floats(100, 1e5))
def test_exercise_1_names_its_scale_on_any_sizes(code, d, n, raw):
    from sdpa_lab.grading.diagnosis import exercise_1_scale

    scale, key = EXERCISE_1_SCALES[code]
    c = float(scale(d, n))
    others = [float(s(d, n)) for k, (s, _) in EXERCISE_1_SCALES.items() if k != code] + [1 / math.sqrt(d)]
    assume(all(abs(math.log(c / o)) > 0.01 for o in others))  # sizes where the candidates differ
    [(named, text)] = exercise_1_scale(raw / (raw * c * c), d, n)
    assert named == key and f"c = {c:.4g}" in text


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 16), st.floats(0.01, 20), st.integers(0, 2**32 - 1))
def test_the_entropy_is_inverted_to_its_scale(T, c, seed):
    from sdpa_lab.attention import lesson_entropy, softmax
    from sdpa_lab.grading.diagnosis import entropy_scale

    raw = np.random.default_rng(seed).standard_normal(T) * 3
    h = lesson_entropy(softmax(c * raw))
    assume(1e-3 < h < math.log(T) - 1e-3)  # where the entropy still moves with c
    assert entropy_scale(raw, h) == pytest.approx(c, rel=1e-6)
