"""`sdpa-lab check [RESULTS_DIR]`: re-decide every claim from the CSVs on disk.

Exit status: 0 when no claim fails, 1 when a claim fails, 2 when the results
cannot be read (a missing file or column, a non-number, nan/inf) or come from
another config.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sdpa_lab.claims.model import decide_checked
from sdpa_lab.claims.verdicts import summary
from sdpa_lab.config import ConfigError, load_config
from sdpa_lab.results import ResultsError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sdpa-lab", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="re-decide every claim from the result CSVs")
    check.add_argument("results_dir", nargs="?", default="results", help="folder of result CSVs (default: results)")
    check.add_argument("--config", help="config the results must come from "
                       "(default: config/config.yaml beside RESULTS_DIR, if there is one)")
    check.add_argument("--no-config", action="store_true", help="do not compare the results with a config")
    check.add_argument("--all", action="store_true", help="print every check, not only the closest per claim")
    args = parser.parse_args(argv)

    results_dir = Path(args.results_dir)
    try:
        if not results_dir.is_dir():
            raise ResultsError(f"{results_dir}: no such results folder (run `snakemake --cores 4` first)")
        config = None
        if not args.no_config:
            config_path = Path(args.config) if args.config else results_dir.resolve().parent / "config" / "config.yaml"
            if args.config or config_path.is_file():
                config = load_config(config_path)
        decision = decide_checked(results_dir, config)
    except (ResultsError, ConfigError) as exc:
        print(f"sdpa-lab check: error: {exc}", file=sys.stderr)
        return 2
    print(summary(decision, show_all=args.all))
    return 1 if decision.failed else 0


if __name__ == "__main__":
    sys.exit(main())
