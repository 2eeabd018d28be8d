"""Every mistake named from what the code does, and only where one explanation fits; a softmax's mistake charged
once; notes only where they are true of the learner's outputs; one count and one set of points everywhere."""

from __future__ import annotations

import numpy as np
import pytest

from sdpa_lab import claims as C
from sdpa_lab.cli import main
from sdpa_lab.grading import checks, classroom, gradebook
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading.diagnosis import UNIFORM_M4, UNIFORM_VAR, name_mistakes
from sdpa_lab.grading.grade import TOTAL, format_grade, grade, rows
from sdpa_lab.grading.points import RUBRIC, score
from sdpa_lab.grading.runner import Outcome
from sdpa_lab.io import write_csv
from sdpa_lab.report import html as H
from sdpa_lab.report import provenance as P

from tests.grading.notebooks import notebook
from tests.report.conftest import REPORT_CONFIG

N_SAMPLES = 2000  # Exercise 1's pairs when a whole file is graded here: the same checks, quicker


@pytest.fixture(scope="module")
def examples(request):
    return request.config.rootpath / "examples" / "solutions"


def unwrapped(text: str) -> str:
    return " ".join(text.split())


# -- Exercise 1: the variances say what was returned, the ratio a scale only where the raw variance is right ------

class Exercise1:
    """Stands in for runner.Calls: exercise_1 of np.random.seed's stream (or uniforms of another generator),
    returning what `returns` makes of the scores."""

    def __init__(self, returns, draw="randn", sweep=False):
        self.returns, self.draw, self.sweep, self.lost = returns, draw, sweep, None

    def __call__(self, seed, n_samples, d_k):
        if self.draw == "randn":
            rs = np.random.RandomState(seed)
            for d in [x for x in (4, 16, 64, 256) if x < d_k or self.sweep]:  # sweep: a loop over [4, ..., 256, d_k]
                rs.randn(n_samples, d), rs.randn(n_samples, d)
            Q, K = rs.randn(n_samples, d_k), rs.randn(n_samples, d_k)
        else:  # uniforms on [0, 1), from a generator the grader does not reproduce
            rng = np.random.default_rng(seed + 1)
            Q, K = rng.random((n_samples, d_k)), rng.random((n_samples, d_k))
        scores = np.sum(Q * K, axis=1)
        return Outcome("ok", tuple(np.asarray(v) for v in self.returns(scores, d_k)), True,
                       kwargs=("seed", "n_samples", "d_k"))


def test_standard_deviations_are_named_as_such_never_as_a_fourth_root_scale():
    # (sqrt(d_k), 1): raw / scaled = sqrt(d_k), as a d_k^(-1/4) scale gives, but the raw is no variance of d_k.
    part = checks.grade_exercise_1(Exercise1(lambda s, d: (s.std(), (s / np.sqrt(d)).std())), checks.Draw(7, 2000))
    assert part.mistakes == ["standard_deviation"]
    text = " ".join(part.diagnosis)
    assert "about the square roots of the expected variances" in text and "fourth root" not in text
    assert "exactly those of the grader's draw" in text


def test_a_fourth_root_scale_on_the_right_raw_variance_is_still_named_by_its_value():
    part = checks.grade_exercise_1(Exercise1(lambda s, d: (s.var(), (s / d**0.25).var())), checks.Draw(7, 2000))
    assert part.mistakes == ["divides_by_fourth_root_dk"]


def test_a_ratio_over_a_wrong_raw_variance_names_no_scale():
    # Variances of 3 d_k and 3 d_k / sqrt(d_k): neither d_k's, nor a standard deviation's, nor uniforms'.
    part = checks.grade_exercise_1(Exercise1(lambda s, d: (3 * s.var(), 3 * (s / d**0.25).var())),
                                   checks.Draw(7, 2000))
    assert part.mistakes == []
    assert "names a scale only where the raw variance is right" in " ".join(part.diagnosis)


def test_uniform_draws_of_any_generator_are_described_by_their_moments():
    part = checks.grade_exercise_1(Exercise1(lambda s, d: (s.var(), (s / np.sqrt(d)).var()), draw="rand"),
                                   checks.Draw(7, 2000))
    assert part.mistakes == ["uniform_draws"]
    text = " ".join(part.diagnosis)
    assert "7/144" in text and "mean 1/4" in text and "np.random.rand" in text


def test_the_uniform_products_moments_are_the_simulated_ones():
    rng = np.random.default_rng(3)
    uv = rng.random(2_000_000) * rng.random(2_000_000)
    assert UNIFORM_VAR == pytest.approx(7 / 144)
    assert uv.var() == pytest.approx(UNIFORM_VAR, rel=5e-3)
    assert ((uv - uv.mean()) ** 4).mean() == pytest.approx(UNIFORM_M4, rel=2e-2)


# -- Exercise 2: an entropy averaged over the keys ----------------------------------------------------------------

