"""The settings the claims' finite-d_k expectations read, declared once.

The expectations (sdpa_lab.claims.expectation_table, from softmax_saturation.expectations_asked) depend on the
d_k and T of two sections and on nothing else of a sweep. The workflow's `expectations` rule takes exactly these
as its params, so a change elsewhere (say `learning`) does not rerun it, and the expectations are computed from
them alone, so reading any other setting there fails at once instead of going stale.

Standard library only: the Snakefile imports this when it is parsed.
"""

from __future__ import annotations

from collections.abc import Mapping

# section -> the settings of it the expectations read.
EXPECTATION_SETTINGS: dict[str, tuple[str, ...]] = {
    "entropy_sweep": ("d_k", "T"),
    "gradient": ("d_k", "T"),
}


def expectation_sweep(sweep: Mapping) -> dict:
    """The part of `sweep` the expectations read (EXPECTATION_SETTINGS), in that order."""
    return {section: {key: sweep[section][key] for key in keys} for section, keys in EXPECTATION_SETTINGS.items()}
