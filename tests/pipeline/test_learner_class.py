"""End to end: a class of twenty files written as learners write them in Jupyter (tests/grading/notebooks.py),
graded by `snakemake grade_class` with the default limits: the correct ones at full marks, none unusable, each
mistake failing and named from what the code does, the scores one row per learner, the overview linking every
learner, and each file's grade the one `sdpa-lab grade` gives it alone."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest

from sdpa_lab.grading import classroom, sandbox
from sdpa_lab.grading.grade import grade

from tests.grading.notebooks import write_class
from tests.pipeline.conftest import make_workdir, snakemake

SEED = 4242
# learner: the mistake named from the measured outputs, for each notebook that makes one
NAMED = {"no_scale": "no_scale", "divides_by_dk": "divides_by_dk", "wrong_axis": "wrong_axis",
         "swapped_outputs": "swapped", "no_max_subtraction": "no_max_subtraction",
         "whole_array_sum": "whole_array_sum", "k_transpose_3d": "k_transpose",
         "sums_over_samples": "sums_over_samples",
         "sqrt_t": "divides_by_sqrt_tq",  # d_k = Q.shape[1]
         "sqrt_tk": "divides_by_sqrt_tk",  # d_k = K.shape[-2]
         "softmax_first": "softmax_before_scale"}


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
def test_a_class_of_learners_notebooks_is_graded_as_they_wrote_them(tmp_path, tiny_config):
    learners = write_class(tmp_path / "class")
    assert len(learners) == 20
    work = make_workdir(tmp_path / "work", tiny_config)
    proc = snakemake(work, "--config", f"submissions={tmp_path / 'class'}", f"grading_seed={SEED}",
                     targets=["grade_class"])
    assert proc.returncode == 0, proc.stderr[-3000:]

    rows = list(csv.DictReader(io.StringIO((work / "results/class/gradebook.csv").read_text())))
    verdict = {r["learner"]: r["verdict"] for r in rows if r["part"] == "total"}
    assert sorted(verdict) == sorted(learners)
    for name, learner in learners.items():
        record = json.loads((work / f"results/class/grades/{name}.json").read_text())
        assert record["isolation"] == "bubblewrap sandbox" and record["usable"], (name, record["unusable"])
        if name == "default_rng":  # the grader draws the lesson's 100,000 x 1024 itself to decide this one's draw
            assert record["peak_mib"] < record["memory_mib"] and record["parts"][2]["lost"] == "", record["parts"][2]
        else:  # and no learner's own exercise_1() at 100,000 x 1024 ran
            assert record["peak_mib"] < 1024, name
        if learner.correct:
            assert verdict[name] == "5 of 5 pass", (name, record["parts"])
        elif name != "default_rng":  # another generator's Exercise 1: decided elsewhere (the checks), not here
            assert verdict[name] in {f"{k} of 5 pass" for k in range(5)}, name
    records = {name: json.loads((work / f"results/class/grades/{name}.json").read_text()) for name in learners}
    for name, mistake in NAMED.items():
        assert mistake in {m for p in records[name]["parts"] for m in p["mistakes"]}, (name, records[name]["parts"])
    # the lesson claims the variances, not a generator: drawn with default_rng, Exercise 1 verifies the claim
    assert verdict["default_rng"] == "5 of 5 pass", records["default_rng"]["parts"][2]
    assert any("np.random.seed(42)" in n for n in records["default_rng"]["parts"][2]["notes"])

    scores = pd.read_csv(work / "results/class/scores.csv").set_index("SIS Login ID")
    assert sorted(scores.index) == sorted(learners) and scores.index.is_unique  # one row per learner
    total = scores["sdpa-lab attention total"]
    full = [name for name, learner in learners.items() if learner.correct] + ["default_rng"]
    assert (total[full] == 10).all() and (total.drop(full) < 10).all()
    overview = (work / "reports/class.html").read_text()
    assert all(f'href="class/{name}.html"' in overview for name in learners)

    page = (work / "reports/class/cyd.html").read_text()
    assert "No module named &#39;pandas&#39;" in page and "cyd.ipynb, cell " in page

    alone = grade(learners["fen"].path, seed=SEED)  # `sdpa-lab grade FILE --seed N` with its defaults
    record = json.loads((work / "results/class/grades/fen.json").read_text())
    assert record["parts"] == json.loads(json.dumps(classroom.grade_record(alone, "fen")["parts"]))
