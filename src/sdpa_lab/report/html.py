"""reports/report.html: every claim restated with this run's numbers, its verdict and its figures, in one file.

The numbers come from one place: the `Decision` the claims rule made from the
result CSVs and wrote to results/claims.csv (`sdpa_lab.claims.write_claims`),
read back as decided (`read_claims`), not decided again. The templates only lay them
out (Jinja2, autoescaped); figures are embedded as base64 PNG data URIs and
the CSS is inline, so the file works offline and when mailed alone.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sdpa_lab.calibration.summary import main_report_summary
from sdpa_lab.claims.deciding import read_claims, refuse_stale
from sdpa_lab.claims.model import (
    CONDITION_NOT_MET,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_HERE,
    NOT_MEASURED,
    NOT_PER_DRAW,
    Check,
    Claim,
    Decision,
)
from sdpa_lab.claims.registry import registry
from sdpa_lab.claims.verdicts import (
    VERDICT_KINDS,
    claim_ks,
    claim_verdict,
    closeness,
    counted,
    describe,
    expected_text,
    margin_rule,
    measured_unit,
    why_condition_not_met,
    why_not_here,
)
from sdpa_lab.io import write_text
from sdpa_lab.report.claim_text import (
    k_sentence,
    note_key,
    opening,
    plain_tolerance,
    repeated_notes,
    shared_derivations,
    why_not_per_draw,
)
from sdpa_lab.report.provenance import provenance
from sdpa_lab.report.rendering import at_unit, css_size, data_uri, environment, margin, num, number
from sdpa_lab.report.specs import FIGURES, FigureSpec, figure_files
from sdpa_lab.results import Results

# Checks shown before the rest are folded into <details> (closest to failing first).
SHOW_FIRST = 5
FOLD_ABOVE = 8

# Verdict -> (css class, symbol): every badge says its verdict in words too, never by colour alone.
BADGES = {
    HOLDS: ("holds", "✓"),
    FAILS: ("fails", "✗"),
    INCONCLUSIVE: ("inconclusive", "?"),
    NOT_PER_DRAW: ("average", "≈"),
    NOT_HERE: ("not-here", "≠"),
    NOT_MEASURED: ("missing", "–"),
    CONDITION_NOT_MET: ("missing", "∅"),
}
# The order in which the summary lists the verdicts, worst first.
VERDICT_ORDER = tuple(reversed(VERDICT_KINDS))
RELATION_WORDS = {
    "equals": "= expected exactly",
    "within": "|measured − expected| ≤ tolerance",
    "not above": "measured ≤ expected + tolerance",
    "not below": "measured ≥ expected − tolerance",
    "above": "measured > expected + tolerance",
    "below": "measured < expected − tolerance",
}


def tolerance_text(c: Check) -> tuple[str, str]:
    """The tolerance of a check, and in a few words where it comes from (its k' and, for an expected value's Monte
    Carlo error, its k)."""
    if c.basis in ("statistical", "derived"):
        k_prime = f"{number(c.k_prime, decimals=1, integers=False)} × SE {num(c.se, 2)}"  # k', as decided
        if c.se > 0 and c.expected_se > 0:  # the expected value's Monte Carlo error, bounded as a bias
            return (f"± {num(c.tolerance, 2)}", f"{k_prime} + {number(c.k, decimals=1, integers=False)} × its "
                    f"expectation's Monte Carlo SE {num(c.expected_se, 2)}")
        if c.se > 0:
            return f"± {num(c.tolerance, 2)}", k_prime
        return f"± {num(c.tolerance, 2)}", "SE 0: the statistic has no spread"
    if c.basis == "printed":
        return f"± {num(c.tolerance)}", "printed precision"
    if c.basis == "rounding":
        return num(c.tolerance, 2), "rounding bound"
    if c.basis == "missing":
        return "—", ""
    return "exact", ""


@dataclass(frozen=True)
class CheckRow:
    """One row of a claim's checks table, formatted."""

    check: str
    parameters: str
    relation: str
    relation_words: str
    expected: str
    measured: str
    tolerance: str
    tolerance_why: str
    margin: str
    margin_kind: str  # what the margin is, where it is not the failure margin of the summary's legend
    verdict: str
    badge: tuple[str, str]
    note: str
    source: str


def margin_kind(c: Check) -> str:
    """What a row's margin is, where "above 1 it fails" does not say it all: a literal single-draw check's margin
    is a shortfall per draw, never a failure (the check fails only off theory's chance, said in its note); a claimed
    rise or fall holds only below −1."""
    if c.literal:
        return ("per draw: how far single draws fall short of “every draw”; not a failure (it fails only off the "
                "chance theory gives)")
    if c.relation in ("above", "below") and c.tolerance > 0:
        return "a claimed direction: holds below −1"
    return ""


