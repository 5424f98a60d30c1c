"""Issue 18's audit of the seed rules' edges: each edge it found, and the two rules whose tests
could not fail (the seed's id-column order, and history rebuilt as text only)."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from typing import Any

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st

from tests.support import images
from tests.support.apps import api_client, idle_after
from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from tests.test_web_chat import sign_in
from tests.test_web_favicon import FakeWeb, icon_page, service
from webapp.citations.account_ids import account_ref_from_row
from webapp.citations.citable import from_python
from webapp.citations.sources import account_source, targets_for_sql
from webapp.citations.targets import (
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CitationAccountRef,
    names_provider,
)
from webapp.citations.urls import humanize_citation_url
from webapp.favicons.images import is_whole_image
from webapp.packets.destinations import AccountChoice, AccountsPage, document_target
from webapp.packets.documents import SearchDoc
from webapp.services import override_services
from webapp.tools.readers import CORPORA_ROOT, READER_TOOLS, DocumentRead, read_document
from webapp.web.markdown import render_markdown

CHECKING = "ChkAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
SAVINGS = "SavBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
SNAPTRADE = "snap-1111-2222-3333-4444"
MANUAL = "manual-5555-6666-7777-8888"


# --- Labels in any script stay apart -------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("日常账户", "储蓄"),
        ("Épargne", "pargne"),
        ("Сбережения", "Текущий"),
        ("💳", "🏦"),
        ("Vacation ✈️", "Vacation 🏖️"),
    ],
    ids=["chinese", "accented", "cyrillic", "emoji-only", "emoji-apart"],
)
def test_distinct_labels_in_any_script_are_distinct_sources(first: str, second: str) -> None:
    rows = [
        {"account_name": first, "source": "plaid", "source_account_id": CHECKING},
        {"account_name": second, "source": "plaid", "source_account_id": SAVINGS},
    ]
    groups = {g.title: g for g in targets_for_sql(rows)}
    assert groups[first].source != groups[second].source
    assert groups[first].target == AccountTarget(CHECKING, "plaid")
    assert groups[second].target == AccountTarget(SAVINGS, "plaid")


@pytest.mark.parametrize(
    ("label", "source"),
    [
        ("Credit card", "silvia://your-account/credit-card"),
        ("  Checking ", "silvia://your-account/checking"),
        ("Épargne", "silvia://your-account/épargne"),
        ("日常账户", "silvia://your-account/日常账户"),
    ],
)
def test_a_label_reads_in_its_own_letters(label: str, source: str) -> None:
    assert account_source(label) == source


def _without_spacing_or_punctuation(label: str) -> str:
    plain = unicodedata.normalize("NFKC", label).lower()
    # Control characters (NEL, tabs) are spacing too: Python splits words at them.
    return "".join(
        ch for ch in plain if unicodedata.category(ch)[0] not in "PZ" and ch.isprintable()
    )


@given(st.text(max_size=12), st.text(max_size=12))
def test_two_labels_share_a_source_only_when_they_differ_in_case_spacing_or_punctuation(
    first: str, second: str
) -> None:
    if account_source(first) == account_source(second):
        assert _without_spacing_or_punctuation(first) == _without_spacing_or_punctuation(second)


def test_one_label_written_alike_is_still_one_source() -> None:
    # The seed's pooling: "Checking" at two banks is one label covering two accounts.
    rows = [
        {"account_name": "Épargne", "source": "plaid", "source_account_id": CHECKING},
        {"account_name": "Épargne", "source": "plaid", "source_account_id": SAVINGS},
    ]
    (group,) = targets_for_sql(rows)
    refs = (CitationAccountRef(CHECKING, "plaid"), CitationAccountRef(SAVINGS, "plaid"))
    assert group.target == AccountsTarget(refs)


# --- "manual" is hidden only as the whole label; a vendor's name anywhere -----------------


@pytest.mark.parametrize(
    ("label", "hidden"),
    [
        ("Plaid", True),
        (" snaptrade ", True),
        ("Plaid checking", True),
        ("MANUAL", True),
        (" manual. ", True),
        ("My manual savings", False),
        ("Manual transmission fund", False),
        ("Checking", False),
    ],
)
def test_manual_is_hidden_only_as_the_whole_label(label: str, hidden: bool) -> None:
    assert names_provider(label) is hidden


def test_a_users_own_account_name_with_manual_in_it_is_shown_in_the_chooser() -> None:
    target = AccountsTarget((CitationAccountRef(CHECKING, "manual"), CitationAccountRef(SAVINGS)))
    doc = SearchDoc("d", semantic_identifier="Savings", target=target)
    names = {CHECKING: "My manual savings", SAVINGS: "manual"}
    assert document_target(doc, account_label=names.get) == AccountsPage(
        (AccountChoice("My manual savings", CHECKING), AccountChoice("Savings (2 of 2)", SAVINGS))
    )


# --- A favicon is served only when it is a whole image -------------------------------------


def _corrupt_png() -> bytes:
    whole = bytearray(images.png())
    whole[45] ^= 0xFF  # inside the IDAT data: the chunk's CRC no longer holds
    return bytes(whole)


BROKEN = {
    "png-zeros": images.PNG_SIGNATURE + b"\x00" * 40,
    "png-corrupt-data": _corrupt_png(),
    "png-cut": images.png()[:-12],
    "png-no-pixels": images.PNG_SIGNATURE
    + images.png_chunk(b"IHDR", images.png()[16:29])
    + images.png_chunk(b"IEND", b""),
    "ico-pointing-past-its-end": images.ico(images.png())[:-20],
    "ico-holding-a-corrupt-png": images.ico(_corrupt_png()),
    "gif-without-trailer": images.GIF[:-1],
    "jpeg-without-end": images.jpeg()[:-2],
    "webp-cut": images.WEBP[:-4],
}
WHOLE = {
    "png": ("image/png", images.png()),
    "png-interlaced": ("image/png", images.png(5, 7, interlace=1)),
    "ico-png": ("image/x-icon", images.ico(images.png())),
    "ico-bitmap": ("image/x-icon", images.ico(images.bitmap())),
    "gif": ("image/gif", images.GIF),
    "jpeg": ("image/jpeg", images.jpeg()),
    "webp": ("image/webp", images.WEBP),
}


@pytest.mark.parametrize("body", BROKEN.values(), ids=BROKEN.keys())
def test_an_icon_with_a_signature_but_no_whole_image_is_not_served(body: bytes) -> None:
    web = FakeWeb({"https://irs.gov/favicon.ico": icon_page(body, "image/png")})
    assert service(web).icon("irs.gov") is None


@pytest.mark.parametrize(("kind", "body"), WHOLE.values(), ids=WHOLE.keys())
def test_a_whole_icon_of_each_type_is_served(kind: str, body: bytes) -> None:
    assert is_whole_image(kind, body)
    web = FakeWeb({"https://irs.gov/favicon.ico": icon_page(body, kind)})
    icon = service(web).icon("irs.gov")
    assert icon is not None and icon.body == body


def test_the_route_serves_the_generic_icon_for_a_corrupt_png(
    app: Flask, client: FlaskClient
) -> None:
    web = FakeWeb({"https://www.irs.gov/favicon.ico": icon_page(_corrupt_png(), "image/png")})
    override_services(app, favicons=service(web))
    sign_in(app, client)
    response = client.get("/favicon/www.irs.gov")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"


def test_every_source_icon_names_the_generic_icon_to_fall_back_to(app: Flask) -> None:
    with app.test_request_context():
        html = app.jinja_env.from_string(
            '{% from "_macros.html" import source_icon %}{{ source_icon("/favicon/irs.gov") }}'
        ).render()
    img = BeautifulSoup(html, "html.parser").select_one("img.source-icon")
    assert img is not None and img["data-fallback"] == "/static/icons/generic.svg"
    assert not any(name.startswith("on") for name in img.attrs)  # the CSP bars inline script


# --- The §1026.12 sidecar names its section ------------------------------------------------


def _regulation_documents() -> list[tuple[str, str]]:
    found = []
    for tool, corpus in READER_TOOLS.items():
        for path in sorted((CORPORA_ROOT / corpus).rglob("1026.*.md")):
            found.append((tool, path.relative_to(CORPORA_ROOT / corpus).as_posix()))
    return found


@pytest.mark.parametrize(("tool", "path"), _regulation_documents())
def test_each_regulation_z_section_opens_at_its_section_not_its_whole_part(
    tool: str, path: str
) -> None:
    doc = read_document(tool, path)
    assert isinstance(doc, DocumentRead) and doc.source_url is not None
    section = path.rsplit("/", 1)[-1].removesuffix(".md")
    assert doc.section == section
    assert humanize_citation_url(doc.source_url, doc.section) == (
        f"https://www.ecfr.gov/on/2025-01-01/title-12/section-{section}"
    )


# --- An Exa article with no URL is not the Analysis source --------------------------------


@dataclass(frozen=True)
class Article:
    url: str
    title: str
    text: str
    published_date: str | None = None


def test_an_article_without_a_url_has_a_source_of_its_own() -> None:
    citables = from_python("42", [], [Article("", "Rates explained", "Rates rose.")], "now")
    by_source = {c.source: c for c in citables}
    assert len(by_source) == len(citables) == 2
    analysis = by_source["silvia://analysis"]
    assert (analysis.title, analysis.target) == ("Analysis", AnalysisTarget())
    (article,) = (c for c in citables if c is not analysis)
    assert article.source.startswith("silvia://search/")
    assert (article.title, article.target, article.link) == ("Rates explained", None, None)


# --- A link the page cannot open is text, never a dead <a> ---------------------------------


@pytest.mark.parametrize(
    ("markdown", "text"),
    [
        ("Write to [support](mailto:help@bank.example).", "support"),
        ("Mail <help@bank.example> today.", "help@bank.example"),
        ("<mailto:help@bank.example>", "mailto:help@bank.example"),
        ("See [your accounts](/accounts) or [there](../x).", "your accounts"),
        ("Open [this](#part) part.", "this"),
        ("[run](javascript:alert(1))", "run"),
    ],
    ids=["mailto", "email-autolink", "mailto-autolink", "relative", "fragment", "javascript"],
)
def test_a_link_without_a_web_address_renders_as_text(markdown: str, text: str) -> None:
    html = str(render_markdown(markdown))
    page = BeautifulSoup(html, "html.parser")
    assert all(a.get("href") for a in page.find_all("a")), html
    assert not page.find_all("a"), html
    assert text in page.get_text()


def test_a_web_link_still_renders_as_a_link() -> None:
    page = BeautifulSoup(str(render_markdown("[IRS](https://www.irs.gov/)")), "html.parser")
    (link,) = page.find_all("a")
    assert link["href"] == "https://www.irs.gov/" and link.get_text() == "IRS"


# --- The seed's id-column order (a mutation of it fails here) ------------------------------


def test_a_row_names_its_snaptrade_id_before_its_manual_uuid() -> None:
    # No `source_account_id`: the seed's next columns, snaptrade_account_id first.
    row = {"account_name": "Both", "manual_account_uuid": MANUAL, "snaptrade_account_id": SNAPTRADE}
    assert account_ref_from_row(row) == CitationAccountRef(SNAPTRADE, "snaptrade")
    (group,) = targets_for_sql([row])
    assert group.target == AccountTarget(SNAPTRADE, "snaptrade")


def test_a_row_names_its_manual_uuid_before_its_account_uuid_and_account_id() -> None:
    row = {
        "name": "Home",
        "account_id": CHECKING,
        "account_uuid": SAVINGS,
        "manual_account_uuid": MANUAL,
    }
    assert account_ref_from_row(row) == CitationAccountRef(MANUAL, "manual")
    del row["manual_account_uuid"]
    assert account_ref_from_row(row) == CitationAccountRef(SAVINGS, "manual")
    del row["account_uuid"]
    assert account_ref_from_row(row) == CitationAccountRef(CHECKING, None)


# --- History is rebuilt as text only (a search_result in it fails here) --------------------

CARD = "silvia://credit-card-corpus/guides/disputing-a-card-charge.md"


def _cite(source: str, title: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": "…",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }


def test_the_next_turn_gets_the_last_one_as_text_only_and_cannot_cite_its_sources(
    claude_app: tuple[Flask, FakeClaude],
) -> None:
    app, fake = claude_app
    first_answer = "You can dispute it in writing within 60 days."
    fake.replies += [
        tool_reply(
            ("r", "read_credit_card_document", {"path": "guides/disputing-a-card-charge.md"})
        ),
        text_reply((first_answer, [_cite(CARD, "Disputing a card charge")])),
        text_reply(("As I said, write within 60 days.", [_cite(CARD, "Disputing a card charge")])),
    ]
    client = api_client(app)
    with idle_after(app):
        session_id = client.new_session()
        client.stream(client.ask(session_id, "How do I dispute a charge?")["stream_url"])
        client.stream(client.ask(session_id, "Remind me?")["stream_url"])
    sent = fake.requests[2]["messages"]
    # The question goes as one text block carrying the prompt-cache breakpoint.
    assert sent[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Remind me?", "cache_control": {"type": "ephemeral"}}],
    }
    assert sent[:-1] == [
        {"role": "user", "content": "How do I dispute a charge?"},
        {"role": "assistant", "content": first_answer},
    ]
    assert "search_result" not in json.dumps(fake.requests[2]["messages"])
    first, second = client.session(session_id)["messages"][1::2]
    assert [c["target"] for c in first["citations"]] == [{"kind": "card_document", "url": None}]
    # The second turn wrote no source: what it cites from the first is untyped, or dropped.
    assert all(c["target"] is None for c in second["citations"] or [])
