"""Keep the previous version of an output that a failed run removed, without passing it off as current.

Snakemake deletes a job's outputs before it runs the job and again when the
job fails, so a failed rerun would lose the previous CSV. Putting the old file
back under its own name is worse: Snakemake has already recorded the failed
job's params and code for that path, so the next run would call the old
numbers up to date. Instead:

- `sweep_temporaries` (at the start of a run) deletes the hidden temporary
  files a writer killed mid-write left behind;
- `snapshot` (at the start of a run) hard-links every existing output into a
  store under .snakemake/ -- no copy, same bytes and mtime, and the link
  survives Snakemake unlinking the name;
- `settle` (at the end of a run, failed, interrupted or not) keeps the rule
  "`<path>.previous` exists only while `<path>` does not": an output the run
  removed and did not rebuild gets its previous version back as
  `<path>.previous`; every output that exists drops its snapshot and any
  stale `.previous`.

So results/ only ever holds CSVs that match the current config and code, and
the numbers a failed run removed are still there, under a name that says so.
A run killed with SIGKILL runs no hook: its snapshot stays in the store and
the next run settles it.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

STORE = Path(".snakemake") / "sdpa-lab-previous"
SUFFIX = ".previous"


def _in_store(path: str | os.PathLike, store: Path) -> Path:
    """Where `path`'s snapshot lives in `store` (relative paths kept, absolute ones re-rooted)."""
    p = Path(path)
    return store / (p.relative_to(p.anchor) if p.is_absolute() else p)


def aside_name(path: str | os.PathLike) -> Path:
    """The name the previous version of `path` is kept under: results/x.csv -> results/x.csv.previous."""
    p = Path(path)
    return p.with_name(p.name + SUFFIX)


def snapshot(paths: Iterable[str | os.PathLike], store: Path = STORE) -> list[str]:
    """Link each existing file of `paths` into `store` (replacing an older snapshot); return those linked.

    A snapshot of a path that does not exist now is left alone: it is the
    last version of an output removed by a run that was killed before it
    could settle.
    """
    linked = []
    for path in map(Path, paths):
        if not path.is_file():
            continue
        target = _in_store(path, store)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        try:
            os.link(path, target)
        except OSError:  # another filesystem, or no hard links: copy, keeping the mtime
            shutil.copy2(path, target)
        linked.append(str(path))
    return linked


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


def settle(paths: Iterable[str | os.PathLike], store: Path = STORE) -> list[str]:
    """Set aside the snapshot of each missing output as `<path>.previous`; drop what existing outputs supersede.

    Returns the paths whose previous version was set aside.
    """
    kept = []
    for path in map(Path, paths):
        saved = _in_store(path, store)
        if path.exists():
            saved.unlink(missing_ok=True)
            aside_name(path).unlink(missing_ok=True)
        elif saved.is_file():
            os.replace(saved, aside_name(path))
            kept.append(str(path))
    return kept


def aside_messages(kept: Iterable[str]) -> list[str]:
    """One line per output whose previous version was set aside, saying where it is and what it is not."""
    return [
        f"sdpa-lab: {path} was removed by this run and not rebuilt; its previous version is kept as "
        f"{aside_name(path)} (it does NOT match the current config/code; the next successful run removes it)"
        for path in kept
    ]
