"""Packets to HTML: the answer, inline citations, and the sources bar and sheet (seed 001)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from bs4 import BeautifulSoup
from flask import Flask, render_template

from webapp.citations.parse import parse_citation_target
from webapp.packets.documents import SearchDoc
from webapp.packets.state import PacketStream, ProcessedMessageState
from webapp.web.answer_body import answer_text, answer_view
from webapp.web.answers import LIBRARY
from webapp.web.openers import FILE_NOTICE, Library, opener_for
from webapp.web.sheet import account_labeler, sources_view
from webapp.web.snippet import snippet

MID = "m1"
CARD_A, CARD_B = "AtVPgKt5aF8ZFKGcCMHn2zgT", "TiKrtEeZro6LlosaJDAd0A35"
ACCOUNTS = [
    {
        "source": "plaid",
        "source_account_id": CARD_A,
        "account_name": "Credit card",
        "institution_name": "American Express",
    },
    {
        "source": "plaid",
        "source_account_id": CARD_B,
        "account_name": "Credit card",
        "institution_name": "Citi",
    },
]


@pytest.fixture
def in_request(app: Flask) -> Iterator[None]:
    """Draw inside a request: links to the app's own pages are spelled by `url_for`."""
    with app.test_request_context():
        yield


def icon_for(doc: SearchDoc) -> str:
    return f"/icon/{doc.document_id}"


def wire_doc(document_id: str, **fields: Any) -> dict[str, Any]:
    return {"document_id": document_id, **fields}


def packet(obj: dict[str, Any]) -> dict[str, Any]:
    placement = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
    return {"placement": placement, "obj": obj}


def state_of(
    text: str,
    docs: list[dict[str, Any]],
    cites: list[tuple[int, str]],
    *,
    complete: bool = True,
    extra: list[dict[str, Any]] | None = None,
) -> ProcessedMessageState:
    packets = [packet({"type": "search_tool_documents_delta", "documents": docs})]
    packets.append(packet({"type": "message_start", "final_documents": None}))
    packets.append(packet({"type": "message_delta", "content": text}))
    packets += [
        packet({"type": "citation_info", "citation_number": n, "document_id": d}) for n, d in cites
    ]
    packets += extra or []
    if complete:
        packets.append(packet({"type": "stop", "stop_reason": None}))
    return PacketStream(0, packets).state


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


# Snippets: `<hi>` emphasis becomes <mark>; everything else is text.


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text", "plain text"),
        ("a <hi>key</hi> fact", "a <mark>key</mark> fact"),
        ("<HI>Shout</HI>", "<mark>Shout</mark>"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("<hi><b>x</b></hi>", "<mark>&lt;b&gt;x&lt;/b&gt;</mark>"),
        ("<hi>open only", "&lt;hi&gt;open only"),
        ('"quoted" & <hi>amp & co</hi>', "&#34;quoted&#34; &amp; <mark>amp &amp; co</mark>"),
        ("  line one\n\n line   two ", "line one line two"),
        ("", ""),
    ],
    ids=[
        "plain",
        "hi",
        "hi-upper-case",
        "script",
        "tag-inside-hi",
        "unclosed-hi",
        "entities",
        "whitespace",
        "empty",
    ],
)
def test_snippet_marks_hi_and_escapes_the_rest(text: str, expected: str) -> None:
    assert str(snippet(text)) == expected


# A passage is markdown: the row shows its words, not its syntax (`<hi>` still marks).


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("capped at **$250,000** of <hi>gain</hi>", "capped at $250,000 of <mark>gain</mark>"),
        ("**<hi>bold hit</hi>** and __under__", "<mark>bold hit</mark> and under"),
        ("1. **Look again.** Check.\n2. Then decide.", "1. Look again. Check. 2. Then decide."),
        ("- first\n- second", "• first • second"),
        (
            "## Selling your home\n> Most people owe *nothing*.",
            "Selling your home · Most people owe nothing.",
        ),
        (
            "see [the worksheet](https://www.irs.gov/w) or <https://irs.gov>",
            "see the worksheet or https://irs.gov",
        ),
        ("pay `$5` now, ~~not~~ later", "pay $5 now, not later"),
        ("![a chart](https://tracker.example.com/p.gif)", "a chart"),
        ("AT&amp;T \\*not emphasis\\*", "AT&amp;T *not emphasis*"),
        ("account_name and 5 * 3", "account_name and 5 * 3"),
        ("<b>**raw**</b>", "&lt;b&gt;raw&lt;/b&gt;"),
        ("2024. The year", "2024. The year"),
    ],
    ids=[
        "bold",
        "bold-hi",
        "ordered-list",
        "bullets",
        "heading-and-quote",
        "links",
        "code-and-strike",
        "image-alt",
        "entity-and-escape",
        "not-markdown",
        "raw-html",
        "number-kept",
    ],
)
def test_snippet_reads_markdown_as_plain_text(text: str, expected: str) -> None:
    assert str(snippet(text)) == expected


