"""The library reader: `GET /library/<corpus>/<path>`, the cited passage marked; 404 else."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.web.library import library_path, marked_html

RECORDS = "/library/tax-authority/guides/recordkeeping.md"
ROW = "| The usual case | 3 years from the date you filed"


def soup(response: TestResponse) -> BeautifulSoup:
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    with client.session_transaction() as session:
        session["user_id"] = user.id
    return client


def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in(client: FlaskClient) -> None:
    response = client.get(RECORDS)
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_a_document_with_no_url_reads_with_its_title_and_says_it_has_no_copy_online(
    demo: FlaskClient,
) -> None:
    response = demo.get(RECORDS)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    page = soup(response)
    assert [h.get_text() for h in page.select("h1")] == ["How long to keep tax records"]
    assert page.select_one(".library-kind").get_text() == "Tax reference"
    assert "no public copy online" in page.select_one(".library-original").get_text()
    assert not page.select(".library-original a") and not page.select("mark")
    body = page.select_one(".library-body")
    assert body is not None and body.select("table td")
    assert page.select_one('link[rel="stylesheet"][href$="/static/library.css"]') is not None
    assert not page.select("script:not([src])") and not page.select("[style]")


def test_the_cited_passage_is_marked_and_is_what_the_link_aims_at(demo: FlaskClient) -> None:
    page = soup(demo.get(RECORDS, query_string={"cite": ROW}))
    marks = page.select(".library-body mark")
    # The row's words sit in the table: the table is the passage, so all of it is marked.
    assert [m.get_text() for m in marks[:4]] == [
        "Your situation",
        "Keep the records for",
        "The usual case",
        "3 years from the date you filed (a return filed early counts as filed on the due date)",
    ]
    assert marks[0]["id"] == "cited" and not any(m.has_attr("id") for m in marks[1:])
    assert all(m.parent.name in ("td", "th") for m in marks)
    # Nothing outside it.
    assert not page.select(".library-body p mark")
    assert page.select_one(".library-notice") is None


def test_a_table_cited_by_its_first_words_is_marked_whole(demo: FlaskClient) -> None:
    page = soup(demo.get(RECORDS, query_string={"cite": "| Your situation | Keep"}))
    marks = page.select(".library-body mark")
    assert len(marks) == 2 * 7  # the header and six rows, two cells each
    assert marks[-1].get_text() == (
        "At least 4 years after the tax was due or paid, whichever is later"
    )
    assert all(m.find_parent("table") is not None for m in marks)


def test_a_paragraph_cited_across_its_lines_is_marked_whole(demo: FlaskClient) -> None:
    cite = "The time to keep a record follows the **period of limitations**: the window"
    page = soup(demo.get(RECORDS, query_string={"cite": cite}))
    (mark,) = page.select(".library-body mark")
    assert mark.parent.name == "p" and mark.select_one("strong") is not None
    assert mark.get_text().startswith("The time to keep a record")
    assert mark.get_text().rstrip().endswith("until that window closes for that return.")


def test_a_passage_not_in_the_document_marks_nothing_and_says_so(demo: FlaskClient) -> None:
    page = soup(demo.get(RECORDS, query_string={"cite": "Words this guide never says"}))
    assert not page.select("mark")
    assert page.select_one(".library-notice").get_text() == (
        "The cited passage could not be found in this document."
    )


def test_a_document_with_a_url_offers_its_readable_original(demo: FlaskClient) -> None:
    response = demo.get("/library/tax-authority/usc/title-26/section-121.md")
    link = soup(response).select_one(".library-original a")
    assert link is not None
    assert link["href"] == (
        "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121"
    )
    assert link.get_text().strip() == "Open the original at uscode.house.gov"
    assert (link["target"], link["rel"]) == ("_blank", ["noopener", "noreferrer"])


@pytest.mark.parametrize(
    "path",
    [
        "/library/nope/guides/recordkeeping.md",
        "/library/tax-authority/guides/missing.md",
        "/library/tax-authority/guides",
        "/library/tax-authority/guides/recordkeeping.md.meta.json",
        "/library/tax-authority/../credit-card-corpus/guides/disputing-a-card-charge.md",
        "/library/tax-authority/guides/../../mortgage-code/guides/escrow-basics.md",
        "/library/tax-authority/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/library/tax-authority/%252e%252e/%252e%252e/etc/passwd",
        "/library/tax-authority/..%2f..%2f..%2fetc%2fpasswd",
        "/library/tax-authority/..%5c..%5cetc%5cpasswd",
        "/library/tax-authority/%2fetc%2fpasswd",
        "/library/tax-authority/~/secrets",
        "/library/tax-authority/C:/Windows/win.ini",
        "/library/tax-authority/guides/recordkeeping.md%00.txt",
        "/library/tax-authority/.git/config",
        "/library/tax-authority/" + quote("guides/\u202erecordkeeping.md"),
    ],
    ids=[
        "unknown-corpus",
        "unknown-file",
        "folder",
        "sidecar",
        "corpus-escape",
        "dot-dot",
        "encoded-dot-dot",
        "double-encoded",
        "encoded-slashes",
        "backslashes",
        "absolute",
        "home",
        "drive",
        "nul",
        "hidden",
        "bidi",
    ],
)
def test_unknown_documents_and_every_traversal_are_not_found(demo: FlaskClient, path: str) -> None:
    response = demo.get(path, follow_redirects=True)
    assert response.status_code == 404
    assert "root:" not in response.get_data(as_text=True)


def test_a_url_cited_document_is_found_on_the_shelf() -> None:
    assert library_path("tax-authority", "https://www.irs.gov/publications/p526") == (
        "irs/publication-526.md"
    )
    # Cited under its readable page (the download humanized) or the download itself.
    section = "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.19"
    assert library_path("mortgage-code", section) == "regulation-z/1026.19.md"
    assert library_path("credit-card-corpus", section) is None
    # Two sections of one US Code download: the download names neither.
    zip_url = "https://uscode.house.gov/download/releasepoints/us/pl/119/36/xml_usc26@119-36.zip"
    assert library_path("tax-authority", zip_url) is None


@pytest.mark.parametrize(
    ("text", "cite", "marked"),
    [
        ("Title\n=====\n\nBody.", "Title", ["Title"]),
        ("## Head ##\n\nBody.", "Head", ["Head"]),
        ("> quoted *line*\n> and `more`", "> quoted *line*", ["quoted line\nand more"]),
        ("- one\n  two\n- three", "- one two - three", ["one\ntwo", "three"]),
        ("A \ue0000\ue001 stray placeholder.", "A stray", ["A  stray placeholder."]),
        ("Benefits:\n- Rental car cover\n- Trip delay\n- Lost bags", "Trip delay", ["Trip delay"]),
    ],
    ids=[
        "setext-heading",
        "closed-atx-heading",
        "blockquote",
        "list-items",
        "placeholders",
        "one-item-of-a-list",
    ],
)
def test_marks_wrap_whole_blocks_and_always_close(text: str, cite: str, marked: list[str]) -> None:
    html, found = marked_html(text, [cite])
    page = BeautifulSoup(str(html), "html.parser")
    assert found and [m.get_text() for m in page.select("mark")] == marked
    assert str(html).count("<mark") == str(html).count("</mark>")


def test_raw_html_in_a_document_stays_text() -> None:
    html, _ = marked_html("<script>alert(1)</script> <mark>x</mark>", ["alert"])
    page = BeautifulSoup(str(html), "html.parser")
    assert page.select("script") == [] and [m.get_text() for m in page.select("mark")] == [
        "<script>alert(1)</script> <mark>x</mark>"
    ]
