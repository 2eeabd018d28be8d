"""`sdpa-lab check [RESULTS_DIR]`: re-decide every claim from the CSVs on disk.

Exit status: 0 when no claim fails, 1 when a claim fails, 2 when the results
cannot be read (a missing file or column, a non-number, nan/inf) or come from
another config.

`sdpa-lab check-config FILE`: vet a config file (one received from someone else,
say) without Snakemake: exit 0 with its estimated cost, or 2 with why it is refused.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sdpa_lab.claims.deciding import decide_checked
from sdpa_lab.claims.verdicts import summary
from sdpa_lab.config import ConfigError, load_config
from sdpa_lab.grading import cli as grading_cli
from sdpa_lab.results import ResultsError
from sdpa_lab.workflow_support import cost


def check_config_file(path: str) -> int:
    """`sdpa-lab check-config FILE`: read FILE safely (no Snakemake, no code, no templates), check every
    setting, and print what a run of it would cost; 0 if it is fit to run, 2 (and why not) otherwise."""
    try:
        config = load_config(path)
    except ConfigError as exc:
        print(f"sdpa-lab check-config: refused: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: ok: plain YAML (no code, no aliases, no template), every setting within the schema")
    print("\n".join(cost.summary(cost.estimate(config))))
    return 0


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is missing or a dangling link
        return False


def config_beside(results_dir: Path) -> Path:
    """config/config.yaml beside `results_dir` as the user named it (beside a link, not beside its target). If
    the folder is a link (or under one) and a config beside its target differs from that one, ConfigError: which
    config the results come from is then for the user to say."""
    named = Path(os.path.abspath(results_dir)).parent / "config" / "config.yaml"
    real = results_dir.resolve().parent / "config" / "config.yaml"
    if not os.path.lexists(real) or _same_file(named, real):
        return named
    if not os.path.lexists(named):
        return real
    if load_config(named) != load_config(real):
        raise ConfigError(f"{results_dir} leads to {results_dir.resolve()}, and the configs beside the two, {named} "
                          f"and {real}, differ; say which one the results come from with --config FILE")
    return named


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sdpa-lab", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="re-decide every claim from the result CSVs")
    check.add_argument("results_dir", nargs="?", default="results", help="folder of result CSVs (default: results)")
    check.add_argument("--config", help="config the results must come from "
                       "(default: config/config.yaml beside RESULTS_DIR, if there is one)")
    check.add_argument("--no-config", action="store_true", help="do not compare the results with a config")
    check.add_argument("--all", action="store_true", help="print every check, not only the closest per claim")
    vet = sub.add_parser("check-config", help="vet a config file before running it (safely, without Snakemake)",
                         description=check_config_file.__doc__)
    vet.add_argument("file", help="the YAML config file, e.g. one passed as snakemake --configfile FILE")
    handlers = grading_cli.add_commands(sub)
    args = parser.parse_args(argv)
    if args.command == "check-config":
        return check_config_file(args.file)
    if args.command in handlers:
        return handlers[args.command](args)

    results_dir = Path(args.results_dir)
    try:
        if not results_dir.is_dir():
            raise ResultsError(f"{results_dir}: no such results folder (run `snakemake --cores 4` first)")
        config = None
        if not args.no_config:
            config_path = Path(args.config) if args.config else config_beside(results_dir)
            if args.config or os.path.lexists(config_path):  # anything there is read, or refused: never skipped
                config = load_config(config_path)
            else:
                print(f"sdpa-lab check: note: no config at {config_path}; skipped the check that the results come "
                      "from it (give one with --config FILE)", file=sys.stderr)
        decision = decide_checked(results_dir, config)
    except (ResultsError, ConfigError) as exc:
        print(f"sdpa-lab check: error: {exc}", file=sys.stderr)
        return 2
    print(summary(decision, show_all=args.all))
    return 1 if decision.failed else 0


if __name__ == "__main__":
    sys.exit(main())