@pytest.mark.parametrize(
    ("text", "visible"),
    [
        ("x" * 250, "x" * 200),
        ("<hi>" + "y" * 150 + "</hi>" + "z" * 100, "y" * 150 + "z" * 50),
        ("x" * 200, "x" * 200),
    ],
    ids=["long-plain", "long-with-hi", "exactly-200"],
)
def test_snippet_keeps_200_visible_characters(text: str, visible: str) -> None:
    shown = soup(str(snippet(text))).get_text()
    assert shown.rstrip("…") == visible
    assert shown.endswith("…") is (len(text.replace("<hi>", "").replace("</hi>", "")) > 200)


# Where a source opens (docs/specs.md, "Where a source opens").


@pytest.mark.parametrize(
    ("doc", "kind", "href"),
    [
        (
            SearchDoc("https://irs.gov/p590", link="https://irs.gov/p590"),
            "browser",
            "https://irs.gov/p590",
        ),
        (SearchDoc("x", link="javascript:alert(1)"), "none", None),
        (SearchDoc("x", link=" https://irs.gov"), "none", None),
        (SearchDoc("f", file_id="file-1"), "file", None),
        (SearchDoc("n"), "none", None),
    ],
    ids=["web-link", "javascript-link", "padded-link", "file", "nothing"],
)
def test_opener_follows_document_target(doc: SearchDoc, kind: str, href: str | None) -> None:
    opener = opener_for(doc, None, "dom")
    assert (opener.kind, opener.href) == (kind, href)


@pytest.mark.parametrize(
    ("target", "kind", "href"),
    [
        (
            {"kind": "account", "accountId": CARD_A, "provider": "plaid"},
            "page",
            f"/accounts/{CARD_A}",
        ),
        ({"kind": "market_data", "ticker": "aapl"}, "page", "/markets/AAPL"),
        ({"kind": "portfolio"}, "page", "/portfolio"),
        ({"kind": "web", "url": "https://www.irs.gov/x"}, "browser", "https://www.irs.gov/x"),
        ({"kind": "tax_reference", "url": None}, "none", None),
        ({"kind": "analysis"}, "none", None),
    ],
    ids=["account", "market-data", "portfolio", "web", "tax-reference-without-url", "analysis"],
)
@pytest.mark.usefixtures("in_request")
def test_opener_for_each_target_kind(target: dict[str, Any], kind: str, href: str | None) -> None:
    state = state_of("x", [wire_doc("d", target=target)], [])
    opener = opener_for(state.document_map["d"], None, "dom")
    assert (opener.kind, opener.href) == (kind, href)


@pytest.mark.usefixtures("in_request")
def test_an_accounts_citation_opens_a_chooser_named_by_the_users_accounts() -> None:
    target = {
        "kind": "accounts",
        "accounts": [
            {"accountId": CARD_A, "provider": "plaid"},
            {"accountId": CARD_B, "provider": "plaid"},
        ],
    }
    state = state_of("x", [wire_doc("d", semantic_identifier="Credit card", target=target)], [])
    opener = opener_for(state.document_map["d"], account_labeler(ACCOUNTS), "chooser-1")
    assert opener.kind == "chooser" and opener.dom_id == "chooser-1"
    assert [(o.label, o.href) for o in opener.options] == [
        ("Credit card · American Express", f"/accounts/{CARD_A}"),
        ("Credit card · Citi", f"/accounts/{CARD_B}"),
    ]


@pytest.mark.parametrize(
    ("accounts", "label"),
    [
        (ACCOUNTS, "Credit card · Citi"),
        ([{**ACCOUNTS[1], "institution_name": None}], "Credit card"),
        ([{**ACCOUNTS[1], "account_name": "Plaid checking"}], None),
        ([{**ACCOUNTS[1], "institution_name": "Manual entry"}], "Credit card · Manual entry"),
        ([ACCOUNTS[0]], None),
        ([], None),
    ],
    ids=[
        "name-and-institution",
        "name-only",
        "provider-in-name",
        "manual-in-institution",
        "someone-elses-id",
        "no-accounts",
    ],
)
@pytest.mark.usefixtures("in_request")
def test_chooser_labels_never_show_a_provider(
    accounts: list[dict[str, Any]], label: str | None
) -> None:
    target = {"kind": "accounts", "accounts": [{"accountId": CARD_B, "provider": "plaid"}]}
    state = state_of("x", [wire_doc("d", semantic_identifier="Card", target=target)], [])
    opener = opener_for(state.document_map["d"], account_labeler(accounts), "c")
    assert opener.options[0].label == (label or "Card (1 of 1)")
    assert "plaid" not in opener.options[0].label.lower()