def check_row(c: Check) -> CheckRow:
    """A Check as the report shows it (the numbers formatted, nothing recomputed)."""
    margin_text = "—" if c.basis == "missing" else margin(c.margin)
    return CheckRow(c.check, c.parameters, c.relation, RELATION_WORDS.get(c.relation, c.relation),
                    expected_text(c), at_unit(c.measured, measured_unit(c)), *tolerance_text(c), margin_text,
                    margin_kind(c), c.verdict, BADGES[c.verdict], c.note, c.source)


@dataclass(frozen=True)
class FigureView:
    """A figure placed in the report: number, anchor, caption, and the PNG as a data URI (first use only)."""

    number: int
    name: str
    caption: str
    data_uri: str
    first_claim: str | None
    width: int  # CSS pixels: the figure's size in inches at 96 px per inch (the PNG has DPI px per inch)
    height: int
    narrow: tuple[str, int, int] | None = None  # the phone's variant: its data URI, width and height (CSS px)


@dataclass
class ClaimView:
    """A claim's section: the registry's words, this run's checks (closest to failing first), its figures."""

    claim: Claim
    verdict: str
    badge: tuple[str, str]
    shown: list[CheckRow]
    folded: list[CheckRow]
    closest: str
    n_statistical: int
    figures: list[FigureView] = field(default_factory=list)  # drawn in this section
    see_also: list[FigureView] = field(default_factory=list)  # drawn in an earlier section
    plain: str = ""  # the tolerance in plain words, before its statistics
    why: str = ""  # why the verdict is what it is, in words, where it is not simply "holds" or "fails"
    opening: dict = field(default_factory=dict)  # the lesson's words, this run's number, the verdict (claim_text)
    reason: tuple[str, str | None] = ("", None)  # its own derivation, and the claim whose shared one it refers to
    notes: list[str] = field(default_factory=list)  # notes of many rows, said once beneath the table
    checks: list[Check] = field(default_factory=list)  # as decided, in the table's order
    margin_rule: str = ""  # the margin's meaning, true for every row of its table (claim_text.margin_rule)
    k_words: str = ""  # the k its statistical checks are held to, and where it comes from (claim_text.k_sentence)


def figure_views(pngs: Mapping[str, bytes], checks: Sequence[Check], claim_ids: Sequence[str],
                 narrow: Mapping[str, bytes] | None = None) -> dict[str, FigureView]:
    """Number the figures in the order the claims first use them (unclaimed figures last), each with its phone's
    variant where `narrow` has one."""
    narrow = narrow or {}
    order: list[FigureSpec] = []
    for cid in claim_ids:
        order += [f for f in FIGURES.values() if cid in f.claims and f not in order]
    order += [f for f in FIGURES.values() if f not in order]
    views = {}
    for spec in order:
        if spec.name not in pngs:
            continue
        first = next((cid for cid in claim_ids if cid in spec.claims), None)
        png = pngs[spec.name]
        small = narrow.get(spec.name)
        views[spec.name] = FigureView(len(views) + 1, spec.name, spec.caption_for(*spec.k_in(checks)), data_uri(png),
                                      first, *css_size(png), (data_uri(small), *css_size(small)) if small else None)
    return views


def claim_views(decision: Decision, claims: Iterable[Claim], figures: Mapping[str, FigureView]) -> list[ClaimView]:
    """One view per claim of the registry, in its order, with its checks sorted closest-to-failing first."""
    claims = list(claims)
    views, reasons = [], shared_derivations(claims)
    for claim in claims:
        made = [c for c in decision.checks if c.claim == claim.id]  # in the order the claim decides them
        verdict = claim_verdict(made) if made else NOT_MEASURED
        # closest to failing first, those whose verdict is the claim's before the others (verdicts.shown_first)
        checks = sorted(made, key=lambda c: (c.verdict == verdict, closeness(c)), reverse=True)
        rows = [check_row(c) for c in checks]
        notes = repeated_notes([r.note for r in rows])
        rows = [replace(r, note="") if note_key(r.note) in notes else r for r in rows]
        split = SHOW_FIRST if len(rows) > FOLD_ABOVE else len(rows)
        mine = [f for f in figures.values() if claim.id in FIGURES[f.name].claims]
        views.append(ClaimView(
            claim, verdict, BADGES[verdict], rows[:split], rows[split:],
            describe(checks[0], rule=False) if checks else "no checks",
            sum(c.basis in ("statistical", "derived") for c in checks),
            [f for f in mine if f.first_claim == claim.id], [f for f in mine if f.first_claim != claim.id],
            plain_tolerance(checks, decision.alpha_family),
            " ".join(filter(None, (
                {NOT_PER_DRAW: why_not_per_draw, NOT_HERE: why_not_here}.get(
                    verdict, lambda _: "")(checks), why_condition_not_met(checks)))),
            opening(claim, verdict, made), reasons[claim.id], notes, checks, margin_rule(checks),
            k_sentence(claim.id, checks, decision)))
    return views


