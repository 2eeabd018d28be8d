"""The settings the claims' finite-d_k expectations read, as the workflow reads them when it is parsed.

Each claim declares its expectations and the settings they are made from beside its decide function
(`Claim.expectations`, `Claim.expectation_settings`; gathered by registry.expectation_settings). The workflow's
`expectations` rule takes exactly those settings as its params, so a change elsewhere (say `learning`) does not
rerun it, and the expectations are computed from them alone, so reading any other setting there fails at once
instead of going stale. Gathering the claims imports every module of the claims package (pandas, SciPy), which the
Snakefile does not load when it is parsed (a no-op rerun would pay it; Snakemake itself loads pandas only with the
SLURM executor plugin): the Snakefile reads them from the schema instead, where each section marks its settings the
expectations read (`x-expectations`), and the house lane holds the marks to the claims' declarations
(tests/claims/test_expectation_table.py).

The schema and the standard library only: the Snakefile imports this when it is parsed.
"""

from __future__ import annotations

from collections.abc import Mapping

from sdpa_lab.config import load_schema

# section -> the settings of it the expectations read, in the schema's order: its sections' `x-expectations`.
EXPECTATION_SETTINGS: dict[str, tuple[str, ...]] = {
    section: tuple(node["x-expectations"]) for section, node in load_schema()["properties"].items()
    if isinstance(node, dict) and "x-expectations" in node}


def expectation_sweep(sweep: Mapping, settings: Mapping[str, tuple[str, ...]] = EXPECTATION_SETTINGS) -> dict:
    """The part of `sweep` the expectations read (`settings`: section -> its settings read), in that order."""
    return {section: {key: sweep[section][key] for key in keys} for section, keys in settings.items()}