# The answer body.


@pytest.mark.usefixtures("in_request")
def test_answer_renders_markdown_with_numbered_citations() -> None:
    docs = [
        wire_doc("w", semantic_identifier="IRS", link="https://www.irs.gov/p590"),
        wire_doc(
            "a",
            semantic_identifier="Sapphire",
            target={"kind": "account", "accountId": CARD_A, "provider": "plaid"},
        ),
    ]
    text = "You owe **$10** [[1]](https://www.irs.gov/p590) and more [[2]]() and [[9]]()."
    view = answer_view(state_of(text, docs, [(1, "w"), (2, "a")]), MID, None, streaming=False)
    page = soup(str(view.body))
    assert page.find("strong").get_text() == "$10"
    links = page.select("a.cite")
    assert [(a.get_text(), a["href"]) for a in links] == [
        ("1", "https://www.irs.gov/p590"),
        ("2", f"/accounts/{CARD_A}"),
    ]
    assert links[0]["target"] == "_blank" and links[0]["rel"] == ["noopener", "noreferrer"]
    assert "target" not in links[1].attrs
    assert "[[9]]" not in page.get_text() and "9" not in page.get_text()


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[click](javascript:alert(1))",
        "[click](JAVASCRIPT:alert(1))",
        "[click](data:text/html;base64,PHNjcmlwdD4=)",
        "![pixel](https://tracker.example.com/p.gif)",
        '<a href="javascript:alert(1)">x</a>',
        '[x](https://ok.com "t\\" onmouseover=alert(1)")',
    ],
    ids=[
        "script",
        "img-onerror",
        "javascript-link",
        "javascript-upper",
        "data-link",
        "remote-image",
        "raw-anchor",
        "title-breakout",
    ],
)
def test_answer_text_from_the_model_is_never_markup(text: str) -> None:
    view = answer_view(state_of(text, [], []), MID, None, streaming=False)
    page = soup(str(view.body))
    assert not page.select("script, img, iframe, [onerror], [onmouseover]")
    assert all(
        not a.get("href", "").lower().startswith(("javascript", "data")) for a in page.select("a")
    )


def test_placeholder_characters_in_the_model_text_cannot_forge_citations() -> None:
    docs = [wire_doc("w", link="https://www.irs.gov/")]
    view = answer_view(
        state_of("a \ue0000\ue001 b [[1]]()", docs, [(1, "w")]), MID, None, streaming=False
    )
    assert len(soup(str(view.body)).select("a.cite")) == 1


@pytest.mark.parametrize(
    ("doc", "selector"),
    [
        (
            wire_doc("f", semantic_identifier="Statement.pdf", file_id="file-9"),
            f'button.cite[data-notice="{FILE_NOTICE}"]',
        ),
        (wire_doc("n", semantic_identifier="Notes"), "button.cite-static[data-preview]"),
        (
            wire_doc("j", semantic_identifier="Bad", link="javascript:alert(1)"),
            "button.cite-static[data-preview]",
        ),
    ],
    ids=["file", "nothing", "javascript-link"],
)
def test_inline_citations_open_like_their_rows(doc: dict[str, Any], selector: str) -> None:
    view = answer_view(
        state_of("Fact [[1]]().", [doc], [(1, doc["document_id"])]), MID, None, streaming=False
    )
    page = soup(str(view.body))
    (cite,) = page.select(".cite")
    assert cite.get_text() == "1"
    assert page.select(selector) == [cite]
    assert not cite.has_attr("href")


@pytest.mark.usefixtures("in_request")
def test_an_inline_chooser_citation_points_at_its_popover() -> None:
    target = {"kind": "accounts", "accounts": [{"accountId": CARD_A}, {"accountId": CARD_B}]}
    docs = [wire_doc("c", semantic_identifier="Credit card", target=target)]
    view = answer_view(
        state_of("A [[1]]() b [[1]]()", docs, [(1, "c")]),
        MID,
        account_labeler(ACCOUNTS),
        streaming=False,
    )
    buttons = soup(str(view.body)).select("button.cite")
    assert [b["popovertarget"] for b in buttons] == [f"cite-{MID}-1"] * 2
    assert [o.dom_id for o in view.choosers] == [f"cite-{MID}-1"]


# The bar and the sheet.


