"""The report on a phone, measured in headless Chromium: at 390 x 844 px the summary and every claim's lead fit 8
screens, no element is wider than the screen (every check's measured value, tolerance, margin and verdict on it), and
every figure's smallest type shows at 9 px or more; at 1280 px nothing is wider than the window either."""

from __future__ import annotations

import html
import json
import re

import matplotlib.text
import pytest

from sdpa_lab.report import figures as F
from sdpa_lab.report.specs import NARROW_WIDTH
from sdpa_lab.results import Results

from tests.report import test_html as TH

pytestmark = pytest.mark.xdist_group("report")
decision, report_html, section = TH.decision, TH.report_html, TH.section  # its fixtures, shared

PHONE, SCREEN_HEIGHT, SCREENS, WORDS = 390, 844, 8, 1100
SMALLEST_TYPE = 9.0  # CSS px
# Test-only: the page is laid out in an iframe of the phone's width (a headless window is at least 500 px wide),
# every <details> opened, and what it measures written into the outer page, which --dump-dom prints.
PROBE = """<script>window.addEventListener('load', function () {
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var vw = document.documentElement.clientWidth, wide = [];
  document.body.querySelectorAll('*').forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right > vw + 0.5 || r.left < -0.5)) wide.push(el.tagName + '.' + el.className);
  });
  var cards = Array.prototype.map.call(document.querySelectorAll('table.checks tbody tr'), function (tr) {
    return Array.prototype.filter.call(tr.children, function (td) {
      var r = td.getBoundingClientRect(); return r.width > 0 && r.right <= vw + 0.5; }).length; });
  document.querySelectorAll('details').forEach(function (d) { d.open = false; });
  var imgs = Array.prototype.map.call(document.images, function (i) {
    return [i.closest('figure').id.slice(4), i.clientWidth / i.naturalWidth]; });
  parent.document.body.setAttribute('data-layout', JSON.stringify({vw: vw, wide: wide, cards: cards, imgs: imgs,
    leads: document.getElementById('leads').getBoundingClientRect().bottom + window.scrollY}));
});</script>"""


def laid_out(page: str, width: int, tmp_path) -> dict:
    """What the probe measures of `page` laid out `width` px wide."""
    exe = TH.chromium()
    probed = page.replace("script-src 'none'", "script-src 'unsafe-inline'").replace("</body>", PROBE + "</body>")
    outer = tmp_path / f"outer{width}.html"
    outer.write_text(f'<!doctype html><html><body style="margin:0"><iframe style="border:0;width:{width}px;'
                     f'height:{SCREEN_HEIGHT}px" srcdoc="{html.escape(probed, quote=True)}"></iframe></body></html>',
                     encoding="utf-8")
    proc = TH.run_chromium(exe, tmp_path / f"profile{width}", "--hide-scrollbars", "--virtual-time-budget=10000",
                           "--dump-dom", outer.as_uri())  # a phone's scrollbars overlay the page
    found = re.search(r'data-layout="([^"]*)"', proc.stdout)
    assert found, proc.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def smallest_type(name: str, results: Results, k: float) -> float:
    """The smallest font size, in points, of any text of the phone's variant of figure `name`, as drawn."""
    with F.style(), F.narrow():
        fig = F.wrap_labels(F.draw(name, results, k if F.FIGURES[name].uses_k else None))
    F.render(fig, "png")  # drawn: its tick labels exist
    return min(t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip())


def five_minute_view(page: str) -> str:
    """The text a reader meets before the first claim's section: the header, the summary and the leads, without
    what is folded in a <details>."""
    head = page[page.index("<main"):page.index('<section class="claim')]
    head = re.sub(r"<details.*?</details>|<style.*?</style>", " ", head, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", head)).split())


@TH.WHOLE_RUN
def test_on_a_phone_the_five_minute_view_fits_and_nothing_is_hidden_sideways(run_dir, decision, report_html,
                                                                             tmp_path):
    layout = laid_out(report_html, PHONE, tmp_path)
    assert layout["vw"] == PHONE
    assert layout["wide"] == []  # with every <details> open
    assert layout["leads"] <= SCREENS * SCREEN_HEIGHT, layout["leads"]
    assert len(five_minute_view(report_html).split()) <= WORDS
    # each check a card whose every cell (parameters, expected, measured, rule, tolerance, margin, verdict) shows
    assert layout["cards"] and set(layout["cards"]) == {8}
    results = Results(run_dir / "results")
    assert sorted(name for name, _ in layout["imgs"]) == sorted(F.FIGURES)
    for name, scale in layout["imgs"]:  # image px -> CSS px; a point is 96/72 CSS px at the figure's DPI
        px = smallest_type(name, results, F.FIGURES[name].k_in(decision.checks)[0]) * F.DPI / 72 * scale
        assert px >= SMALLEST_TYPE, (name, round(px, 2))


@TH.WHOLE_RUN
def test_on_a_wide_screen_nothing_is_wider_than_the_window_and_the_full_figures_show(report_html, tmp_path):
    layout = laid_out(report_html, 1280, tmp_path)
    assert layout["wide"] == []
    assert all(scale >= 96 / F.DPI * 0.99 for _, scale in layout["imgs"])  # the wide figures, at their size


def test_the_phones_variant_stacks_the_panels_in_a_narrow_figure():
    with F.narrow():
        fig, axes = F.new_figure(2)
    assert tuple(fig.get_size_inches()) == F.narrow_size(2, F.WIDTH, F.HEIGHT)
    assert fig.get_size_inches()[0] == NARROW_WIDTH and len(axes) == 2
    assert axes[0].get_position().y0 > axes[1].get_position().y1  # one above the other
    fig, axes = F.new_figure(2)  # outside narrow(): as before
    assert tuple(fig.get_size_inches()) == (F.WIDTH, F.HEIGHT) and axes[0].get_position().x1 < axes[1].get_position().x0
