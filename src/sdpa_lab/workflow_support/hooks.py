"""What the workflow's onstart hook does (workflow/rules/common.smk), before any job runs.

- `cost_gate`: the run's estimated CPU time and disk use (sdpa_lab.workflow_support.cost),
  and why it is refused, if it is;
- `sweep_temporaries`: deletes the hidden temporaries (.<name>.*.tmp, sdpa_lab.io) that a
  writer killed mid-write left beside its output. Snakemake removes a failed job's
  declared outputs, but a temporary is not one of them.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from sdpa_lab.workflow_support import cost


def cost_gate(config: Mapping, drawn: Collection[str], free_bytes: int) -> tuple[list[str], str | None]:
    """The lines announcing a run's estimated cost, and why it is refused (None if it may start): a disk
    estimate above `free_bytes`, or more than an hour of CPU without confirm_long_run (cost.run_problem).
    `drawn`: the trial-score files already on disk, which the run does not draw again."""
    estimate = cost.estimate(config, drawn=drawn)
    lines = [f"sdpa-lab: {line}" for line in cost.summary(estimate)]
    return lines, cost.run_problem(estimate, config, free_bytes=free_bytes)


def _as_glob(pattern: str) -> str:
    """An output path or pattern as a glob: each {wildcard} becomes *, everything else is literal."""
    return "*".join(glob.escape(part) for part in re.split(r"\{[^{}]*\}", pattern))


def sweep_temporaries(paths: Iterable[str | os.PathLike]) -> list[str]:
    """Delete the hidden temporaries (.<name>.*.tmp, see sdpa_lab.io) a killed writer left next to `paths`.

    A path may be a rule's output pattern with {wildcards}: the temporaries of every file
    it matches go, including files of settings no longer in the config (a killed draw of
    trial scores leaves one of up to gigabytes). Call it only when no job is running (at
    the start of a run): a live writer's temporary has the same shape.
    """
    removed = []
    for path in map(Path, paths):
        for tmp in sorted(glob.glob(os.path.join(_as_glob(str(path.parent)), f".{_as_glob(path.name)}.*.tmp"))):
            Path(tmp).unlink(missing_ok=True)
            removed.append(tmp)
    return removed