def _sheet_state(complete: bool = True) -> ProcessedMessageState:
    docs = [
        wire_doc(
            "https://www.irs.gov/a",
            semantic_identifier="<b>IRS</b> guide",
            link="https://www.irs.gov/a",
            updated_at="2020-01-01T00:00:00Z",
            match_highlights=["the <hi>limit</hi> is <script>x</script>"],
        ),
        wire_doc(
            "https://www.irs.gov/b",
            semantic_identifier="Second IRS page",
            link="https://www.irs.gov/b",
            blurb="blurb text",
        ),
        wire_doc("more", semantic_identifier="Uncited", source_type="market_data"),
        wire_doc("file", semantic_identifier="statement.pdf", file_id="f1"),
        wire_doc("none", semantic_identifier="Analysis", source_type="analysis"),
    ]
    return state_of(
        "a [[1]]() b [[2]]() c [[3]]()",
        docs,
        [(1, "https://www.irs.gov/a"), (2, "file"), (3, "none")],
        complete=complete,
    )


def test_the_sheet_splits_cited_more_and_user_files() -> None:
    view = sources_view(_sheet_state(), MID, None, icon_for)
    assert view.visible and view.count == 5
    assert [(s.heading, [r.title for r in s.rows]) for s in view.sections] == [
        ("Cited Sources", ["<b>IRS</b> guide", "Analysis"]),
        ("More", ["Second IRS page", "Uncited"]),
        ("User Files", ["statement.pdf"]),
    ]
    first = view.sections[0].rows[0]
    assert first.meta.startswith("irs.gov · Updated ") and first.meta.endswith(" ago")
    assert view.sections[1].rows[1].meta == "Market data"
    assert view.sections[2].rows[0].meta == "File"
    assert str(first.snippet) == "the <mark>limit</mark> is &lt;script&gt;x&lt;/script&gt;"
    assert view.sections[1].rows[0].snippet == "blurb text"


@pytest.mark.parametrize(
    ("state", "visible"),
    [
        (_sheet_state(complete=False), False),
        (state_of("no sources", [], []), False),
        (state_of("x", [wire_doc("d", link="https://a.com")], []), True),
    ],
    ids=["streaming", "complete-without-sources", "complete-with-documents-only"],
)
def test_the_bar_shows_only_when_complete_with_sources(
    state: ProcessedMessageState, visible: bool
) -> None:
    assert sources_view(state, MID, None, icon_for).visible is visible


def test_a_section_without_rows_is_left_out() -> None:
    state = state_of("x [[1]]()", [wire_doc("d", link="https://a.com")], [(1, "d")])
    view = sources_view(state, MID, None, icon_for)
    assert [s.heading for s in view.sections] == ["Cited Sources"]


def test_sources_template(app: Flask) -> None:
    with app.test_request_context():
        html = render_template(
            "_sources.html", sources=sources_view(_sheet_state(), MID, None, icon_for)
        )
    page = soup(html)
    # A button to people (role), a link to the sources page without JavaScript.
    bar = page.select_one('a.sources-bar[role="button"]')
    assert bar is not None and " ".join(bar.get_text().split()) == "Sources · 5"
    assert bar["href"] == f"/answers/{MID}/sources"
    assert bar["data-open-dialog"] == f"sources-{MID}"
    # Up to three distinct icons, from the cited rows (irs.gov, the generic one), then More
    # (market data); the second irs.gov page shares its host's icon.
    assert [i["src"] for i in bar.select("img.source-icon")] == [
        "/icon/https://www.irs.gov/a",
        "/icon/none",
        "/icon/more",
    ]
    dialog = page.select_one(f"dialog#sources-{MID}")
    assert dialog is not None and dialog.select_one("h2").get_text() == "Sources"
    assert [h.get_text() for h in dialog.select("h3")] == ["Cited Sources", "More", "User Files"]
    assert dialog.select_one('button[aria-label="Close"]') is not None
    rows = dialog.select(".source-row")
    assert rows[0].name == "a" and rows[0]["target"] == "_blank"
    assert rows[0]["rel"] == ["noopener", "noreferrer"]
    assert rows[0].select_one(".source-title").get_text() == "<b>IRS</b> guide"
    assert rows[0].select_one(".source-snippet mark").get_text() == "limit"
    assert not page.select("script, b")
    static = [r for r in rows if "is-static" in r.get_attribute_list("class")]
    assert [r.name for r in static] == ["div", "div"]
    assert all(not r.has_attr("href") for r in static)
    assert rows[-1]["data-notice"] == FILE_NOTICE


