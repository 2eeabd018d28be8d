"""sdpa-lab new-solutions / grade: the skeleton, the verdicts on the shipped examples, the diagnoses, and safety."""

from __future__ import annotations

import math
import re
import textwrap

import numpy as np
import pytest

from sdpa_lab.attention import scaled_dot_product_attention, softmax
from sdpa_lab.cli import main
from sdpa_lab.grading import check_exercise_1, checks
from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading.grade import FAIL, PASS, UNUSABLE, format_grade, grade
from sdpa_lab.grading.runner import Outcome
from sdpa_lab.grading.skeleton import write_skeleton

N_SAMPLES = 2000  # Exercise 1's pairs in these tests: the same checks, a fraction of a second


@pytest.fixture(scope="module")
def examples(request):
    return request.config.rootpath / "examples" / "solutions"


def write(tmp_path, text: str, name: str = "solutions.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# -- the diagnosis, in process: every variant's own outputs name its mistakes --------------

def _probes(make):
    return [(args, kwargs) for _, args, kwargs in make()]


def test_correct_variants_are_the_reference_code():
    for args, _ in _probes(checks.attention_probes):
        want = scaled_dot_product_attention(*args)
        assert M.same_arrays(M.Attention()(*args), want, 1e-12)
    for args, kwargs in _probes(checks.softmax_probes):
        assert M.same_arrays(M.Softmax()(*args, **kwargs), (softmax(*args, **kwargs),), 1e-12)


# The forward multiplies only on the cube probe, or subtracts the max only where the scores are square.
HIDING = {"k_transpose", "k_not_transposed", "v_transposed", "max_without_keepdims"}


@pytest.mark.parametrize("variant", [v for v in M.ATTENTION_VARIANTS if len(v.mistakes()) <= 2],
                         ids=lambda v: "+".join(v.mistakes()) or "correct")
def test_attention_diagnosis_recovers_the_mistakes_of_each_variant(variant):
    probes = _probes(checks.attention_probes)
    outcomes = []
    for args, _ in probes:
        got = variant(*args)
        outcomes.append(Outcome("error") if isinstance(got, str) else Outcome("ok", got, True))
    d = M.diagnose(M.ATTENTION_VARIANTS, probes, outcomes)
    assert d.variant is not None
    # The probes tell the mistakes apart, except where one hides another (K.T, K, V^T or a max without keepdims
    # raising on most probes, before the softmax runs or where its mistakes do not show; the batch axis on
    # batches of one); then a variant with no more mistakes fits as well.
    assert len(d.mistakes) <= len(variant.mistakes())
    if not HIDING & set(variant.mistakes()) or len(variant.mistakes()) == 1:
        assert set(d.mistakes) == set(variant.mistakes())


@pytest.mark.parametrize("variant", M.SOFTMAX_VARIANTS, ids=lambda v: "+".join(v.mistakes()) or "correct")
def test_softmax_diagnosis_recovers_the_mistakes_of_each_variant(variant):
    probes = _probes(checks.softmax_probes)
    outcomes = [Outcome("error") if isinstance(got, str) else Outcome("ok", got)
                for got in (variant(*args, **kwargs) for args, kwargs in probes)]
    named = M.diagnose(M.SOFTMAX_VARIANTS, probes, outcomes).mistakes
    if variant.shift == "flat":  # raising on most probes, it hides what the rows would show
        assert "max_without_keepdims" in named and len(named) <= len(variant.mistakes())
    elif variant.total == "whole" and variant.shift != "row":
        # exp(x - x.max()) or exp(x) over its whole sum does not depend on the axis: ignoring it shows nowhere.
        assert set(named) == set(variant.mistakes()) - {"ignores_axis"}
    else:
        assert set(named) == set(variant.mistakes())


def test_outputs_no_variant_reproduces_get_no_named_mistake():
    probes = _probes(checks.attention_probes)
    outcomes = [Outcome("ok", (np.zeros((1, 1, 1)), np.zeros((1, 1, 1))), True) for _ in probes]
    assert M.diagnose(M.ATTENTION_VARIANTS, probes, outcomes).variant is None


def test_the_lesson_code_upcasts_float32_as_the_upcast_variant_says():
    # The lesson's own forward, verbatim: `/ np.sqrt(d_k)` promotes float32 to float64 under NumPy 2.
    def lesson_forward(Q, K, V):
        d_k = Q.shape[-1]
        scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
        return softmax(scores, axis=-1) @ V, softmax(scores, axis=-1)

    Q, K, V = (np.random.default_rng(i).standard_normal((2, 5, 8)).astype(np.float32) for i in range(3))
    got = lesson_forward(Q, K, V)
    assert got[0].dtype == np.float64
    assert M.same_arrays(got, M.Attention(upcast=True)(Q, K, V), M.tolerance(np.float32))
    assert not M.same_arrays(got, M.Attention()(Q, K, V), M.tolerance(np.float32))


# -- the exercises' checks, on made-up answers (no process needed) ---------------------------

class Respond:
    """Stands in for runner.Calls: each call returns what `answer(**kwargs)` gives (the grader's own arguments)."""

    def __init__(self, answer, accepted=None):
        self.answer, self.accepted, self.lost = answer, accepted, None

    def __call__(self, *args, **kwargs):
        values = self.answer(**kwargs)
        accepted = tuple(kwargs) if self.accepted is None else self.accepted
        return Outcome("ok", tuple(np.asarray(v) for v in values), True, kwargs=accepted)


DRAW = checks.Draw(seed=7, n_samples=3000)


def _se(d_k, n=DRAW.n_samples):
    return d_k * math.sqrt((2 + 6 / d_k) / n)


def test_exercise_1_the_seeds_draw_or_another_draw_passes_and_other_numbers_fail():
    def drawn(seed, n_samples, d_k):
        return checks.exercise1_reference(seed, n_samples, d_k, False)

    part = checks.grade_exercise_1(Respond(drawn), DRAW)
    assert part.passed and not any("np.random.seed's stream" in n for n in part.notes)

    def other_generator(seed, n_samples, d_k):  # not the seed's draw: another generator's, drawn
        rng = np.random.default_rng(seed)
        scores = np.sum(rng.standard_normal((n_samples, d_k)) * rng.standard_normal((n_samples, d_k)), axis=1)
        return scores.var(), (scores / np.sqrt(d_k)).var()

    part = checks.grade_exercise_1(Respond(other_generator), DRAW)
    assert part.passed and [c.passed for c in part.checks] == [True] * 9  # the lesson claims variances, not a stream
    assert "SE from d_k, as a draw's" in part.checks[3].detail and "small sizes" in part.checks[-1].what
    assert any("the lesson's printed digits need np.random.seed(42)" in n for n in part.notes)

    def near(seed, n_samples, d_k):  # statistically fine at every call, but the same numbers for every seed: no draw
        return d_k + _se(d_k, n_samples), (d_k + _se(d_k, n_samples)) / d_k

    part = checks.grade_exercise_1(Respond(near), DRAW)
    assert [c.passed for c in part.checks] == [True] * 8 + [False] and "never repeat" in part.checks[-1].detail

    def far(seed, n_samples, d_k):
        return d_k + 5 * _se(d_k), (d_k + 5 * _se(d_k)) / d_k

    assert [c.passed for c in checks.grade_exercise_1(Respond(far), DRAW).checks] == [False, False, True, False] * 2


def test_exercise_1_names_an_unscaled_or_d_k_scaled_variance():
    def unscaled(seed, n_samples, d_k):
        raw = checks.exercise1_reference(seed, n_samples, d_k, False)[0]
        return raw, raw

    def by_d_k(seed, n_samples, d_k):
        raw = checks.exercise1_reference(seed, n_samples, d_k, False)[0]
        return raw, raw / d_k**2

    assert checks.grade_exercise_1(Respond(unscaled), DRAW).mistakes == ["no_scale"]
    assert checks.grade_exercise_1(Respond(by_d_k), DRAW).mistakes == ["divides_by_dk"]


def test_exercise_1_without_n_samples_is_judged_at_the_lessons_n(monkeypatch):
    drawn = []
    monkeypatch.setattr(check_exercise_1, "exercise1_reference",
                        lambda seed, n, d_k, continued: drawn.append(n) or (0.0, 0.0))
    part = checks.grade_exercise_1(Respond(lambda **kw: (1030.0, 1030.0 / 1024), accepted=("seed", "d_k")), DRAW)
    assert set(drawn) == {100_000} and "drawn: 100,000 pairs" in part.notes[0]


def test_exercise_2_the_seeds_draw_and_its_classic_slips():
    def ref(key, reseed=False, scale=1.0):
        return lambda seed, d_ks, T: [list(checks.exercise2_reference(seed, tuple(d_ks), T, reseed)[key] / scale)]

    assert checks.grade_exercise_2(Respond(ref("unscaled")), DRAW).passed
    assert checks.grade_exercise_2(Respond(ref("scaled")), DRAW).mistakes == ["scaled_entropies"]
    reseeded = checks.grade_exercise_2(Respond(ref("unscaled", reseed=True)), DRAW)  # the lesson fixes no seed
    assert reseeded.passed and not reseeded.mistakes and any("reseeded before each d_k" in n for n in reseeded.notes)
    assert checks.grade_exercise_2(Respond(ref("unscaled", scale=math.log(2))), DRAW).mistakes == ["bits"]
    lesson = [list(checks.exercise2_reference(42, (4, 16, 64, 256), 8, False)["unscaled"])]
    fixed = checks.grade_exercise_2(Respond(lambda **kw: lesson), DRAW)  # the lesson's numbers, whatever asked
    assert not fixed.passed and [c.passed for c in fixed.checks][:2] == [True, True]
    assert not checks.grade_exercise_2(Respond(lambda **kw: [[0.5, 0.4, 0.3, 9.0]]), DRAW).passed  # above log 8


def test_exercise_3_argsorts():
    def ref(seed, d_k, T):
        return checks.exercise3_reference(seed, d_k, T)

    assert checks.grade_exercise_3(Respond(lambda **kw: (ref(**kw), ref(**kw))), DRAW).passed
    assert checks.grade_exercise_3(Respond(lambda **kw: (ref(**kw), ref(**kw)[::-1])), DRAW).mistakes == ["reversed"]
    lesson = ref(42, 256, 8)
    assert not checks.grade_exercise_3(Respond(lambda **kw: (lesson, lesson)), DRAW).passed  # fixed: fails elsewhere
    assert not checks.grade_exercise_3(Respond(lambda **kw: (lesson, np.zeros(8, dtype=int))), DRAW).passed


# -- the skeleton and the CLI ----------------------------------------------------------------

def test_new_solutions_writes_a_skeleton_and_never_overwrites(tmp_path, capsys):
    path = tmp_path / "mine.py"
    assert main(["new-solutions", str(path)]) == 0
    text = path.read_text()
    compile(text, str(path), "exec")
    for signature in ("def softmax(x, axis=-1)", "def scaled_dot_product_attention(Q, K, V)",
                      "def exercise_1(seed=42, n_samples=100_000, d_k=1024)",
                      "def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8)", "def exercise_3(seed=42, d_k=256, T=8)"):
        assert signature in text
    path.write_text("# my work\n")
    assert main(["new-solutions", str(path)]) == 2
    assert path.read_text() == "# my work\n"
    assert "not overwriting" in capsys.readouterr().err


def test_an_unfilled_skeleton_grades_as_not_written(tmp_path):
    g = grade(write_skeleton(tmp_path / "s.py"), time_limit=20)
    assert g.exit_status == FAIL
    assert [p.verdict for p in g.parts] == ["not written yet"] * 5


# -- the shipped examples, graded in their own process ------------------------------------

def test_the_correct_example_passes_everything(examples, capsys):
    assert main(["grade", str(examples / "correct.py"), "--n-samples", str(N_SAMPLES)]) == PASS
    out = capsys.readouterr().out
    assert "FAIL" not in out and "5 of 5 pass" in out
    assert "your draws are np.random.seed(42), the lesson's smaller d_k, then d_k = 1024, in one stream" in " ".join(
        out.split())


MISTAKE_EXAMPLES = {  # file: {part: mistakes named}; every other part passes
    "no_scale": {"scaled_dot_product_attention": ["no_scale"]},
    "divides_by_dk": {"scaled_dot_product_attention": ["divides_by_dk"], "exercise_1": ["divides_by_dk"]},
    "wrong_axis": {"scaled_dot_product_attention": ["wrong_axis"]},
    "no_max_subtraction": {"softmax": ["no_max_subtraction"]},  # the forward only calls that softmax
    "k_transpose_3d": {"scaled_dot_product_attention": ["k_transpose"]},
    "swapped_outputs": {"scaled_dot_product_attention": ["swapped"]},
}


@pytest.mark.parametrize("name", MISTAKE_EXAMPLES)
def test_each_mistake_example_is_diagnosed(examples, name):
    g = grade(examples / f"{name}.py", time_limit=30, n_samples=N_SAMPLES)
    assert g.exit_status == FAIL
    assert {p.name: p.mistakes for p in g.parts if not p.passed} == MISTAKE_EXAMPLES[name]
    text = " ".join(format_grade(g).split())  # unwrapped; its numbers written the one way, where made (no 1e-05)
    assert not re.search(r"(?<![\w.])\d+(\.\d+)?e[-+]?\d+\b", text), text
    for mistakes in MISTAKE_EXAMPLES[name].values():
        for key in mistakes:
            assert f"mistake: {M.MISTAKES[key].title}" in text and M.MISTAKES[key].reread in text


# -- files that cannot be used, or misbehave ------------------------------------------------

def test_a_syntax_error_is_reported_with_its_line(tmp_path, capsys):
    path = write(tmp_path, """\
        import numpy as np

        def softmax(x, axis=-1)
            return x
        """)
    assert main(["grade", str(path)]) == UNUSABLE
    out = capsys.readouterr().out
    assert "syntax error" in out and "line 3" in out and "def softmax(x, axis=-1)" in out


def test_an_exception_shows_only_the_learners_traceback(tmp_path):
    path = write(tmp_path, """\
        import numpy as np

        def helper(x):
            return x.nope

        def softmax(x, axis=-1):
            return helper(x)
        """)
    g = grade(path, time_limit=20)
    part = g.parts[0]
    assert g.exit_status == FAIL and not part.passed
    assert 'solutions.py", line 4, in helper' in part.error and 'line 7, in softmax' in part.error
    assert "AttributeError" in part.error and "sdpa_lab" not in part.error


def test_an_exception_at_import_makes_the_file_unusable(tmp_path):
    # a statement that runs at import: the assignment softmax needs, raising before any function is defined
    code = "import numpy as np\nSCALE = int('boom')\ndef softmax(x, axis=-1):\n    return x * SCALE\n"
    g = grade(write(tmp_path, code), time_limit=20)
    assert g.exit_status == UNUSABLE
    assert "line 2" in g.load.message and "ValueError: invalid literal" in g.load.message
    assert "an error while importing it" in format_grade(g)


def test_an_endless_loop_is_stopped_at_the_time_limit(tmp_path):
    path = write(tmp_path, """\
        def softmax(x, axis=-1):
            while True:
                pass

        def exercise_3():
            return [0, 1], [1, 0]
        """)
    g = grade(path, time_limit=1.5)
    assert g.exit_status == FAIL
    assert g.parts[0].verdict == "hangs" and "time limit of 1.5 s" in g.parts[0].lost.message
    assert g.parts[4].lost is None  # a fresh process answers the next call


def test_an_endless_loop_at_import_makes_the_file_unusable(tmp_path):
    # a loop that binds a name softmax needs: it runs at import (top-level code that binds nothing needed does not)
    g = grade(write(tmp_path, "def softmax(x, axis=-1):\n    return x * STEP\nwhile True:\n    STEP = 1\n"),
              time_limit=1.5)
    assert g.exit_status == UNUSABLE and g.load.status == "timeout"
    assert "while importing the file" in g.load.message


def test_a_memory_blow_up_is_stopped_at_the_memory_limit(tmp_path):
    path = write(tmp_path, """\
        import numpy as np

        def softmax(x, axis=-1):
            hoard = []
            while True:
                hoard.append(np.ones(2**20))  # 8 MiB more each time
        """)
    g = grade(path, time_limit=20, memory_mib=400)
    assert g.exit_status == FAIL
    assert g.parts[0].verdict == "runs out of memory" and "400 MiB" in g.parts[0].lost.message


def test_the_learners_files_land_in_a_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, """\
        import os
        os.makedirs("results", exist_ok=True)
        open("results/solutions.csv", "w").write("mine")
        """)
    g = grade(path, time_limit=20)
    assert g.exit_status == UNUSABLE  # defines none of the functions
    assert not (tmp_path / "results").exists()


