"""The settings the claims' finite-d_k expectations read, as the workflow reads them when it is parsed.

Each claim declares its expectations and the settings they are made from beside its decide function
(`Claim.expectations`, `Claim.expectation_settings`; gathered by registry.expectation_settings). The workflow's
`expectations` rule takes exactly those settings as its params, so a change elsewhere (say `learning`) does not
rerun it, and the expectations are computed from them alone, so reading any other setting there fails at once
instead of going stale. Gathering the declarations imports every module of the claims package (pandas, SciPy), which
the Snakefile does not load when it is parsed (a no-op rerun would pay it; Snakemake itself loads pandas only with
the SLURM executor plugin): they are repeated here, and the house lane holds this copy to them
(tests/claims/test_expectation_table.py).

Standard library only: the Snakefile imports this when it is parsed.
"""

from __future__ import annotations

from collections.abc import Mapping

# section -> the settings of it the expectations read.
EXPECTATION_SETTINGS: dict[str, tuple[str, ...]] = {
    "entropy_sweep": ("d_k", "T"),
    "gradient": ("d_k", "T"),
}


def expectation_sweep(sweep: Mapping, settings: Mapping[str, tuple[str, ...]] = EXPECTATION_SETTINGS) -> dict:
    """The part of `sweep` the expectations read (`settings`: section -> its settings read), in that order."""
    return {section: {key: sweep[section][key] for key in keys} for section, keys in settings.items()}