def test_answer_template_shows_errors_and_waiting(app: Flask) -> None:
    waiting = answer_view(state_of("", [], [], complete=False), MID, None, streaming=True)
    failed = answer_view(
        state_of("", [], [], complete=False),
        MID,
        None,
        streaming=False,
        error="The model is <busy>",
    )
    with app.test_request_context():
        waiting_html = render_template("_answer.html", answer=waiting)
        failed_html = render_template("_answer.html", answer=failed)
    # Screen readers are told (a status with words), not shown three dots.
    thinking = soup(waiting_html).select_one(".thinking")
    assert thinking is not None and thinking["role"] == "status"
    assert thinking.get_text() == "Thinking…"
    assert [d["aria-hidden"] for d in thinking.select(".dot")] == ["true"] * 3
    error = soup(failed_html).select_one(".answer-error")
    assert error is not None and error.get_text() == "The model is <busy>"
    # Announced once by the page when the stream ends, not re-read as an alert.
    assert not soup(failed_html).select('[role="alert"]')
    assert soup(failed_html).select_one(".thinking") is None


@pytest.mark.parametrize(
    ("interrupted", "notice"), [(True, True), (False, False)], ids=["interrupted", "finished"]
)
def test_an_interrupted_answer_says_so_and_offers_a_reload(
    app: Flask, interrupted: bool, notice: bool
) -> None:
    state = state_of("Half an ans", [], [], complete=False)
    view = answer_view(state, MID, None, streaming=True, interrupted=interrupted)
    assert view.streaming is not interrupted and not view.waiting
    with app.test_request_context():
        page = soup(render_template("_answer.html", answer=view))
    shown = page.select_one(".answer-interrupted")
    assert (shown is not None) is notice
    assert bool(page.select(".is-streaming")) is not interrupted
    if shown is not None:
        assert " ".join(shown.get_text().split()) == (
            "The answer was interrupted. Reload the page to continue."
        )
        assert shown.select_one("a")["href"] == ""  # this same page, loaded again


@pytest.mark.parametrize(
    ("streaming", "opens"), [(True, False), (False, True)], ids=["streaming", "finished"]
)
@pytest.mark.usefixtures("in_request")
def test_an_inline_chooser_opens_only_once_the_answer_is_finished(
    streaming: bool, opens: bool
) -> None:
    target = {"kind": "accounts", "accounts": [{"accountId": CARD_A}, {"accountId": CARD_B}]}
    docs = [wire_doc("c", semantic_identifier="Credit card", target=target)]
    view = answer_view(
        state_of("A [[1]]()", docs, [(1, "c")], complete=not streaming),
        MID,
        account_labeler(ACCOUNTS),
        streaming=streaming,
    )
    (cite,) = soup(str(view.body)).select(".cite")
    assert cite.get_text() == "1"
    # A popover in the streamed fragment would close on the next re-render.
    assert (cite.name, cite.has_attr("popovertarget")) == ("button", opens)
    assert bool(view.choosers) is opens


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # An account row reads like money (issue: rows read like database rows).
        (
            "account_name: Credit card\ninstitution_name: Citi\n\ncurrent_balance: 624.5",
            "Credit card · Citi · $624.50",
        ),
        (
            "account_name: Credit card\ninstitution_name: American Express\naccount_type: credit"
            "\ncurrent_balance: 1842.17\ncurrency: USD account_name: Credit card\n"
            "institution_name: Citi\naccount_type: credit\ncurrent_balance: 2940\ncurrency: USD",
            "Credit card · American Express · $1,842.17 owed; Credit card · Citi · $2,940.00 owed",
        ),
        (
            "account_name: Individual\nticker: VTI\nquantity: 40.0\nmarket_value: 9834.8\n"
            "currency: USD",
            "VTI · 40 shares · $9,834.80",
        ),
        (
            "account_name: Home\ninstitution_name: null\ncurrent_balance: 485000\ncurrency: null",
            "Home · $485,000.00",
        ),
        ("title: Note\nbody: text", "Title: Note · Body: text"),
        (
            "An index fund: a fund that tracks an index.",
            "An index fund: a fund that tracks an index.",
        ),
        ("ticker: AAPL\nnot a field line", "ticker: AAPL not a field line"),
        ("<hi>ticker</hi>: AAPL", "ticker: AAPL"),
    ],
    ids=[
        "sql-row",
        "two-cards-owed",
        "holding",
        "nothing-printed-as-null",
        "other-fields",
        "prose-with-colon",
        "mixed-lines",
        "highlighted-key",
    ],
)
def test_row_text_of_fields_reads_as_labels(text: str, shown: str) -> None:
    assert soup(str(snippet(text))).get_text() == shown


# While an answer streams: its text from an offset, and settled blocks drawn apart.


