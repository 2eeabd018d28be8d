"""The claims registry: every claim of the lesson, in the lesson's order.

Each claim is declared once, beside its decide function, in the module of its lesson section (its words, the
lesson's sentence each check decides, its tolerance reason and its docs/ page: `model.Claim`), and listed in
that module's `CLAIMS`. The checker (`sdpa-lab check`), the claims table (results/claims.csv), the report and
the calibration study read the list made here.
"""

from __future__ import annotations

import re

from sdpa_lab.claims import dot_product_growth, forward_shapes, learning, ranking, replication, softmax_saturation
from sdpa_lab.claims.model import Claim

# The lesson's sections, each module declaring its claims; a new section's module is added here.
SECTIONS = (replication, dot_product_growth, softmax_saturation, ranking, forward_shapes, learning)


def lesson_order(claim: Claim) -> tuple[str, int]:
    """A claim's place: by its id's letter, then its number (A1 .. A3, B1 .. B10, then a project's own C1 ..)."""
    letter, number = re.fullmatch(r"([A-Z]+)(\d+)", claim.id).groups()
    return letter, int(number)


CLAIMS: tuple[Claim, ...] = tuple(sorted((c for s in SECTIONS for c in s.CLAIMS), key=lesson_order))


def registry() -> dict[str, Claim]:
    """The claims by id, in the lesson's order."""
    return {c.id: c for c in CLAIMS}


def lesson_sentence(claim: str, check: str) -> str:
    """The lesson's sentence the check `check` of claim `claim` decides (its Claim's `sentences`); KeyError if
    none."""
    return registry()[claim].sentence(check)
