"""Readable pages for eCFR and US Code downloads; every other URL unchanged (docs/specs.md, T7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.citation_json import json_values
from webapp.citations.urls import humanize_citation_url

ECFR = "https://www.ecfr.gov/api/versioner/v1/full"
USC = "https://uscode.house.gov/download/releasepoints/us/pl/119/36"


@pytest.mark.parametrize(
    ("url", "section", "page"),
    [
        (
            f"{ECFR}/2025-01-01/title-12.xml?part=1026&section=1026.43",
            None,
            "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.43",
        ),
        (
            f"{ECFR}/2025-01-01/title-12.xml?part=1026",
            None,
            "https://www.ecfr.gov/on/2025-01-01/title-12/part-1026",
        ),
        (
            f"{ECFR}/current/title-12.xml?part=1026&section=1026.13",
            None,
            "https://www.ecfr.gov/current/title-12/section-1026.13",
        ),
        (f"{ECFR}/2025-01-01/title-12.xml", None, "https://www.ecfr.gov/on/2025-01-01/title-12"),
        (
            f"{ECFR}/2025-01-01/title-12.xml?part=1026",
            "1026.12",
            "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.12",
        ),
        (
            f"{USC}/xml_usc26@119-36.zip",
            "121",
            "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121",
        ),
        (
            f"{USC}/xml_usc26@119-36.zip",
            "§ 121",
            "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121",
        ),
        (
            f"{USC}/xml_usc26@119-36.zip",
            None,
            "https://uscode.house.gov/browse/prelim@title26&edition=prelim",
        ),
        (
            f"{USC}/xml_usc26@119-36.zip",
            "121; DROP",
            "https://uscode.house.gov/browse/prelim@title26&edition=prelim",
        ),
        (
            f"{USC}/xml_usc50a@119-36.zip",
            "3001",
            "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title50A-section3001",
        ),
        (
            f"{USC}/xml_usc05@118-78.zip",
            "552",
            "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title5-section552",
        ),
        (
            f"{USC}/xml_usc05@118-78.zip",
            None,
            "https://uscode.house.gov/browse/prelim@title5&edition=prelim",
        ),
        (
            f"{USC}/usc01.zip",
            "1",
            "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title1-section1",
        ),
        (
            f"{USC}/xml_usc05a@118-78.zip",
            None,
            "https://uscode.house.gov/browse/prelim@title5A&edition=prelim",
        ),
        (
            f"{USC}/xml_usc05A@118-78.zip",
            "5",
            "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title5A-section5",
        ),
        (
            f"{USC}/xml_usc10@118-78.zip",
            "101",
            "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title10-section101",
        ),
    ],
    ids=[
        "ecfr-section",
        "ecfr-part",
        "ecfr-current",
        "ecfr-title",
        "ecfr-section-from-sidecar",
        "usc-section",
        "usc-section-sign",
        "usc-title",
        "usc-bad-section",
        "usc-appendix",
        "usc-padded-section",
        "usc-padded-title",
        "usc-padded-no-prefix",
        "usc-padded-appendix-title",
        "usc-padded-appendix-upper",
        "usc-trailing-zero-kept",
    ],
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
        f"{USC}/xml_usc00@118-78.zip",
        f"{USC}/xml_usc123@118-78.zip",
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


# A sidecar's `source_url` and `section` are JSON, so either may be any JSON value at all.
urls = st.text() | st.builds(
    "{}/{}usc{}{}@{}.zip".format,
    st.sampled_from([USC, "https://uscode.house.gov/download/releasepoints"]),
    st.sampled_from(["", "xml_"]),
    st.text("0123456789", max_size=3),
    st.sampled_from(["", "a", "A", "b"]),
    st.text(max_size=8),
)


@given(urls | json_values, json_values | st.text())
def test_never_raises_on_any_json(url: object, section: object) -> None:
    page = humanize_citation_url(url, section)  # type: ignore[arg-type]
    if not isinstance(url, str):
        assert page is url
    elif page != url:
        assert "title0" not in page and page.startswith("https://uscode.house.gov/")