def test_answer_text_from_an_offset_keeps_the_answers_citation_numbers() -> None:
    docs = [wire_doc("a", link="https://a.example/"), wire_doc("b", link="https://b.example/")]
    text = "First [[1]]().\n\nSecond [[2]]() and [[1]]()."
    state = state_of(text, docs, [(1, "a"), (2, "b")], complete=False)
    part, _ = answer_text(state, MID, None, streaming=True, start=text.index("Second"))
    page = soup(str(part.html()))
    assert page.get_text().startswith("Second") and "First" not in page.get_text()
    assert [(c.get_text(), c["href"]) for c in page.select(".cite")] == [
        ("2", "https://b.example/"),
        ("1", "https://a.example/"),
    ]
    assert sorted(part.numbers) == [1, 2]
    assert [c["href"] for c in soup(str(part.numbers[2])).select(".cite")] == ["https://b.example/"]


def test_answer_text_has_one_kind_of_line_break() -> None:
    part, _ = answer_text(state_of("a\r\n\r\nb\rc", [], []), MID, None, streaming=False)
    assert part.markdown == "a\n\nb\nc"


@pytest.mark.parametrize(
    ("streaming", "settled"), [(True, True), (False, False)], ids=["streaming", "finished"]
)
def test_the_answer_template_draws_settled_blocks_apart_while_streaming(
    app: Flask, streaming: bool, settled: bool
) -> None:
    state = state_of("Done.\n\nGrowing", [], [], complete=not streaming)
    view = replace(answer_view(state, MID, None, streaming=streaming), open_at=len("Done.\n\n"))
    with app.test_request_context():
        (body,) = soup(render_template("_answer.html", answer=view)).select(".answer-body")
    assert [c.name for c in body.find_all(recursive=False)] == (
        ["div", "p"] if settled else ["p", "p"]
    )
    assert (body.select_one(":scope > .answer-settled") is not None) is settled
    assert body.get_text() == "Done.\nGrowing\n"


@pytest.mark.parametrize(
    ("target", "link", "opens"),
    [
        (
            {"kind": "account", "accountId": CARD_A, "provider": "plaid"},
            None,
            ("a", f"/accounts/{CARD_A}"),
        ),
        (
            {"kind": "web", "url": "https://a.example/"},
            "https://a.example/",
            ("a", "https://a.example/"),
        ),
        ({"kind": "market_data", "ticker": "AAPL"}, None, ("a", "/markets/AAPL")),
        ({"kind": "portfolio"}, None, ("a", "/portfolio")),
        ({"kind": "analysis"}, None, ("button", None)),
    ],
    ids=["account", "web", "market-data", "portfolio", "analysis"],
)
@pytest.mark.usefixtures("in_request")
def test_while_streaming_only_an_account_citation_waits_for_its_settled_target(
    target: dict[str, Any], link: str | None, opens: tuple[str, str | None]
) -> None:
    # Seed 000: a later tool round may pool more accounts under the label, or poison it;
    # every other source opens the same place whatever a later round writes.
    docs = [wire_doc("d", semantic_identifier="Doc", target=target, link=link)]
    for streaming in (True, False):
        view = answer_view(
            state_of("A [[1]]()", docs, [(1, "d")], complete=not streaming),
            MID,
            None,
            streaming=streaming,
        )
        (cite,) = soup(str(view.body)).select(".cite")
        shown = (cite.name, cite.get("href"))
        if streaming and target["kind"] == "account":
            assert shown == ("button", None) and "cite-pending" in cite["class"]
            assert not cite.has_attr("popovertarget")
        else:
            assert shown == opens


# Titles people read carry no bidi controls (issue 10): U+202E would show "gpj.exe" as
# "exe.jpg"; and no date reads "7,978 years from now".

BIDI = "\u202e\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("Invoice \u202eexe.pdf", "Invoice exe.pdf"),
        (f"{BIDI}IRS{BIDI} guide", "IRS guide"),
        (f"{BIDI}", "a.com"),
        ("Line one\nline two\r\u2028end", "Line one line two end"),
    ],
    ids=["override", "every-bidi-control", "nothing-but-controls", "line-breaks"],
)
def test_source_titles_are_shown_without_bidi_controls(title: str, shown: str) -> None:
    docs = [wire_doc("d", link="https://a.com/x", semantic_identifier=title)]
    state = state_of("x [[1]]()", docs, [(1, "d")])
    row = sources_view(state, MID, None, icon_for).sections[0].rows[0]
    assert row.title == shown
    drawn = soup(str(answer_text(state, MID, None, streaming=False)[0].citations[0]))
    chip, tip = drawn.a, drawn.select_one("[role=tooltip] .cite-tip-title")
    assert chip is not None and tip is not None and tip.get_text() == shown
    assert not any(ch in chip["aria-label"] for ch in BIDI)


