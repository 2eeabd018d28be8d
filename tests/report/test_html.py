"""The figures and the HTML report, tested as a reader would meet them: from a small run's CSVs, without Snakemake."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

from sdpa_lab import claims as C
from sdpa_lab.claims.verdicts import VERDICT_KINDS, counted, shown_first
from sdpa_lab.io import write_csv
from sdpa_lab.numbers import at_unit
from sdpa_lab.report import figures as F
from sdpa_lab.report import html as H
from sdpa_lab.report import provenance as P
from sdpa_lab.report.claim_text import PLAIN_TOLERANCE
from sdpa_lab.report.rendering import png_size
from sdpa_lab.results import Results

from tests.report.conftest import BENCHMARK_TSV, REPORT_CONFIG
from tests.report.test_figures import assert_labelled

# On one test worker (pytest-xdist, --dist loadgroup): the report run (tests/report/conftest.py), made once.
pytestmark = pytest.mark.xdist_group("report")

# The tests that read the report run: a whole run made in process, every experiment, claim and figure (the
# figures' unit tests on hand-made tables: tests/report/test_figures.py).
WHOLE_RUN = pytest.mark.pipeline


@pytest.fixture(scope="module")
def report_html(run_dir) -> str:
    return (run_dir / "reports" / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def decision(run_dir) -> C.Decision:
    """The report run's claims decided afresh from its CSVs (not read from its claims.csv), once for the module."""
    return C.decide(run_dir / "results")