# -- the table the workflow writes (results/solutions.csv) ----------------------------------

def test_rows_hold_every_verdict_check_and_diagnosis(examples):
    from sdpa_lab.grading.grade import COLUMNS, rows

    table = rows(grade(examples / "no_scale.py", time_limit=30, n_samples=N_SAMPLES))
    assert all(tuple(r) == COLUMNS for r in table)
    verdicts = {r["part"]: r for r in table if r["item"] == "verdict"}
    assert verdicts["softmax"]["verdict"] == "pass"
    assert verdicts["scaled_dot_product_attention"]["detail"] == "no_scale"
    assert any(r["item"] == "diagnosis" and "mistake: no scale" in r["detail"] for r in table)


def test_grade_rows_records_an_unusable_file_or_a_grader_failure_instead_of_raising(tmp_path, monkeypatch):
    from sdpa_lab.grading import grade as grade_module

    row, total = grade_module.grade_rows(tmp_path / "missing.py")
    assert row["verdict"] == "unusable" and "no such file" in row["detail"]
    assert (total["part"], total["verdict"], total["points"]) == ("total", "unusable", 0.0)
    assert total["detail"].startswith("could not be graded: ") and total["detail"].endswith("0 of 10 points")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(grade_module, "grade", broken)
    [row] = grade_module.grade_rows(tmp_path / "x.py")
    assert row["verdict"] == "unusable" and "OSError: disk full" in row["detail"]