@pytest.mark.usefixtures("in_request")
def test_chooser_options_are_shown_without_bidi_controls() -> None:
    target = {
        "kind": "accounts",
        "accounts": [
            {"accountId": CARD_A, "provider": None},
            {"accountId": CARD_B, "provider": None},
        ],
    }
    doc = SearchDoc(
        "silvia://your-account/cards", "\u202eCredit card", target=parse_citation_target(target)
    )
    named = account_labeler([{**ACCOUNTS[0], "account_name": "Pl\u202eaid card"}])
    labels = [o.label for o in opener_for(doc, named, "x").options]
    assert labels == ["Credit card (1 of 2)", "Credit card (2 of 2)"]


@pytest.mark.parametrize(
    ("updated_at", "meta"),
    [
        ("9999-12-30T00:00:00Z", "a.com · Updated on 9999-12-30"),
        ("2100-01-01", "a.com · Updated on 2100-01-01"),
        ("0005-06-01T00:00:00Z", "a.com · Updated on 0005-06-01"),
    ],
    ids=["year-9999", "next-century", "year-5"],
)
def test_a_date_past_the_horizon_reads_as_a_date(updated_at: str, meta: str) -> None:
    docs = [wire_doc("d", link="https://a.com/x", semantic_identifier="A", updated_at=updated_at)]
    row = sources_view(state_of("x [[1]]()", docs, [(1, "d")]), MID, None, icon_for)
    assert row.sections[0].rows[0].meta == meta


# Library documents open in the app's reader (docs/specs.md "Routes": `/library/<corpus>/<path>`).

RECORDS = "silvia://tax-authority/guides/recordkeeping.md"
P526 = "https://www.irs.gov/publications/p526"


def library_docs() -> list[dict[str, Any]]:
    return [
        wire_doc(
            RECORDS,
            semantic_identifier="How long to keep tax records",
            source_type="tax_reference",
            target={"kind": "tax_reference", "url": None},
            match_highlights=["| The usual case | 3 years from the date you filed |"],
        ),
        wire_doc(
            P526,
            semantic_identifier="Publication 526",
            link=P526,
            source_type="tax_reference",
            target={"kind": "tax_reference", "url": P526},
            match_highlights=["You can deduct <hi>contributions</hi>"],
        ),
    ]


def library_state() -> ProcessedMessageState:
    return state_of(
        "Keep them [[1]](). Deduct them [[2]]().", library_docs(), [(1, RECORDS), (2, P526)]
    )


def test_without_a_library_a_document_with_no_url_is_still_a_dead_end() -> None:
    row = sources_view(library_state(), MID, None, icon_for).sections[0].rows[0]
    assert (row.opener.kind, row.opener.href) == ("none", None)


@pytest.mark.usefixtures("in_request")
def test_rows_and_chips_of_library_documents_open_the_reader() -> None:
    sources = sources_view(library_state(), MID, None, icon_for, LIBRARY)
    text, _ = answer_text(library_state(), MID, None, streaming=False, library=LIBRARY)
    html = render_template("_sources.html", sources=sources)
    records, p526 = sources.sections[0].rows
    reader = "/library/tax-authority/guides/recordkeeping.md"
    assert (records.opener.kind, records.opener.original) == ("page", None)
    assert records.opener.href == (
        f"{reader}?cite=%7C+The+usual+case+%7C+3+years+from+the+date+you+filed+%7C#cited"
    )
    assert p526.opener.kind == "page" and p526.opener.original == P526
    assert p526.opener.href == (
        "/library/tax-authority/irs/publication-526.md?cite=You+can+deduct+contributions#cited"
    )
    # Inline numbers open the same place as their rows.
    chips = [soup(str(c)).a for c in text.citations]
    assert [c["href"] if c else None for c in chips] == [records.opener.href, p526.opener.href]
    assert all(c is not None and not c.has_attr("target") for c in chips)
    # In the sheet: the row opens the reader; a public URL stays one click away beside it.
    items = soup(html).select(".source-list li")
    assert [i.select_one("a.source-row")["href"] for i in items] == [
        records.opener.href,
        p526.opener.href,
    ]
    assert items[0].select_one(".source-original") is None
    original = items[1].select_one("a.source-original")
    assert original is not None and original["href"] == P526
    assert original.get_text().strip() == "Open the original at irs.gov"
    assert (original["target"], original["rel"]) == ("_blank", ["noopener", "noreferrer"])


def test_a_url_the_library_does_not_hold_still_opens_in_a_new_tab(app: Flask) -> None:
    url = "https://www.irs.gov/publications/p17"
    doc = SearchDoc(
        url,
        "Publication 17",
        link=url,
        target=parse_citation_target({"kind": "tax_reference", "url": url}),
    )
    with app.test_request_context():
        opener = opener_for(doc, None, "dom", LIBRARY)
    assert (opener.kind, opener.href, opener.original) == ("browser", url, None)