def summary(views: Sequence[ClaimView]) -> dict:
    """The summary's headline, a count per verdict kind (the claims that hold first, then the others, the failing
    last), and the claims of every kind but "holds" listed under their own kind, worst first, with the margin's
    meaning in one sentence true for every check they show (the closest, where no reason in words stands)."""
    counts = {v: sum(cv.verdict == v for cv in views) for v in VERDICT_ORDER}
    headline = [(v, counted(v, counts[v])) for v in VERDICT_KINDS if counts[v]]
    groups = [(v, [cv for cv in views if cv.verdict == v]) for v in VERDICT_ORDER if v != HOLDS and counts[v]]
    shown = [cv.checks[0] for _, group in groups for cv in group if cv.checks and not cv.why]
    return {"n_claims": len(views), "counts": counts, "headline": headline, "groups": groups,
            "margin_rule": margin_rule(shown), "n_checks": sum(len(cv.shown) + len(cv.folded) for cv in views)}


def named_mistakes(detail: str) -> list[str]:
    """The mistakes a part's verdict row names (its keys, ;-separated), each as "title. Fix: fix"."""
    from sdpa_lab.grading.mistakes import MISTAKES

    return [f"{MISTAKES[key].title}. Fix: {MISTAKES[key].fix}" for key in detail.split(";") if key in MISTAKES]


def part_badge(verdict: str) -> tuple[str, str]:
    """The badge of a learner's part: red only for a failure (a failing check, a hang, a crash, a memory
    blow-up, a file that cannot be used); a function not written yet, or missing, is grey."""
    if verdict == "pass":
        return BADGES[HOLDS]
    if verdict in ("not written yet", "missing"):
        return BADGES[NOT_MEASURED]
    return BADGES[FAILS]


def _points(cell: str | None) -> float | None:
    """A points cell of results/solutions.csv (empty on the rows that hold none, absent from older files)."""
    return float(cell) if cell else None


def solutions_view(path: str | Path) -> list[dict]:
    """results/solutions.csv (sdpa_lab.grading) grouped by part: its verdict, checks, notes, error and diagnosis."""
    parts: dict[str, dict] = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            part = parts.setdefault(row["part"], {"name": row["part"], "verdict": "", "passed": False, "detail": "",
                                                  "badge": BADGES[NOT_MEASURED], "named": [], "graded": False,
                                                  "points": None, "max_points": None,
                                                  "checks": [], "notes": [], "error": "", "diagnosis": []})
            item, verdict, detail = row["item"], row["verdict"], row["detail"]
            if item in ("verdict", "load", "grader", "total"):
                part.update(verdict=verdict, passed=verdict == "pass", detail=detail, badge=part_badge(verdict),
                            named=named_mistakes(detail) if item == "verdict" and verdict != "pass" else [],
                            graded=item == "verdict", points=_points(row.get("points")),
                            max_points=_points(row.get("max_points")))
            elif item in ("note", "diagnosis"):
                part["notes" if item == "note" else "diagnosis"].append(detail)
            elif item == "error":
                part["error"] = detail
            else:
                part["checks"].append({"claim": row["claim"], "what": item, "ok": verdict == "ok",
                                       "detail": detail})
    for part in parts.values():  # notes on the file as a whole (what of it did not run), no verdict: nothing fails
        if part["name"] == "file" and not part["verdict"]:
            part.update(verdict="notes", passed=True)
    return list(parts.values())


def graded_seed(parts: Sequence[dict]) -> int | None:
    """The seed a learner's file was graded with, as its checks name it ("seed N, d_k = ..."); None if none does."""
    for part in parts:
        for c in part["checks"]:
            m = re.match(r"seed (\d+),", c["what"])
            if m:
                return int(m.group(1))
    return None


def regrade_command(path: str, seed: int | None) -> str:
    """The command that grades a file again as the report's grade did (the same seed: the same inputs)."""
    return f"sdpa-lab grade {path}" + (f" --seed {seed}" if seed is not None else "")