class Entropies:
    def __init__(self, values):
        self.values, self.lost = values, None

    def __call__(self, **kwargs):
        return Outcome("ok", (np.asarray(self.values(**kwargs)),), False, kwargs=tuple(kwargs))


def test_entropies_divided_by_T_are_named_a_mean_instead_of_a_sum():
    def mean(seed, d_ks, T):
        return checks.exercise2_reference(seed, tuple(d_ks), T, reseed=False)["unscaled"] / T

    part = checks.grade_exercise_2(Entropies(mean), checks.Draw(7))
    assert part.mistakes == ["entropy_mean"]
    assert "the right ones divided by T = 8: a mean instead of a sum?" in " ".join(part.diagnosis)
    assert not any("fall at every step" in n for n in part.notes)  # true of the draw's entropies, not of these


# -- one explanation, or none ----------------------------------------------------------------------------------

def test_outputs_two_sets_of_mistakes_explain_alike_name_neither():
    # On the lesson's inputs alone, K untransposed and V transposed both raise: nothing tells them apart.
    probes = checks.attention_probes(7)[:1]
    outcomes = [Outcome("error", message="ValueError")]
    d = M.diagnose(M.ATTENTION_VARIANTS, [(a, k) for _, a, k in probes], outcomes)
    assert d.variant is None and d.mistakes == ()
    tied = {m for v in d.tied for m in v.mistakes()}
    assert {"k_not_transposed", "v_transposed"} <= tied
    part = checks.Part("scaled_dot_product_attention", "f()", [checks.SolutionCheck("", "x", False)])
    name_mistakes(part, M.ATTENTION_VARIANTS, probes, outcomes)
    assert part.mistakes == [] and "names no mistake" in part.diagnosis[-1]


