"""The claims registry: every claim of the lesson, in the lesson's order.

Each claim is declared once, beside its decide function, in the module of its lesson section (its words, the
lesson's sentence each check decides, its tolerance reason and its docs/ page: `model.Claim`), and listed in
that module's `CLAIMS`. The checker (`sdpa-lab check`), the claims table (results/claims.csv), the report and
the calibration study read the list made here.
"""

from __future__ import annotations

import re

from sdpa_lab.claims.dot_product_growth import CLAIMS as DOT_PRODUCT_GROWTH
from sdpa_lab.claims.forward_shapes import CLAIMS as FORWARD_SHAPES
from sdpa_lab.claims.learning import CLAIMS as LEARNING
from sdpa_lab.claims.model import Claim
from sdpa_lab.claims.ranking import CLAIMS as RANKING
from sdpa_lab.claims.replication import CLAIMS as REPLICATION
from sdpa_lab.claims.softmax_saturation import CLAIMS as SOFTMAX_SATURATION

# The claims of each lesson section's module; a new section's are added here.
SECTIONS = (REPLICATION, DOT_PRODUCT_GROWTH, SOFTMAX_SATURATION, RANKING, FORWARD_SHAPES, LEARNING)


def lesson_order(claim: Claim) -> tuple[str, int]:
    """A claim's place: by its id's letter, then its number (A1 .. A3, B1 .. B10, then a project's own C1 ..)."""
    letter, number = re.fullmatch(r"([A-Z]+)(\d+)", claim.id).groups()
    return letter, int(number)


CLAIMS: tuple[Claim, ...] = tuple(sorted((c for claims in SECTIONS for c in claims), key=lesson_order))


def registry() -> dict[str, Claim]:
    """The claims by id, in the lesson's order."""
    return {c.id: c for c in CLAIMS}


def lesson_sentence(claim: str, check: str) -> str:
    """The lesson's sentence the check `check` of claim `claim` decides (its Claim's `sentences`); KeyError if
    none."""
    return registry()[claim].sentence(check)
