"""`sdpa-lab check [RESULTS_DIR]`: re-decide every claim from the CSVs on disk.

Exit status: 0 when no claim fails, 1 when a claim fails, 2 when the results
cannot be read (a missing file or column, a non-number, nan/inf) or come from
another config.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from sdpa_lab.claims import FAILS, HOLDS, INCONCLUSIVE, NOT_MEASURED, NOT_PER_DRAW, Check, Decision, decide, registry
from sdpa_lab.config import ConfigError, load_config
from sdpa_lab.io import write_csv
from sdpa_lab.results import Results, ResultsError, stale_errors


def _num(x: float) -> str:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.6g}"


def describe(c: Check) -> str:
    """One check in a line: measured vs expected, tolerance, margin."""
    if c.verdict == NOT_MEASURED:
        return f"{c.check} [{c.parameters}]: not measured ({c.note})"
    tol = f" ± {_num(c.tolerance)}" if c.tolerance > 0 else ""
    return (f"{c.check} [{c.parameters}]: measured {_num(c.measured)} {c.relation} {_num(c.expected)}{tol}"
            f" (margin {_num(c.margin)})")


def closeness(c: Check) -> float:
    """How close a check came to failing, for picking the one to show: minus its distance to the boundary."""
    if c.verdict in (FAILS, NOT_PER_DRAW, INCONCLUSIVE):
        return math.inf
    if c.tolerance == 0:
        return -math.inf
    m = c.margin
    distance = {"within": 1 - abs(m), "not above": 1 - m, "not below": m + 1, "above": m - 1, "below": -1 - m}
    return -distance[c.relation]


def claim_verdict(checks: Sequence[Check]) -> str:
    verdicts = {c.verdict for c in checks}
    for v in (FAILS, INCONCLUSIVE, NOT_PER_DRAW, NOT_MEASURED):
        if v in verdicts:
            return v
    return HOLDS


def summary(decision: Decision, show_all: bool = False) -> str:
    """The compact table: per claim, its verdict and its closest check (every failing check in full)."""
    lines = [f"{'claim':<5} {'checks':>6}  {'verdict':<31} closest check"]
    by_claim: dict[str, list[Check]] = {}
    for c in decision.checks:
        by_claim.setdefault(c.claim, []).append(c)
    for cid in registry():
        checks = by_claim.get(cid, [])
        if not checks:
            continue
        worst = max(checks, key=closeness)
        lines.append(f"{cid:<5} {len(checks):>6}  {claim_verdict(checks):<31} {describe(worst)}")
        shown = checks if show_all else [c for c in checks if c.verdict == FAILS and c is not worst]
        lines += [f"{'':<5} {'':>6}  {c.verdict:<31} {describe(c)}" for c in shown]
    verdicts = {cid: claim_verdict(checks) for cid, checks in by_claim.items()}
    others = [f"{sum(v == o for v in verdicts.values())} {o}" for o in (INCONCLUSIVE, NOT_PER_DRAW, NOT_MEASURED)
              if o in verdicts.values()]
    failing = [cid for cid, v in verdicts.items() if v == FAILS]
    lines.append("")
    lines.append(f"statistical checks: {decision.n_statistical}, each within k = {decision.k:.3f} standard errors "
                 f"(Bonferroni: a correct run fails by chance less than once in {1 / decision.alpha_family:,.0f})")
    lines.append(f"{sum(v == HOLDS for v in verdicts.values())} of {len(verdicts)} claims hold"
                 + "".join(f"; {o}" for o in others)
                 + (f"; FAILING: {', '.join(failing)}" if failing else ""))
    return "\n".join(lines)


def decide_checked(results_dir: str | Path, config: dict | None) -> Decision:
    """Decide the claims after refusing results that do not match `config`."""
    results = Results(results_dir)
    if config is not None:
        errors = stale_errors(results, config)
        if errors:
            raise ResultsError("\n".join(errors))
    return decide(results)


def write_claims(results_dir: str | Path, out: str | Path, config: dict | None = None) -> Decision:
    """Decide every claim and write results/claims.csv (one row per check)."""
    decision = decide_checked(results_dir, config)
    write_csv(decision.table(), out)
    return decision


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
