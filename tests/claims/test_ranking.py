"""B6 decided on small hand-made ranking tables and the lesson's argsorts."""

from __future__ import annotations

from sdpa_lab.claims import model as M
from sdpa_lab.claims.ranking import decide_b6
from sdpa_lab.results import Results

from tests.claims.tables import argsort_rows, by_key, ranking_table


def test_b6_checks_and_notes():
    ok = {"logit_rank_agrees": 50, "weight_argsort_agrees": 50, "unscaled_weight_ties": 0,
          "weight_argsort_disagrees_without_ties": 0}
    tied = {"logit_rank_agrees": 50, "weight_argsort_agrees": 45, "unscaled_weight_ties": 7,
            "weight_argsort_disagrees_without_ties": 1}
    t = ranking_table({(4, "float64"): ok, (2048, "float32"): tied, (4, "float32"): ok, (2048, "float64"): ok})
    R = Results("mem", {"ranking_invariance.csv": t, "lesson_softmax_collapse.csv": argsort_rows(f32=0.0)})
    checks = decide_b6(R)
    b6 = by_key(checks, "B6")
    assert len(b6) == 2 + 4
    exercise = "argsort of the unscaled and scaled weights agree (Exercise 3, the lesson's draw)"
    lesson64, lesson32 = b6[exercise, "d_k=256, T=8, float64"], b6[exercise, "d_k=256, T=8, float32"]
    assert (lesson64.measured, lesson64.expected, lesson64.relation, lesson64.basis, lesson64.verdict) == (
        1, 1, "equals", "exact", M.HOLDS)
    assert (lesson32.measured, lesson32.verdict) == (0, M.FAILS)
    assert lesson32.cell == ("lesson_softmax_collapse.csv", (("quantity", "weight_argsort_agrees_float32"),), "value")
    name = "trials where argsort of the weights disagrees without an exact tie"
    assert [c.parameters for c in checks[2:]] == ["d_k=4, float32", "d_k=4, float64", "d_k=2048, float32",
                                                  "d_k=2048, float64"]  # sorted by d_k, then dtype
    bad = b6[name, "d_k=2048, float32"]
    assert (bad.measured, bad.expected, bad.relation, bad.basis, bad.verdict) == (1, 0, "equals", "exact", M.FAILS)
    assert bad.cell == ("ranking_invariance.csv", (("d_k", 2048), ("dtype", "float32"),
                                                   ("quantity", "weight_argsort_disagrees_without_ties")), "count")
    assert bad.note == ("finding: the argsort of the weights disagrees in 5 of 50 trials; 7 trials have exactly tied "
                        "unscaled weights (exp underflowed to 0)")
    fine = b6[name, "d_k=4, float64"]
    assert fine.note == "the argsort of the weights agrees in all 50 trials" and fine.verdict == M.HOLDS
    only_ties = ranking_table({(4, "float32"): {**ok, "unscaled_weight_ties": 2}})
    (*_, c) = decide_b6(Results("mem", {"ranking_invariance.csv": only_ties,
                                        "lesson_softmax_collapse.csv": argsort_rows()}))
    assert c.note.startswith("finding: the argsort of the weights disagrees in 0 of 50 trials; 2 trials")
    assert c.verdict == M.HOLDS
