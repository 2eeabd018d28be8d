"""The claims registry: every claim of the lesson, in the lesson's order.

Each claim is declared once, beside its decide function, in the module of its lesson section (its words, the
lesson's sentence each check decides, its tolerance reason and its docs/ page: `model.Claim`). The checker
(`sdpa-lab check`), the claims table (results/claims.csv), the report and the calibration study read this list.
"""

from __future__ import annotations

from sdpa_lab.claims.dot_product_growth import B1, B2, B3, B4
from sdpa_lab.claims.forward_shapes import B9
from sdpa_lab.claims.learning import B10
from sdpa_lab.claims.model import Claim
from sdpa_lab.claims.ranking import B6
from sdpa_lab.claims.replication import A1, A2, A3
from sdpa_lab.claims.softmax_saturation import B5, B7, B8

# The lesson's order: the replications (A), then the general claims (B) as the lesson states them. A claim of the
# project's own (not the lesson's) goes after the lesson's claim it extends.
CLAIMS: tuple[Claim, ...] = (A1, A2, A3, B1, B2, B3, B4, B5, B6, B7, B8, B9, B10)


def registry() -> dict[str, Claim]:
    """The claims by id, in the lesson's order."""
    return {c.id: c for c in CLAIMS}


def lesson_sentence(claim: str, check: str) -> str:
    """The lesson's sentence the check `check` of claim `claim` decides (its Claim's `sentences`); KeyError if
    none."""
    return registry()[claim].sentence(check)