@pytest.mark.usefixtures("in_request")
def test_a_document_cited_under_its_library_path_opens_the_reader_whatever_the_finder() -> None:
    library = Library(path_for=lambda corpus, url: None)
    doc = SearchDoc(
        RECORDS,
        target=parse_citation_target({"kind": "tax_reference", "url": None}),
        match_highlights=("<hi>Keep</hi> it",),
    )
    assert opener_for(doc, None, "d", library).href == (
        "/library/tax-authority/guides/recordkeeping.md?cite=Keep+it#cited"
    )


@pytest.mark.usefixtures("in_request")
def test_a_row_pooling_two_accounts_says_so_not_your_account() -> None:
    pooled = {
        "kind": "accounts",
        "accounts": [
            {"accountId": CARD_A, "provider": "plaid"},
            {"accountId": CARD_B, "provider": "plaid"},
        ],
    }
    single = {"kind": "account", "accountId": CARD_A, "provider": "plaid"}
    docs = [
        wire_doc(
            "silvia://your-account/credit-card",
            semantic_identifier="Credit card",
            source_type="account",
            target=pooled,
        ),
        wire_doc(
            "silvia://your-account/checking",
            semantic_identifier="Checking",
            source_type="account",
            target=single,
        ),
    ]
    view = sources_view(
        state_of(
            "x [[1]]() [[2]]()",
            docs,
            [(1, "silvia://your-account/credit-card"), (2, "silvia://your-account/checking")],
        ),
        MID,
        None,
        icon_for,
    )
    rows = view.sections[0].rows
    assert rows[0].meta.split(" · ")[0] == "2 accounts"
    assert rows[1].meta.split(" · ")[0] == "Your account"


def test_chips_that_open_no_link_are_drawn_without_an_app() -> None:
    # A pending account chip and a chooser's button spell no URL, so the browser's stream can
    # draw them anywhere; only a link to one of the app's pages needs `url_for`.
    both = {"kind": "accounts", "accounts": [{"accountId": CARD_A}, {"accountId": CARD_B}]}
    docs = [
        wire_doc("a", semantic_identifier="Card", target={"kind": "account", "accountId": CARD_A}),
        wire_doc("c", semantic_identifier="Cards", target=both),
    ]
    live = answer_view(
        state_of("A [[1]]() B [[2]]()", docs, [(1, "a"), (2, "c")], complete=False),
        MID,
        None,
        streaming=True,
    )
    live_cites = soup(str(live.body)).select(".cite")
    assert [c.name for c in live_cites] == ["button", "button"]
    assert not any(c.has_attr("popovertarget") or c.has_attr("href") for c in live_cites)
    done = answer_view(state_of("B [[1]]()", docs, [(1, "c")]), MID, None, streaming=False)
    assert [c.name for c in soup(str(done.body)).select(".cite")] == ["button"]
    with pytest.raises(RuntimeError):
        done.choosers[0].options[0].href  # noqa: B018 - a link does need the app


@pytest.mark.parametrize(
    ("doc", "where", "text", "opens"),
    [
        (
            wire_doc(
                "w",
                semantic_identifier="Pub 523",
                link="https://www.irs.gov/p",
                blurb="Up to $250,000.",
            ),
            "irs.gov",
            "Up to $250,000.",
            "Opens irs.gov in a new tab",
        ),
        (
            wire_doc(
                "n",
                semantic_identifier="Crypto wallet",
                source_type="analysis",
                target={"kind": "analysis"},
                blurb="balance: 1.5 BTC",
            ),
            "Analysis",
            "Balance: 1.5 BTC",
            "Nothing to open: the figure comes from this text",
        ),
    ],
    ids=["web", "opens-nothing"],
)
def test_every_citation_has_a_preview_of_where_its_figure_comes_from(
    doc: dict[str, Any], where: str, text: str, opens: str
) -> None:
    view = answer_view(
        state_of("Fact [[1]]().", [doc], [(1, doc["document_id"])]), MID, None, streaming=False
    )
    page = soup(str(view.body))
    (cite,) = page.select(".cite")
    tip = page.select_one(f"#{cite['aria-describedby']}")
    assert tip is not None and tip["role"] == "tooltip"
    assert [
        tip.select_one(f".cite-tip-{part}").get_text()
        for part in ("title", "where", "text", "opens")
    ] == [doc["semantic_identifier"], where, text, opens]


def test_two_citations_of_one_source_have_previews_of_their_own() -> None:
    docs = [wire_doc("w", link="https://a.com/x", semantic_identifier="A")]
    view = answer_view(
        state_of("x [[1]]() y [[1]]()", docs, [(1, "w")]), MID, None, streaming=False
    )
    ids = [tip["id"] for tip in soup(str(view.body)).select("[role=tooltip]")]
    assert len(ids) == 2 and len(set(ids)) == 2
