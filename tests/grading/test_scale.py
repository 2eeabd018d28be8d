"""The scale a learner's code applies, measured from its outputs and named by its value (sdpa_lab.grading.scale)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdpa_lab.grading import checks
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading import scale as S
from sdpa_lab.grading.runner import Outcome
from sdpa_lab.numbers import number

from tests.grading.test_grading import HIDING


class Constant:
    """Stands in for runner.Calls: each call returns one array, `values(**kwargs)`."""

    def __init__(self, values):
        self.values, self.lost = values, None

    def __call__(self, **kwargs):
        return Outcome("ok", (np.asarray(self.values(**kwargs)),), False, kwargs=tuple(kwargs))


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
    assert f"c = {number(1 / math.log(11), digits=4)} on Q (2, 4, 8)" in text and "matches none of" in text
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
    assert f"so the scores were multiplied by c = {number(scale(1024, 3000), digits=4)}" in " ".join(part.diagnosis)
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
    assert f"softmax(c * Kmat @ q) with c = {label} (c = {number(scale(4, 8), digits=4)}" in text


def test_exercise_2_unscaled_entropies_pass_and_a_stream_reseeded_is_no_scale():
    ok = checks.grade_exercise_2(Constant(lambda seed, d_ks, T: _entropies(seed, d_ks, T, lambda d, T: 1.0)),
                                 checks.Draw(7))
    assert ok.passed and ok.mistakes == []

    def reseeded(seed, d_ks, T):
        return [_entropies(seed, [d], T, lambda d, T: 1.0)[0] for d in d_ks]

    part = checks.grade_exercise_2(Constant(reseeded), checks.Draw(7))  # the lesson fixes no seed: a note
    assert part.passed and part.mistakes == [] and any("reseeded before each d_k" in n for n in part.notes)


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
    if not HIDING & set(variant.mistakes()) or len(variant.mistakes()) == 1:  # as test_grading's own test
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
    assert named == key and f"c = {number(c, digits=4)}" in text


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 16), st.floats(0.01, 20), st.integers(0, 2**32 - 1))
def test_the_entropy_is_inverted_to_its_scale(T, c, seed):
    from sdpa_lab.attention import lesson_entropy, softmax
    from sdpa_lab.grading.diagnosis import entropy_scale

    raw = np.random.default_rng(seed).standard_normal(T) * 3
    h = lesson_entropy(softmax(c * raw))
    assume(1e-3 < h < math.log(T) - 1e-3)  # where the entropy still moves with c
    assert entropy_scale(raw, h) == pytest.approx(c, rel=1e-6)


def test_exercise_1_written_in_answers_fail():
    draw = checks.Draw(seed=7, n_samples=3000)
    # The lesson's d_k = 1024 answered whatever is asked: the call at the grade's own d_k catches it.
    constant = checks.grade_exercise_1(Exercise1Answer(lambda **kw: (1030.0, 1030.0 / 1024)), draw)
    assert not constant.passed and constant.checks[0].passed and not constant.checks[4].passed
    # The expected values themselves, exactly: no draw's variance is.
    exact = checks.grade_exercise_1(Exercise1Answer(lambda seed, n_samples, d_k: (float(d_k), 1.0)), draw)
    assert [c.passed for c in exact.checks] == [True, True, True, False] * 2
    assert "exactly d_k" in exact.checks[3].detail
