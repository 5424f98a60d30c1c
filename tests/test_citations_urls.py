"""Readable pages for eCFR and US Code downloads; every other URL unchanged (DESIGN.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.citations import humanize_citation_url

ECFR = "https://www.ecfr.gov/api/versioner/v1/full"
USC = "https://uscode.house.gov/download/releasepoints/us/pl/119/36"


@pytest.mark.parametrize(
    ("url", "section", "page"),
    [
        (f"{ECFR}/2025-01-01/title-12.xml?part=1026&section=1026.43", None,
         "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.43"),
        (f"{ECFR}/2025-01-01/title-12.xml?part=1026", None,
         "https://www.ecfr.gov/on/2025-01-01/title-12/part-1026"),
        (f"{ECFR}/current/title-12.xml?part=1026&section=1026.13", None,
         "https://www.ecfr.gov/current/title-12/section-1026.13"),
        (f"{ECFR}/2025-01-01/title-12.xml", None, "https://www.ecfr.gov/on/2025-01-01/title-12"),
        (f"{ECFR}/2025-01-01/title-12.xml?part=1026", "1026.12",
         "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.12"),
        (f"{USC}/xml_usc26@119-36.zip", "121",
         "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121"),
        (f"{USC}/xml_usc26@119-36.zip", "§ 121",
         "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121"),
        (f"{USC}/xml_usc26@119-36.zip", None,
         "https://uscode.house.gov/browse/prelim@title26&edition=prelim"),
        (f"{USC}/xml_usc26@119-36.zip", "121; DROP",
         "https://uscode.house.gov/browse/prelim@title26&edition=prelim"),
        (f"{USC}/xml_usc50a@119-36.zip", "3001",
         "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title50A-section3001"),
    ],
    ids=["ecfr-section", "ecfr-part", "ecfr-current", "ecfr-title", "ecfr-section-from-sidecar",
         "usc-section", "usc-section-sign", "usc-title", "usc-bad-section", "usc-appendix"],
)
def test_downloads_become_readable_pages(url: str, section: str | None, page: str) -> None:
    assert humanize_citation_url(url, section) == page


@pytest.mark.parametrize(
    "url",
    [
        "https://www.irs.gov/publications/p590a",
        "https://www.ecfr.gov/current/title-12/section-1026.43",
        "https://www.ecfr.gov/api/versioner/v1/full/2025-13/title-12.xml",
        "https://uscode.house.gov/view.xhtml?req=x",
        "https://evil.example/download/releasepoints/xml_usc26@1.zip",
        "ftp://www.ecfr.gov/api/versioner/v1/full/current/title-12.xml",
        "http://[::1",
        "not a url",
        "",
    ],
)
def test_other_urls_come_back_unchanged(url: str) -> None:
    assert humanize_citation_url(url) == url


@given(st.text(), st.none() | st.text())
def test_never_raises(url: str, section: str | None) -> None:
    assert isinstance(humanize_citation_url(url, section), str)
