"""Where a report's numbers come from: config, seeds, package versions, Python, git commit, rule runtimes.

Everything here may differ between runs (dates, runtimes, the commit); it goes
into the HTML report only, never into the result CSVs.
"""

from __future__ import annotations

import csv
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import yaml

from sdpa_lab.seeding import LESSON_SEED

PACKAGES = ("sdpa-lab", "numpy", "pandas", "matplotlib", "snakemake", "jinja2", "pyyaml")
NOT_GIT = "not a git checkout"


@dataclass(frozen=True)
class Runtime:
    """One job's benchmark: wall-clock seconds and peak memory (MB), from logs/benchmarks/<rule>.tsv
    (a job of a rule with wildcards: logs/benchmarks/<rule>/<job>.tsv, named <rule>/<job>)."""

    rule: str
    seconds: float
    hms: str
    max_rss_mb: float | None


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str]:
    """The installed version of each package (importlib.metadata), or "not installed"."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit(cwd: str | Path = ".") -> str:
    """HEAD's commit hash, with a note when tracked files have uncommitted changes; or NOT_GIT."""
    cwd = Path(cwd)
    head = _git(["rev-parse", "HEAD"], cwd)
    if not head:
        return NOT_GIT
    dirty = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    return head + (" (with uncommitted changes to tracked files)" if dirty else "")


def read_benchmark(path: str | Path) -> Runtime | None:
    """The first row of a Snakemake benchmark TSV (columns s, h:m:s, max_rss, ...); None if unreadable."""
    path = Path(path)
    try:
        with path.open(newline="") as fh:
            row = next(csv.DictReader(fh, delimiter="\t"))
        rss = row.get("max_rss", "")
        nested = path.parent.parent.name == "benchmarks"  # logs/benchmarks/<rule>/<job>.tsv
        name = f"{path.parent.name}/{path.stem}" if nested else path.stem
        return Runtime(name, float(row["s"]), row.get("h:m:s", ""),
                       float(rss) if rss not in ("", "NA", "-") else None)
    except (OSError, StopIteration, KeyError, ValueError):
        return None


def runtimes(paths: Iterable[str | Path]) -> list[Runtime]:
    """Each readable benchmark file's runtime, by rule name."""
    found = (read_benchmark(p) for p in sorted(map(Path, paths)))
    return [r for r in found if r is not None]


def seeds(config: Mapping, results_seeds: Mapping[str, Iterable[int]] = {}) -> list[tuple[str, str]]:
    """(what, seed) pairs: the config's root seed, the lesson's own seed, and the seed each CSV records."""
    out = [("config: root of every sweep's random streams", str(config.get("seed", "—"))),
           ("lesson replications A1-A3 and Exercise 2 (the lesson's own seeding)", str(LESSON_SEED))]
    out += [(f"recorded in {name}", ", ".join(str(s) for s in sorted(set(v)))) for name, v in results_seeds.items()]
    return out


def config_yaml(config: Mapping) -> str:
    """The config as YAML, in its own key order."""
    return yaml.safe_dump(_plain(config), sort_keys=False, default_flow_style=None, allow_unicode=True, width=100)


def _plain(x):
    """Snakemake's config objects as plain dicts and lists, for YAML."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def provenance(config: Mapping, benchmark_paths: Iterable[str | Path] = (), repo_dir: str | Path = ".",
               results_seeds: Mapping[str, Iterable[int]] = {}) -> dict:
    """Everything the report's provenance section shows."""
    return {
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "config_yaml": config_yaml(config),
        "seeds": seeds(config, results_seeds),
        "packages": package_versions(),
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "platform": platform.platform(),
        "git_commit": git_commit(repo_dir),
        "runtimes": runtimes(benchmark_paths),
    }