class Tags(HTMLParser):
    """Every start tag with its attributes, the ids, and the text of <style> blocks."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def parse(html: str) -> Tags:
    parser = Tags()
    parser.feed(html)
    parser.close()
    return parser


def section(html: str, anchor: str) -> str:
    """The HTML of the <section id=anchor>."""
    match = re.search(rf'<section[^>]*\bid="{re.escape(anchor)}"[^>]*>(.*?)</section>', html, re.S)
    assert match, f"no section {anchor}"
    return match.group(1)


# --------------------------------------------------------------------------
# Figures

@WHOLE_RUN
@pytest.mark.parametrize("name", list(F.FIGURES))
def test_each_figure_draws_with_labelled_axes(run_dir, name):
    assert_labelled(F.draw(name, Results(run_dir / "results"), 4.0), name)


@WHOLE_RUN
def test_the_report_shows_the_claims_csv_exactly_as_deciding_again_would(run_dir):
    """The report reads results/claims.csv instead of deciding the claims again: the same page either way."""
    results = run_dir / "results"
    pngs = {name: (run_dir / "reports" / "figures" / f"{name}.png").read_bytes() for name in F.FIGURES}
    prov = P.provenance(REPORT_CONFIG, repo_dir=run_dir)
    page = H.render_report(C.read_claims(results / "claims.csv"), pngs, prov)
    assert page == H.render_report(C.decide(results), pngs, prov)
    assert "k = " in page and "Figure 1" in page


@WHOLE_RUN
def test_figures_carry_no_date_or_version(run_dir):
    """Nothing in a figure's bytes changes from one run to the next (drawn again, each gives the same bytes:
    tests/report/test_jobs.py)."""
    for name in F.FIGURES:
        png = (run_dir / "reports" / "figures" / f"{name}.png").read_bytes()
        svg = (run_dir / "reports" / "figures" / f"{name}.svg").read_bytes()
        assert b"<dc:date>" not in svg and b"Matplotlib v" not in svg, name
        assert b"Software" not in png and b"matplotlib" not in png.lower(), name


@WHOLE_RUN
def test_saved_figures_are_png_and_svg_at_fixed_size(run_dir):
    for name in F.FIGURES:
        png = (run_dir / "reports" / "figures" / f"{name}.png").read_bytes()
        assert png_size(png)[0] in (round(F.WIDTH * F.DPI), round(6.4 * F.DPI)), name
        assert (run_dir / "reports" / "figures" / f"{name}.svg").read_text().lstrip().startswith("<?xml")


def test_every_figure_belongs_to_claims_of_the_lesson_order():
    for spec in F.FIGURES.values():
        assert spec.claims and set(spec.claims) <= set(C.registry()), spec.name
        assert "{band}" in spec.caption or not spec.uses_k, spec.name


def test_every_figure_has_a_drawing_function_and_a_snakemake_report_caption(repo):
    assert list(F.DRAW) == list(F.FIGURES)
    for name in F.FIGURES:
        caption = (repo / "workflow" / "report" / "figures" / f"{name}.rst").read_text()
        assert f'snakemake.params.captions["{name}"]' in caption, name


def test_band_words_say_which_interval():
    assert "4.50" in F.band_words(4.5) and "Bonferroni" in F.band_words(4.5)
    assert "95%" in F.band_words(None) and F.band_z(None) == pytest.approx(1.959964, abs=1e-6)


# --------------------------------------------------------------------------
# The HTML report

@WHOLE_RUN
def test_report_parses_and_is_self_contained(report_html):
    tags = parse(report_html)
    names = [t for t, _ in tags.tags]
    assert "script" not in names and "link" not in names and "iframe" not in names
    imgs = [a for t, a in tags.tags if t == "img"]
    assert len(imgs) == len(F.FIGURES)
    for attrs in imgs:
        assert attrs["src"].startswith("data:image/png;base64,")
        assert attrs.get("alt")
    for tag, attrs in tags.tags:
        for key in ("src", "href", "srcset", "poster", "data"):
            value = attrs.get(key)
            if value is not None and not (tag == "a" and value.startswith("../docs/claims/")):  # a link to read on
                assert value.startswith(("data:", "#")), f"<{tag} {key}={value[:60]!r}> leaves the file"
    css = "\n".join(tags.styles)
    assert "@import" not in css and "url(" not in css and "@font-face" not in css
    assert "@media print" in css and "overflow-x: auto" in css and "max-width" in css


@WHOLE_RUN
def test_every_claim_has_its_section_with_this_runs_verdict_in_registry_order(decision, report_html):
    ids = list(C.registry())
    positions = [report_html.index(f'id="{cid}"') for cid in ids]
    assert positions == sorted(positions)
    for cid, _claim in C.registry().items():
        body = section(report_html, cid)
        checks = [c for c in decision.checks if c.claim == cid]
        verdict = H.claim_verdict(checks)
        assert f"</span> {verdict}</span>" in body.split("</h2>")[0], cid
        assert opens_with(body, shown_first(checks)), cid  # the check shown first (the closest) opens the table
        assert len(re.findall(r"<tr class=\"row-", body)) == len(checks), cid  # every check, once
        for spec in F.figures_for(cid):  # each figure drawn in its first claim, linked from the others
            assert f'id="fig-{spec.name}"' in body or f'href="#fig-{spec.name}"' in body, (cid, spec.name)


def group(summary: str, badge: str) -> str:
    """The summary's box of the claims of one verdict kind (its badge's class), from its heading to its end."""
    boxes = [b.split("</div>")[0] for b in re.split(r'<div class="(?:caveats|attention)">', summary)[1:]]
    (box,) = [b for b in boxes if f'<span class="badge {badge}">' in b.split("</h3>")[0]]
    return box


def first_row(body: str) -> str:
    """The first row of the first checks table in a claim's section."""
    return re.search(r'<tr class="row-[^"]*">.*?</tr>', body, re.S).group(0)


def opens_with(body: str, c: C.Check) -> bool:
    """Whether a claim's checks table opens with check `c`'s row: its verdict's class, name, parameters, expected
    and measured value (the numbers to their unit's digits)."""
    row = first_row(body)
    return all(cell in row for cell in (
        f'<tr class="row-{H.BADGES[c.verdict][0]}">', f'<td class="check">{escape(c.check)}',
        f"{escape(c.parameters)}</td>", f'<td class="n" data-label="expected">{H.expected_text(c)}</td>',
        f"<strong>{at_unit(c.measured, H.measured_unit(c))}</strong>"))


@WHOLE_RUN
def test_long_check_lists_fold_with_the_closest_first(decision, report_html):
    for cid in C.registry():
        checks = [c for c in decision.checks if c.claim == cid]
        body = section(report_html, cid)
        if len(checks) > H.FOLD_ABOVE:
            shown, folded = body.split("<details", 1)
            assert len(re.findall(r"<tr class=\"row-", shown)) == H.SHOW_FIRST, cid
            assert opens_with(shown, shown_first(checks)), cid
        else:
            assert '<details class="more"' not in body, cid


