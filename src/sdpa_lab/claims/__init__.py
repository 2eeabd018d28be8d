"""The lesson's claims, each decided from the result CSVs.

- `model`: `Check`, `Claim`, `Decision`, verdicts and relations, the check builders;
- `deciding`: `decide` (a run's claims and their tolerances), and results/claims.csv written and read
  back (`write_claims`, `read_claims`);
- `standard_errors`: the run's false-fail budget, a claim's share of it, the Bonferroni k and the standard
  errors the statistical checks use;
- `lesson_numbers`: the numbers the lesson printed;
- the claims, each declared once beside its decide function (its words, the lesson's sentence each check
  decides, its tolerance reason, its docs/claims/ page), grouped as the lesson groups them: `replication`
  (A1-A3), `dot_product_growth` (B1-B4), `softmax_saturation` (B5, B7, B8), `ranking` (B6),
  `forward_shapes` (B9), `learning` (B10);
- `registry`: every claim in the lesson's order (`CLAIMS`), and `lesson_sentence`;
- `verdicts`: how verdicts are shown, for the checker and the report.
"""

from sdpa_lab.claims.deciding import decide, decide_checked, read_claims, write_claims
from sdpa_lab.claims.model import (
    CONDITION_NOT_MET,
    CONTRADICTED,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_HERE,
    NOT_MEASURED,
    NOT_PER_DRAW,
    RELATIONS,
    Check,
    Claim,
    Decision,
)
from sdpa_lab.claims.registry import CLAIMS, lesson_sentence, registry
from sdpa_lab.claims.standard_errors import ALPHA_CLAIM, ALPHA_FAMILY, bonferroni_k, variance_se
from sdpa_lab.claims.verdicts import claim_verdict, closeness, describe, summary

__all__ = [
    "ALPHA_CLAIM", "ALPHA_FAMILY", "CLAIMS", "CONDITION_NOT_MET", "CONTRADICTED", "FAILS", "HOLDS", "INCONCLUSIVE",
    "NOT_HERE", "NOT_MEASURED", "NOT_PER_DRAW", "RELATIONS", "Check", "Claim", "Decision", "bonferroni_k",
    "claim_verdict", "closeness", "decide", "decide_checked", "describe", "lesson_sentence", "read_claims", "registry",
    "summary", "variance_se", "write_claims",
]
