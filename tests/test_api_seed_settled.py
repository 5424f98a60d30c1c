"""Seed 000, one meaning per source per turn: no channel announces a meaning the turn changes.

A citation made before a later tool round writes its source again (another "Credit card",
pooled; or one without ids, poisoned) must not reach a client with the meaning it had then:
the `citation` events, `citations_summary`, the stored row and the browser's chips all say
what the source means once the turn has settled it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from httpx_sse import ServerSentEvent

from tests.support.answer_stream import Page, run, stored
from tests.support.apps import api_client, idle_after
from tests.support.claude_replies import cite_then_call
from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from webapp.store.accounts import list_accounts
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

CREDIT = "silvia://your-account/credit-card"
WITH_IDS = (
    "SELECT source, source_account_id, account_name, current_balance "
    "FROM account_details WHERE institution_name = '{}' AND account_name = 'Credit card'"
)
WITHOUT_IDS = (
    "SELECT account_name, current_balance FROM account_details "
    "WHERE institution_name = '{}' AND account_name = 'Credit card'"
)


def cite(text: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": CREDIT,
        "title": "Credit card",
        "cited_text": text,
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }


def card_id(app: Flask, institution: str) -> str:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    (found,) = [
        str(a["source_account_id"])
        for a in list_accounts(get_engine(app), user.id)
        if a["institution_name"] == institution and a["account_name"] == "Credit card"
    ]
    return found


def pooled(app: Flask) -> dict[str, Any]:
    return {
        "kind": "accounts",
        "accounts": [
            {"accountId": card_id(app, "American Express"), "provider": "plaid"},
            {"accountId": card_id(app, "Citi"), "provider": "plaid"},
        ],
    }


# The second read of "Credit card" (Citi's): with its ids the source pools both cards; without
# them its rows conflict with the first read's and the source is left untyped.
CASES = {"pooled": (WITH_IDS, pooled), "poisoned": (WITHOUT_IDS, lambda app: None)}


def ask(
    app: Flask, fake: FakeClaude, second_read: str
) -> tuple[list[ServerSentEvent], dict[str, Any]]:
    """Cite Amex's "Credit card", then read Citi's; answer citing "Credit card" again."""
    fake.replies += [
        tool_reply(("a", "execute_sql", {"query": WITH_IDS.format("American Express")})),
        cite_then_call(
            "Your American Express card has a balance.",
            [cite("amex")],
            ("b", "execute_sql", {"query": second_read.format("Citi")}),
        ),
        text_reply(("Your Citi card has one too.", [cite("citi")])),
    ]
    client = api_client(app)
    with idle_after(app):
        session_id = client.new_session()
        events = client.stream(client.ask(session_id, "What do I owe?")["stream_url"])
    assert events[-1].event == "done" and json.loads(events[-1].data) == {"status": "complete"}
    row = client.session(session_id)["messages"][1]
    assert row["status"] == "complete", row["error"]
    return events, row


@pytest.mark.parametrize("case", list(CASES))
def test_every_citation_event_says_what_the_summary_and_the_row_say(
    claude_app: tuple[Flask, FakeClaude], case: str
) -> None:
    app, fake = claude_app
    second_read, expected = CASES[case]
    events, row = ask(app, fake, second_read)
    settled = expected(app)
    names = [e.event for e in events]
    live = [json.loads(e.data)["citation"] for e in events if e.event == "citation"]
    (summary,) = [json.loads(e.data)["citations"] for e in events if e.event == "citations_summary"]

    # One source, cited twice: before and after the second read wrote it again.
    assert [(c["number"], c["source"], c["cited_text"]) for c in live] == [
        (1, CREDIT, "amex"),
        (1, CREDIT, "citi"),
    ]
    assert [(c["number"], c["source"], c["target"]) for c in summary] == [(1, CREDIT, settled)]
    assert [(c["source"], c["target"]) for c in row["citations"]] == [(CREDIT, settled)]
    by_source = {c["source"]: c["target"] for c in summary}
    assert [c["target"] for c in live] == [by_source[c["source"]] for c in live]
    assert [(c["number"], c["source"], c["target"]) for c in live] == [
        (c["number"], c["source"], c["target"]) for c in row["inline_citations"]
    ]

    # Sent once the turn has settled its sources: after every tool round, just before the
    # summary, in the order the answer made them.
    at = names.index("citations_summary")
    assert names[at - len(live) : at] == ["citation"] * len(live)
    assert names.count("citation") == len(live)

    # The packets agree: numbers in first-cite order, the last copy of the document settled.
    packets = [json.loads(e.data)["obj"] for e in events if e.event == "packet"]
    infos = [
        (p["citation_number"], p["document_id"]) for p in packets if p["type"] == "citation_info"
    ]
    assert infos == [(1, CREDIT)]
    copies = [
        d
        for p in packets
        for d in (p.get("documents") or p.get("final_documents") or [])
        if d["document_id"] == CREDIT
    ]
    assert copies[-1].get("target") == settled


def chips(html: str) -> dict[str, tuple[str, str | None]]:
    """Return each inline citation by number: its tag and where it opens (None: nowhere)."""
    found = {}
    for cite in BeautifulSoup(html, "html.parser").select(".cite"):
        opens = cite.get("href") or cite.get("popovertarget") or cite.get("data-notice")
        found[cite.get_text()] = (cite.name, str(opens) if opens else None)
    return found


@pytest.mark.parametrize("case", list(CASES))
def test_the_browsers_live_chips_never_open_what_the_turn_later_changes(
    claude_app: tuple[Flask, FakeClaude], case: str
) -> None:
    app, fake = claude_app
    events, _ = ask(app, fake, CASES[case][0])
    # The browser's stream, fed this turn's packets and drawn after every one of them.
    drawn, _ = run(stored([e.data for e in events if e.event == "packet"]), every_packet=True)
    page, live = Page(), []
    for event in drawn:
        page.apply(event)
        if event.event in ("answer", "patch") and page.streaming:
            live.append(chips(page.body))
    final = chips(page.body)
    assert not page.streaming
    # A poisoned source opens nothing: its chip is a button that shows only its preview.
    assert final["1"] == (("button", "cite-m-1") if case == "pooled" else ("button", None))
    assert any("1" in shown for shown in live)  # the chip was drawn while streaming
    for shown in live:
        for number, (_, opens) in shown.items():
            # While the source may still change, its chip opens nothing; else what it will.
            assert opens is None or shown[number] == final[number], (number, shown)