def render_report(decision: Decision, pngs: Mapping[str, bytes], prov: Mapping,
                  claims: Iterable[Claim] | None = None, solutions: Sequence[dict] | None = None,
                  calibration: Mapping | None = None, class_overview: Mapping | None = None,
                  graded: Mapping | None = None, solutions_total: Mapping | None = None,
                  narrow: Mapping[str, bytes] | None = None) -> str:
    """The report's HTML: summary (with a line on a class if graded, sdpa_lab.grading.gradebook.overview, and a
    link to its own page), one section per claim (registry order), a learner's solutions if graded
    (solutions_view), further figures, provenance.

    `calibration`: the calibration study's headline numbers (sdpa_lab.calibration.summary.main_report_summary),
    quoted with a link to reports/calibration.html; None when no study has been run. `graded`: the learner's file
    and the command that grades it again ({"file", "command"}), named in the learner's section. `solutions_total`:
    the last row of results/solutions.csv, the parts that pass and the points, as `sdpa-lab grade` says them.
    `narrow`: the figures' phone's variants (PNG bytes by name), shown on a narrow screen in their place.
    """
    claims = list(claims if claims is not None else registry().values())
    figures = figure_views(pngs, decision.checks, [c.id for c in claims], narrow)
    views = claim_views(decision, claims, figures)
    unclaimed = [f for f in figures.values() if f.first_claim is None]
    return environment().get_template("report.html.j2").render(
        claims=views, summary=summary(views), decision=decision, unclaimed=unclaimed, prov=prov,
        badges=BADGES, verdict_order=VERDICT_ORDER,
        claim_ks=claim_ks(decision), show_first=SHOW_FIRST,
        solutions=solutions, claim_badges={cv.claim.id: cv.badge for cv in views},
        claim_verdicts={cv.claim.id: cv.verdict for cv in views}, calibration=calibration,
        class_overview=class_overview, graded=graded, solutions_total=solutions_total)


def recorded_seeds(results: Results) -> dict[str, list[int]]:
    """The seeds each result CSV records in its `seed` column."""
    out = {}
    for path in sorted(results.dir.glob("*.csv")):
        try:
            table = results[path.name]
        except ValueError:
            continue
        if "seed" in table.columns:
            out[path.name] = sorted({int(s) for s in table["seed"]})
    return out


def build_report(results_dir: str | Path, figures_dir: str | Path, config: Mapping, out: str | Path,
                 benchmarks: Iterable[str | Path] = (), repo_dir: str | Path = ".",
                 solutions: str | Path | None = None, grades: Iterable[str | Path] = ()) -> Decision:
    """Write the report to `out` from the claims decided in `results_dir`/claims.csv and the CSVs beside it
    (refusing results of another config); with `solutions` (results/solutions.csv), a "Your solutions" section too,
    right after the summary, naming config `solutions` and the command that grades it again;
    with a class's `grades` (their JSON records), a summary line linking the class overview, reports/class.html."""
    results = Results(results_dir)
    refuse_stale(results, dict(config))
    decision = read_claims(results.dir / "claims.csv")
    files = {name: figure_files(name, str(figures_dir)) for name in FIGURES}
    pngs, narrow = ({name: Path(f[kind]).read_bytes() for name, f in files.items() if Path(f[kind]).is_file()}
                    for kind in ("png", "narrow"))
    prov = provenance(config, benchmarks, repo_dir, recorded_seeds(results))
    parts = solutions_view(solutions) if solutions is not None else None
    total = next((p for p in parts or [] if p["name"] == "total"), None)
    parts = [p for p in parts if p is not total] if parts is not None else None
    graded = None
    if parts is not None and config.get("solutions"):
        seed = config.get("grading_seed", graded_seed(parts))
        graded = {"file": str(config["solutions"]), "command": regrade_command(str(config["solutions"]), seed)}
    # The calibration study's tables, if `snakemake calibration` has made them: read, never a rule input.
    calibration = main_report_summary(Path(results_dir) / "calibration")
    grades = list(grades)
    class_overview = None
    if grades:  # the summary's line on the class; its overview is reports/class.html (the gradebook rule's)
        from sdpa_lab.grading.gradebook import overview, read_records, rubric

        class_overview = overview(read_records(grades), rubric(config.get("grading_points")))
    write_text(render_report(decision, pngs, prov, solutions=parts, calibration=calibration,
                             class_overview=class_overview, graded=graded, solutions_total=total,
                             narrow=narrow), out)
    return decision
