"""One boundary for text: whatever a tool hands back (any code point, surrogates included;
odd dates), the chat opens on every page and channel, and nothing stored holds a surrogate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from bs4 import BeautifulSoup
from flask import Flask
from hypothesis import example, given
from hypothesis import strategies as st

from tests.support.apps import ApiClient, api_client, idle_after, make_app
from tests.test_web_chat import sign_in
from webapp.chat.tables import ai_chat_logs
from webapp.services import override_services
from webapp.store.app_db import close_engine, get_engine
from webapp.text import REPLACEMENT, valid_json, valid_text
from webapp.tools.web_index import WebResult
from webapp.web import answers

# Every code point, lone surrogates and NUL included.
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)
ODD_DATES = st.one_of(
    st.none(),
    ANY_TEXT,
    st.sampled_from(["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "1e1000000"]),
)
QUESTION = "How big should my emergency fund be?"  # the offline engine searches the web


@dataclass
class Hostile:
    """A search provider whose results are whatever the test says."""

    results: list[WebResult]

    def search(self, query: str, *, limit: int = 5) -> list[WebResult]:
        return self.results[:limit]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    # Each example opens its own chat: the per-user chat caps would stop a property's run.
    made = make_app(
        tmp_path_factory.mktemp("text"),
        MAX_STREAMS_PER_USER=10_000,
        MAX_TURNS_PER_USER=100,
        MAX_CHATS_PER_USER=100_000,
        MAX_NEW_CHATS_PER_MINUTE=100_000,
    )
    yield made
    close_engine(made)


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


@given(st.text(st.characters(codec=None, exclude_categories=())))
def test_valid_text_leaves_only_what_utf8_encodes(text: str) -> None:
    cleaned = valid_text(text)
    cleaned.encode("utf-8")
    assert "\x00" not in cleaned and valid_text(cleaned) == cleaned
    if not _has_surrogate(text) and "\x00" not in text:
        assert cleaned == text


def test_a_surrogate_pair_becomes_its_character_and_a_lone_half_the_replacement() -> None:
    assert valid_text("\ud83d\ude00") == "\U0001f600"
    assert valid_text("a\ud800b\udfff") == f"a{REPLACEMENT}b{REPLACEMENT}"
    assert valid_json({"k\ud800": ["\x00", 1, None]}) == {f"k{REPLACEMENT}": [REPLACEMENT, 1, None]}


@example(title="\ud800", text="Keep six months \udfff of costs.", path="a", published=None)
@example(title="Fund", text="Keep \ud800 six months.", path="\ud800", published="1e1000000")
@example(title="Fund", text="Keep six months.", path="x", published="0001-01-01T00:00:00+14:00")
@given(
    title=ANY_TEXT,
    text=ANY_TEXT,
    path=ANY_TEXT,
    published=ODD_DATES,
)
def test_any_text_from_a_tool_leaves_every_page_and_channel_working(
    app: Flask, title: str, text: str, path: str, published: str | None
) -> None:
    result = WebResult(f"https://example.com/{path}", title, text[:20], text, published)
    override_services(app, web=Hostile([result]))
    api: ApiClient = api_client(app)
    with idle_after(app):
        session_id = api.new_session()
        asked = api.ask(session_id, QUESTION)
        events = api.stream(asked["stream_url"])
        stored = api.session(session_id)
    message_id = asked["message_id"]
    assert json.loads(events[-1].data)["status"] == "complete"
    assert not _has_surrogate(json.dumps(stored, ensure_ascii=False))
    assert not any(_has_surrogate(e.data) for e in events)
    browser = app.test_client()
    sign_in(app, browser)
    paths = [
        f"/chat/{session_id}",
        "/",
        f"/answers/{message_id}/sources",
        f"/chat/{session_id}/messages/{message_id}/events",
    ]
    statuses = {p: browser.get(p, follow_redirects=True).status_code for p in paths}
    assert statuses == dict.fromkeys(paths, 200)


NUMBERS = st.one_of(
    st.floats(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from(["1e1000000", "-1e1000000", "1e-1000000", "9" * 5000, "NaN", "abc"]),
)


@example(balance="1e1000000", synced="0001-01-01T00:00:00+14:00")
@example(balance=1e308, synced="9999-12-31T23:59:59-14:00")
@given(balance=NUMBERS, synced=ODD_DATES.filter(lambda d: d is None or not _has_surrogate(d)))
def test_any_number_or_date_in_an_account_leaves_every_page_working(
    app: Flask, balance: object, synced: str | None
) -> None:
    engine = get_engine(app)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "UPDATE plaid_accounts SET current_balance = :balance, synced_at = :synced"
                " WHERE name = 'Checking'"
            ),
            {"balance": balance, "synced": synced},
        )
    api: ApiClient = api_client(app)
    with idle_after(app):
        session_id = api.new_session()
        asked = api.ask(session_id, "What is my Chase checking balance?")
        events = api.stream(asked["stream_url"])
        api.session(session_id)
    assert json.loads(events[-1].data)["status"] == "complete"
    browser = app.test_client()
    sign_in(app, browser)
    message_id = asked["message_id"]
    paths = [
        f"/chat/{session_id}",
        "/accounts",
        "/portfolio",
        f"/answers/{message_id}/sources",
        f"/chat/{session_id}/messages/{message_id}/events",
    ]
    statuses = {p: browser.get(p, follow_redirects=True).status_code for p in paths}
    assert statuses == dict.fromkeys(paths, 200)


def test_an_answer_that_cannot_be_drawn_leaves_the_rest_of_the_chat(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    override_services(app, web=None)
    api = api_client(app)
    session_id = api.new_session()
    asked = []
    for question in ("What is my net worth?", "How much cash do I have?"):
        with idle_after(app):
            asked.append(api.ask(session_id, question)["message_id"])
    broken = asked[0]
    # A row from before answers kept snapshots (revision 0011): the page folds its events.
    with get_engine(app).begin() as conn:
        conn.execute(ai_chat_logs.update().where(ai_chat_logs.c.id == broken).values(snapshot=None))
    packets = answers._stored_packets

    def stored_packets(engine: Any, message_id: str) -> list[Any]:
        if message_id == broken:
            raise ValueError("a row no page can draw")
        return packets(engine, message_id)

    monkeypatch.setattr(answers, "_stored_packets", stored_packets)
    browser = app.test_client()
    sign_in(app, browser)
    page = browser.get(f"/chat/{session_id}")
    assert page.status_code == 200
    body = BeautifulSoup(page.text, "html.parser")
    shown = [a.get_text(" ", strip=True) for a in body.select("article.message.assistant")]
    assert len(shown) == 2
    assert answers.UNDRAWABLE in shown[0] and "$" in shown[1]
    questions = [q.get_text(strip=True) for q in body.select(".message.user .bubble")]
    assert questions == ["What is my net worth?", "How much cash do I have?"]