def test_a_causal_mask_shows_as_zero_weights_above_the_diagonal(examples):
    g = grade(examples / "causal_mask.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    text = unwrapped(format_grade(g))
    assert "the weights above the diagonal are 0" in text and "this lesson's forward does not have" in text


# -- one root cause, charged once --------------------------------------------------------------------------------

LATE_SOFTMAX = ("def softmax(x, axis=-1):\n    shifted = x - x.max(axis=axis, keepdims=True)\n"
                "    e = np.exp(shifted)\n    e / e.sum(axis=axis, keepdims=True)")


def test_a_later_softmax_without_return_is_charged_in_the_softmax_alone(examples, tmp_path):
    code = (examples / "correct.py").read_text()
    path = notebook(code, tmp_path / "late_softmax.ipynb", late=LATE_SOFTMAX)
    g = grade(path, time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    by_name = {p.name: p for p in g.parts}
    assert by_name["softmax"].mistakes == ["returns_none"]
    assert [p.name for p in g.parts if not p.passed] == ["softmax"]
    for name in ("scaled_dot_product_attention", "exercise_2", "exercise_3"):
        assert any("every check passes" in n and "fix softmax (above)" in n for n in by_name[name].notes), name
    s = score(classroom.grade_record(g, "late"), RUBRIC)
    assert s["total"] == sum(RUBRIC.values()) - RUBRIC["softmax"]


def test_a_part_with_its_own_mistake_is_still_blamed_for_it(examples, tmp_path):
    code = (examples / "entropy_mean.py").read_text()
    g = grade(notebook(code, tmp_path / "both.ipynb", late=LATE_SOFTMAX), time_limit=30, n_samples=N_SAMPLES,
              seed=7, isolation="none")
    ex2 = next(p for p in g.parts if p.name == "exercise_2")
    assert not ex2.passed and ex2.mistakes == ["entropy_mean"]
    assert any("only this function's own mistakes count" in n for n in ex2.notes)


# -- notes only where they are true --------------------------------------------------------------------------------

def test_variances_with_ddof_1_are_told_so_not_asked_for_a_seed():
    part = checks.grade_exercise_1(Exercise1(lambda s, d: (s.var(ddof=1), (s / np.sqrt(d)).var(ddof=1))),
                                   checks.Draw(7, 2000))
    assert part.passed
    assert any("(a variance with ddof=1)" in c.detail for c in part.checks)  # the grader's own draw, so said
    text = " ".join(part.notes + [c.detail for c in part.checks])
    assert "no seed" not in text and "without np.random.seed" not in text


def test_a_seeded_loop_over_the_lessons_sweep_then_d_k_is_the_graders_draw_with_no_note():
    part = checks.grade_exercise_1(Exercise1(lambda s, d: (s.var(), (s / np.sqrt(d)).var()), sweep=True),
                                   checks.Draw(7, 2000))
    assert part.passed
    assert any("the lesson's d_k = 4, 16, 64, 256, then d_k" in c.detail for c in part.checks)
    assert not any("not those of np.random.seed" in n or "no seed" in n for n in part.notes)


class Softmax64:
    """A softmax computed in float64 whatever comes in, run in process."""

    lost = None

    def __call__(self, x, axis=-1, **_):
        e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
        return Outcome("ok", (e / e.sum(axis=axis, keepdims=True),), False)


def test_the_dtype_note_is_for_a_softmax_that_leaves_float32_not_for_the_lessons_forward(examples):
    part = checks.grade_softmax(Softmax64(), checks.Draw(7))
    assert part.passed and any("float32 in, another dtype out (float64)" in n for n in part.notes)
    g = grade(examples / "lesson_forward.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
    assert not any("dtype out" in n for p in g.parts for n in p.notes)


# -- one grade, said one way -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def graded(examples):
    return [grade(examples / f"{name}.py", time_limit=30, n_samples=N_SAMPLES, seed=7, isolation="none")
            for name in ("exercise_1_std", "causal_mask")]


def test_grade_the_csv_the_report_and_the_class_count_the_same_parts_and_points(graded, tmp_path):
    g = graded[0]
    record = classroom.grade_record(g, "learner")
    s = score(record, RUBRIC)
    assert s["passed"] == 4 and s["of"] == 5 and s["parts"]["exercise_1"] == 0.0  # B4 and B2 both fail
    assert s["total"] == sum(RUBRIC.values()) - RUBRIC["exercise_1"]
    line = s["line"]
    assert line.startswith("4 of 5 pass, ") and line.endswith(" of 10 points")
    assert format_grade(g).splitlines()[-1] == f"{line}; to fix: exercise_1"
    table = rows(g)
    (total,) = [r for r in table if r["part"] == TOTAL]
    assert (total["verdict"], total["points"], total["max_points"], total["detail"]) == (
        s["verdict"], s["total"], s["max"], line)
    assert {r["part"]: r["points"] for r in table if r["item"] == "verdict"} == s["parts"]
    book = gradebook.gradebook_rows([record])
    assert [(r["verdict"], r["points"]) for r in book if r["part"] == "total"] == [(s["verdict"], s["total"])]
    assert gradebook.learner_row(record, RUBRIC)["status"] == line
    csv_path = tmp_path / "solutions.csv"
    write_csv(table, csv_path)
    parts = H.solutions_view(csv_path)
    total_part = next(p for p in parts if p["name"] == TOTAL)
    check = C.Check("B1", "c", "p", "within", 1.0, 1.0, "exact", "x.csv", tolerance=0.1)
    html = H.render_report(C.Decision((check,), {"B1": C.ALPHA_CLAIM}, statements={"B1": "s"}),
                           {}, P.provenance(REPORT_CONFIG, [], tmp_path),
                           solutions=[p for p in parts if p is not total_part], solutions_total=total_part)
    assert f"Your solutions: {line}</h3>" in html and "of 6 pass" not in html


def test_the_overview_lists_every_named_mistake_with_its_count(graded):
    records = [classroom.grade_record(g, f"learner{i}") for i, g in enumerate([*graded, graded[0]])]
    o = gradebook.overview(records)
    assert {(m["key"], m["learners"]) for m in o["mistakes"]} == {("standard_deviation", 2), ("causal_mask", 1)}
    assert all(m["title"] == M.MISTAKES[m["key"]].title for m in o["mistakes"])
    # A learner counts once for a mistake, however many of their parts show it (a scale in the forward and in
    # Exercise 1).
    twice = {**records[0], "parts": [{**p, "mistakes": ["causal_mask"]} for p in records[0]["parts"]]}
    assert {m["key"]: m["learners"] for m in gradebook.overview([twice])["mistakes"]} == {"causal_mask": 1}



class MaskedAfter:
    """A forward that zeroes the weights above the diagonal after the softmax, without renormalizing (no variant
    of the lesson's code does that), run in process."""

    lost = None

    def __call__(self, Q, K, V, **_):
        w = M.Attention()(Q, K, V)[1] * np.tril(np.ones((Q.shape[-2], K.shape[-2])))
        return Outcome("ok", (w @ V, w), True)


def test_weights_zero_above_the_diagonal_are_described_where_no_variant_fits():
    part = checks.grade_attention(MaskedAfter(), checks.Draw(7))
    assert part.mistakes == []
    text = " ".join(part.diagnosis)
    assert "none of the classic mistakes" in text and "the weights above the diagonal are 0" in text


def test_grade_shows_the_points_of_the_class_config_and_refuses_a_bad_one_in_one_line(examples, tmp_path, capsys):
    config = tmp_path / "class.yaml"
    config.write_text("grading_points: {softmax: 1, exercise_3: 0}\n")
    argv = ["grade", str(examples / "causal_mask.py"), "--seed", "7", "--n-samples", str(N_SAMPLES),
            "--isolation", "none"]
    assert main([*argv, "--configfile", str(config)]) == 1
    # softmax 1, the forward 2 of its 4 statements of 2 points, the exercises 2, 2 and 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "4 of 5 pass, 6 of 7 points; to fix: scaled_dot_product_attention"
    config.write_text("grading_points: {softmx: 1}\n")
    assert main([*argv, "--configfile", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["sdpa-lab grade: grading_points: unknown part 'softmx'; the parts are softmax, "
                   "scaled_dot_product_attention, exercise_1, exercise_2, exercise_3"]
