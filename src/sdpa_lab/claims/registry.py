"""The claims registry: every claim of the lesson, in the lesson's order.

Each claim is declared once, beside its decide function, in the module of its lesson section (its words, the
lesson's sentence each check decides, its tolerance reason and its docs/ page: `model.Claim`). The checker
(`sdpa-lab check`), the claims table (results/claims.csv), the report and the calibration study read this list.
"""

from __future__ import annotations

from sdpa_lab.claims import dot_product_growth, forward_shapes, learning, ranking, replication, softmax_saturation
from sdpa_lab.claims.model import Claim

# The lesson's order: the replications (A), then the general claims (B) as the lesson states them. A claim of the
# project's own (not the lesson's) goes after the lesson's claim it extends.
CLAIMS: tuple[Claim, ...] = (
    replication.A1,
    replication.A2,
    replication.A3,
    dot_product_growth.B1,
    dot_product_growth.B2,
    dot_product_growth.B3,
    dot_product_growth.B4,
    softmax_saturation.B5,
    ranking.B6,
    softmax_saturation.B7,
    softmax_saturation.B8,
    forward_shapes.B9,
    learning.B10,
)


def registry() -> dict[str, Claim]:
    """The claims by id, in the lesson's order."""
    return {c.id: c for c in CLAIMS}


def lesson_sentence(claim: str, check: str) -> str:
    """The lesson's sentence the check `check` of claim `claim` decides (its Claim's `sentences`); KeyError if
    none."""
    return registry()[claim].sentence(check)