@WHOLE_RUN
def test_summary_counts_claims_by_verdict(decision, report_html):
    """The headline counts every verdict kind the run has, the claims that hold first, each count what deciding the
    claims again gives, and the counts add up to every claim."""
    verdicts = [H.claim_verdict([c for c in decision.checks if c.claim == cid]) for cid in C.registry()]
    headline = re.search(r'<p class="headline">(.*?)</p>', section(report_html, "summary"), re.S).group(1)
    said = re.sub(r"<[^>]+>", "", headline)
    counts = {v: verdicts.count(v) for v in VERDICT_KINDS if v in verdicts}
    assert said == f"{len(verdicts)} claims: " + " · ".join(counted(v, n) for v, n in counts.items())
    assert said.split(": ")[1].startswith(f"{verdicts.count(C.HOLDS)} hold")


@WHOLE_RUN
def test_a_failing_claim_is_shown_as_failing_prominently(run_dir, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(run_dir / "results", results)
    t = pd.read_csv(results / "variance.csv")
    t.loc[(t.d_k == 64) & (t.scale == "none") & (t.statistic == "variance"), "value"] = 99.0
    write_csv(t, results / "variance.csv")
    decision = C.decide(results)
    html = H.render_report(decision, {}, P.provenance(REPORT_CONFIG, [], tmp_path))
    summary = section(html, "summary")
    assert 'class="attention"' in summary and 'href="#B1"' in summary.split('class="attention"')[1]
    assert '<span class="badge fails">' in section(html, "B1").split("</h2>")[0]
    assert '<tr class="row-fails">' in section(html, "B1")
    assert "99" in section(html, "B1")  # the perturbed number, straight from the CSV


def test_config_strings_are_escaped():
    decision = C.Decision((), {})
    evil = {"seed": 1, "note": "<script>alert('x')</script>", "a&b": "\"quoted\" <b>bold</b>"}
    html = H.render_report(decision, {}, P.provenance(evil, [], "."), claims=list(C.registry().values()))
    assert "<script>" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(" in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    parse(html)


@WHOLE_RUN
def test_provenance_section(report_html):
    prov = section(report_html, "provenance")
    for package, version in P.package_versions().items():
        assert f"<th>{package}</th><td>{version}</td>" in prov
    assert P.NOT_GIT in prov  # the fixture's run folder is not a git checkout
    assert "<td>variance</td><td class=\"n\">1.25</td>" in prov  # its runtime, from the benchmark TSV
    assert f"<code>{REPORT_CONFIG['seed']}</code>" in prov
    assert "n_pairs: 2000" in prov


def test_git_commit_of_this_checkout(repo):
    commit = P.git_commit(repo)
    assert commit == P.NOT_GIT or re.match(r"[0-9a-f]{40}", commit)


def test_read_benchmark(tmp_path):
    path = tmp_path / "claims.tsv"
    path.write_text(BENCHMARK_TSV)
    r = P.read_benchmark(path)
    assert (r.rule, r.seconds, r.hms, r.max_rss_mb) == ("claims", 1.25, "0:00:01", 106.84)
    (tmp_path / "broken.tsv").write_text("nonsense")
    assert P.runtimes([path, tmp_path / "broken.tsv", tmp_path / "absent.tsv"]) == [r]
    job = tmp_path / "benchmarks" / "trial_scores" / "seed7_T8_trials200_dk4.tsv"  # a job of a rule with wildcards
    job.parent.mkdir(parents=True)
    job.write_text(BENCHMARK_TSV)
    assert P.read_benchmark(job).rule == "trial_scores/seed7_T8_trials200_dk4"


def test_num_formats_for_readers():
    assert H.num(float("nan")) == "—" and H.num(float("inf")) == "∞" and H.num(-float("inf")) == "−∞"
    assert H.num(3.0) == "3" and H.num(-0.1234567) == "−0.123457" and H.num(2.5e-16) == "2.5 × 10⁻¹⁶"


# --------------------------------------------------------------------------
# In a real browser, offline

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage",
                  "--host-resolver-rules=MAP * ~NOTFOUND")
# Test-only: after load, write each image's naturalWidth into the DOM, which --dump-dom then prints.
PROBE = """<script>window.addEventListener('load', function () {
  var imgs = document.images;
  for (var i = 0; i < imgs.length; i++) imgs[i].setAttribute('data-natural-width', String(imgs[i].naturalWidth));
  document.body.setAttribute('data-probe', 'done');
});</script>"""


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (CI installs Debian's chromium in .ci/run)")
    return exe


def run_chromium(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=120)


@WHOLE_RUN
def test_report_in_a_headless_browser(decision, run_dir, report_html, tmp_path):
    exe = chromium()
    # The shipped report is script-free (and its CSP forbids scripts); only this copy runs the probe.
    probed = report_html.replace("script-src 'none'", "script-src 'unsafe-inline'")
    probed = probed.replace("</body>", PROBE + "</body>")
    page = tmp_path / "probe.html"
    page.write_text(probed, encoding="utf-8")
    proc = run_chromium(exe, tmp_path / "profile", "--virtual-time-budget=10000", "--dump-dom", page.as_uri())
    dom = proc.stdout
    assert 'data-probe="done"' in dom, proc.stderr[-2000:]
    widths = [int(w) for w in re.findall(r'data-natural-width="(\d+)"', dom)]
    assert len(widths) == len(F.FIGURES) and all(w > 0 for w in widths), widths
    for cid in C.registry():
        assert f'id="{cid}"' in dom, cid
        verdict = H.claim_verdict([c for c in decision.checks if c.claim == cid])
        assert f"</span> {verdict}</span>" in section(dom, cid), cid

    shot = tmp_path / "report.png"
    proc = run_chromium(exe, tmp_path / "profile2", f"--screenshot={shot}", "--window-size=1280,4000",
                        "--hide-scrollbars", (run_dir / "reports" / "report.html").as_uri())
    assert shot.is_file() and png_size(shot.read_bytes()) == (1280, 4000), proc.stderr[-2000:]


def test_templates_ship_as_package_data(repo):
    import tomllib
    from importlib import resources

    data = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["sdpa_lab"]
    assert "report/templates/*" in data
    templates = resources.files("sdpa_lab.report") / "templates"
    assert {"report.html.j2", "report.css"} <= {p.name for p in templates.iterdir()}


def test_numbers_are_rounded_to_the_digits_their_unit_leaves():
    assert at_unit(-0.854272, 0.21) == "−0.85" and at_unit(2.22045e-16, 1.55e-15) == "2.2 × 10⁻¹⁶"
    assert at_unit(1027.36, 4.58) == "1,027.4" and at_unit(3.0, 0.1) == "3.00"
    printed = C.Check("A1", "raw score variance", "d_k=64", "within", 64.249, 64.2485718, "printed", "x.csv",
                      tolerance=0.0005)
    row = H.check_row(printed)
    assert (row.expected, row.measured, row.margin) == ("64.249", "64.24857", "0.86")  # a digit past the tolerance's


@pytest.mark.parametrize("relation, deviation, margin, verdict", [
    ("within", -0.5, "0.50", C.HOLDS), ("within", 1.5, "1.50", C.FAILS),
    ("not below", -0.5, "0.50", C.HOLDS), ("not below", 2.0, "−2.00", C.HOLDS),
    ("above", 1.68, "−1.68", C.HOLDS), ("above", 0.5, "−0.50", C.INCONCLUSIVE), ("above", -1.5, "1.50", C.FAILS),
])
def test_margin_has_one_meaning_fails_above_1(relation, deviation, margin, verdict):
    c = C.Check("B7", "x", "p", relation, 0.0, deviation, "statistical", "x.csv", tolerance=1.0, se=0.25)
    row = H.check_row(c)
    assert (row.margin, row.verdict) == (margin, verdict)


@WHOLE_RUN
def test_a_verdict_that_is_not_fails_is_never_styled_as_one(decision, tmp_path):
    # The default run's B5 holds on average, not per draw: a caveat in a neutral box, with why in words.
    html = H.render_report(decision, {}, P.provenance(REPORT_CONFIG, [], tmp_path))
    summary = section(html, "summary")
    assert 'class="attention"' not in summary  # the red box is for failing claims only
    caveats = group(summary, "average")  # under its own kind, named
    assert 'href="#B5"' in caveats and "It holds on average over many draws, not in every single draw" in caveats
    assert "single draws show it" in caveats
    rule = section(html, "B1").split('<p class="margin-rule">')[1].split("</p>")[0]
    assert "above 1 it fails" in rule  # margin's rule, in words, above the table, not folded away


@WHOLE_RUN
def test_each_tolerance_paragraph_opens_with_a_plain_sentence(report_html):
    for cid in C.registry():
        tolerance = section(report_html, cid).split('<p class="tolerance"><strong>Tolerance:</strong> ')[1]
        plain = tolerance.split('<span class="stats">')[0]
        assert plain.strip() and any(p.split(",")[0] in plain for p in PLAIN_TOLERANCE.values()), cid


@WHOLE_RUN
def test_the_learners_verdicts_open_the_summary_and_link_their_section(decision, tmp_path):
    csv_path = tmp_path / "solutions.csv"
    rows = [{"part": "softmax", "item": "verdict", "claim": "", "verdict": "FAIL (1 of 4 checks)",
             "detail": "whole_array_sum"},
            {"part": "softmax", "item": "x", "claim": "B9", "verdict": "FAIL", "detail": "d"},
            {"part": "exercise_1", "item": "verdict", "claim": "", "verdict": "not written yet", "detail": ""}]
    write_csv(pd.DataFrame(rows), csv_path)
    html = H.render_report(decision, {}, P.provenance(REPORT_CONFIG, [], tmp_path),
                           solutions=H.solutions_view(csv_path))
    summary = section(html, "summary")
    yours = summary.split('class="yours')[1]
    assert summary.index('class="yours') < summary.index('class="headline"')  # the learner first
    assert 'href="#your-softmax"' in yours and 'href="#your-solutions"' in yours
    assert "softmax divides by the whole array&#39;s sum. Fix: divide by each row&#39;s own sum" in yours
    assert '<span class="badge missing"><span aria-hidden="true">–</span> not written yet' in yours  # grey
    assert 'id="your-softmax"' in html and 'id="your-exercise_1"' in html


@WHOLE_RUN
def test_an_inconclusive_claim_is_counted_and_listed_as_inconclusive_never_under_hold(decision, tmp_path):
    """B5 made inconclusive (its last fall within the noise, as with entropy_sweep.trials: 1000): the headline counts
    it as inconclusive, not among the claims that hold; it stands under its own kind's heading, and the margin
    sentence under the summary says what an inconclusive margin is."""
    from dataclasses import replace

    falls = [c for c in decision.checks if c.claim == "B5" and c.relation == "above"]
    last = falls[-1]
    # a fall theory itself puts there (a claimed fall is held to theory's value too: one off theory fails)
    weak = replace(last, measured=last.expected + 0.5 * last.tolerance, theory=last.expected + 0.5 * last.tolerance)
    assert weak.verdict == C.INCONCLUSIVE
    checks = tuple(weak if c is last else c for c in decision.checks)
    html = H.render_report(replace(decision, checks=checks), {}, P.provenance(REPORT_CONFIG, [], tmp_path))
    summary = section(html, "summary")
    headline = re.sub(r"<[^>]+>", "", re.search(r'<p class="headline">(.*?)</p>', summary, re.S).group(1))
    verdicts = [H.claim_verdict([c for c in checks if c.claim == cid]) for cid in C.registry()]
    assert verdicts.count(C.INCONCLUSIVE) == 1 and f" {verdicts.count(C.HOLDS)} hold · 1 inconclusive" in headline
    assert 'href="#B5"' in group(summary, "inconclusive")
    assert all('href="#B5"' not in box for box in re.split(r'<div class="(?:caveats|attention)">', summary)[1:]
               if "inconclusive" not in box.split("</h3>")[0])
    rule = summary.split('<p class="margin-rule">')[1].split("</p>")[0]
    assert "between −1 and 1: inconclusive" in rule and "never a failure" not in rule  # no per-draw row shown
