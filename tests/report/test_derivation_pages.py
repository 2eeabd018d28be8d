"""Each claim's folded derivation links its page in docs/claims/, and the page is there: a relative link that
works from reports/report.html in a clone. Only existence and links are held here, never a page's wording."""

from __future__ import annotations

import re

import pytest

from sdpa_lab import claims as C

from tests.conftest import REPO
from tests.report import test_html as TH

report_html, section = TH.report_html, TH.section  # its fixture and helper, shared

pytestmark = pytest.mark.xdist_group("report")


def link(claim: C.Claim) -> str:
    """The claim's page as the report links it: relative to reports/, at the claim's anchor."""
    return f"../{claim.page}#{claim.id.lower()}"


def test_every_claims_page_exists_with_its_anchor():
    for claim in C.CLAIMS:
        assert claim.page.startswith("docs/claims/") and claim.page.endswith(".md"), claim.id
        page = REPO / claim.page
        assert page.is_file(), (claim.id, claim.page)
        assert f'<a id="{claim.id.lower()}"></a>' in page.read_text(encoding="utf-8"), claim.id
        path, _ = link(claim).split("#")
        assert (REPO / "reports" / path).resolve() == page.resolve(), claim.id  # the link works from reports/


def test_the_pages_links_to_one_another_resolve():
    for page in (REPO / "docs" / "claims").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", text):
            assert (page.parent / target).is_file(), (page.name, target)


@TH.WHOLE_RUN
def test_each_claims_derivation_links_its_page(report_html):
    for claim in C.CLAIMS:
        derivation = section(report_html, claim.id).split('<details class="derivation"')[1].split("</details>")[0]
        assert f'href="{link(claim)}"' in derivation, claim.id