def test_a_solutions_file_may_import_its_own_helper_module(tmp_path, examples):
    (tmp_path / "my_softmax.py").write_text((examples / "correct.py").read_text())
    path = write(tmp_path, "from my_softmax import softmax\n")
    g = grade(path, time_limit=20)
    assert g.parts[0].passed and g.parts[1].verdict == "missing"


# -- the workflow: --config solutions=FILE -------------------------------------------------

def test_the_config_accepts_a_solutions_path_and_nothing_else_there(tiny_config):
    from sdpa_lab.config import config_errors

    assert config_errors({**tiny_config, "solutions": "my_solutions.py"}) == []
    for bad in (3, "", ["a.py"]):
        [line] = config_errors({**tiny_config, "solutions": bad})
        assert line.startswith("config setting solutions:")


def test_the_report_section_adds_nothing_else_to_the_report(tmp_path, examples, tiny_config):
    from sdpa_lab.claims import decide
    from sdpa_lab.grading.grade import rows
    from sdpa_lab.io import write_csv
    from sdpa_lab.report import html as H
    from sdpa_lab.report.provenance import provenance

    from tests.conftest import write_run

    results = write_run(tmp_path, tiny_config)
    decision, prov = decide(results), provenance(tiny_config, [], tmp_path)
    write_csv(rows(grade(examples / "wrong_axis.py", time_limit=30, n_samples=N_SAMPLES)), tmp_path / "s.csv")
    without = H.render_report(decision, {}, prov)
    with_section = H.render_report(decision, {}, prov, solutions=H.solutions_view(tmp_path / "s.csv"))
    assert "your-solutions" not in without
    section = re.search(r'<section class="claim v-fails" id="your-solutions">.*?</section>\n', with_section, re.S)
    assert section and "mistake: softmax over the wrong axis" in section.group(0)
    assert '<a href="#A3">A3</a>' in section.group(0)  # each check next to the reference run's claim
    # and, first in the summary, the learner's verdicts with links to their section
    yours = re.search(r'<div class="yours[^"]*">\n<h3>Your solutions: .*?</div>\n', with_section, re.S)
    assert yours and with_section.index(yours.group(0)) < with_section.index('class="headline"')
    assert 'href="#your-solutions"' in yours.group(0) and "softmax over the wrong axis" in yours.group(0)
    assert with_section.replace(section.group(0), "").replace(yours.group(0), "") == without


