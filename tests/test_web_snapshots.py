"""A finished answer is drawn from the snapshot its turn left (webapp/web/snapshots.py).

The snapshot is written once, as the turn ends (done, stopped, failed); a page reads its
answers' snapshots in one query and never their events; an answer without one, with one of
another version, or with one that can't be read is folded from its events as before, and one
that can't be folded either is the placeholder, the rest of the chat as it was.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient

from tests.support.apps import api_client, idle_after
from tests.support.history import copy_exchange, statements
from tests.test_web_chat import QUESTION, new_chat, sign_in, soup, squash, user_id
from webapp.chat.leases import start_message
from webapp.chat.snapshots import finished_events, save_snapshot
from webapp.chat.tables import ai_chat_logs, chat_events
from webapp.chat.upkeep import UNRESUMABLE
from webapp.services import chat_service
from webapp.store.app_db import get_engine
from webapp.web import answers
from webapp.web.answers import UNDRAWABLE
from webapp.web.snapshots import VERSION

WORDS_IN_THE_ANSWER = "owe"


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    sign_in(app, client)
    return client


def answered(app: Flask, session_id: str, question: str = QUESTION) -> str:
    """Ask through the API and wait for the turn to end; return the answer's id."""
    with idle_after(app):
        return str(api_client(app).ask(session_id, question)["message_id"])


def _set(app: Flask, message_id: str, **values: object) -> None:
    with get_engine(app).begin() as conn:
        conn.execute(ai_chat_logs.update().where(ai_chat_logs.c.id == message_id).values(values))


def _kept(app: Flask, message_id: str) -> tuple[int | None, str | None]:
    with get_engine(app).connect() as conn:
        row = conn.execute(
            sa.select(ai_chat_logs.c.snapshot_version, ai_chat_logs.c.snapshot).where(
                ai_chat_logs.c.id == message_id
            )
        ).one()
    return row.snapshot_version, row.snapshot


def _article(page: BeautifulSoup, message_id: str) -> str:
    """The answer's HTML, its forms' per-draw values (CSRF token, idempotency key) blanked:
    a CSRF token carries the second it was made, so two draws may differ only there."""
    found = page.select_one(f"#message-{message_id}")
    assert found is not None
    for field in found.select("input[name=csrf_token], input[name=idempotency_key]"):
        field["value"] = ""
    return squash(found.decode())


def test_a_finished_answer_keeps_a_snapshot_that_draws_what_folding_its_events_draws(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    answer_id = answered(app, session_id)
    version, data = _kept(app, answer_id)
    assert version == VERSION and data is not None
    assert json.loads(data)["sources"]["visible"] is True
    from_snapshot = soup(demo.get(f"/chat/{session_id}"))
    sheet = demo.get(f"/answers/{answer_id}/sources")
    _set(app, answer_id, snapshot=None, snapshot_version=None)  # as a row from before 0011
    folded = soup(demo.get(f"/chat/{session_id}"))
    assert _article(from_snapshot, answer_id) == _article(folded, answer_id)
    assert "Sources ·" in _article(folded, answer_id)
    again = demo.get(f"/answers/{answer_id}/sources")
    assert sheet.status_code == again.status_code == 200
    assert squash(sheet.text) == squash(again.text)


def test_the_page_draws_a_finished_answer_from_its_snapshot_never_its_events(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    answer_id = answered(app, session_id)
    before = _article(soup(demo.get(f"/chat/{session_id}")), answer_id)
    # Events spoiled after the turn ended: a page that folded them would draw something else.
    with get_engine(app).begin() as conn:
        conn.execute(
            chat_events.update().where(chat_events.c.message_id == answer_id).values(data="{")
        )
    with statements(get_engine(app)) as seen:
        page = demo.get(f"/chat/{session_id}")
        sheet = demo.get(f"/answers/{answer_id}/sources")
    assert page.status_code == sheet.status_code == 200
    assert _article(soup(page), answer_id) == before
    assert WORDS_IN_THE_ANSWER in before and "Sources ·" in before
    assert not [s for s in seen if "chat_events" in s]


def test_a_pages_snapshots_are_one_query_however_many_answers_it_shows(
    app: Flask, demo: FlaskClient
) -> None:
    engine = get_engine(app)
    original = new_chat(app)
    answer_id = answered(app, original)
    counts = {}
    for exchanges in (2, 10):
        session_id = new_chat(app)
        copy_exchange(engine, session_id, answer_id, exchanges)
        demo.get(f"/chat/{session_id}")  # the account names and the like, read once warm
        with statements(engine) as seen:
            page = demo.get(f"/chat/{session_id}")
        assert len(soup(page).select("article.message.assistant")) == exchanges
        counts[exchanges] = len(seen)
        assert len([s for s in seen if "snapshot" in s]) == 1
    assert counts[2] == counts[10]


STALE: dict[str, Any] = {
    "answer": {"html": "<p>Words of another version</p>", "error": None, "stopped": False,
               "choosers": []},
    "sources": {"visible": False, "count": 0, "icons": [], "sections": []},
}  # fmt: skip


@pytest.mark.parametrize(
    ("version", "drawn"), [(VERSION, True), (VERSION + 1, False)], ids=["this", "another"]
)
def test_a_snapshot_of_another_version_is_ignored_and_the_answer_folded_again(
    app: Flask, demo: FlaskClient, version: int, drawn: bool
) -> None:
    session_id = new_chat(app)
    answer_id = answered(app, session_id)
    _set(app, answer_id, snapshot=json.dumps(STALE), snapshot_version=version)
    shown = _article(soup(demo.get(f"/chat/{session_id}")), answer_id)
    assert ("Words of another version" in shown) is drawn
    assert (WORDS_IN_THE_ANSWER in shown) is not drawn


UNREADABLE = {
    "not JSON": "{",
    "not an object": "[]",
    "no sources": json.dumps({"answer": STALE["answer"]}),
    "a row of the wrong shape": json.dumps(
        {**STALE, "sources": {**STALE["sources"], "sections": [{"heading": "More", "rows": [1]}]}}
    ),
    "an opener of no kind": json.dumps(
        {**STALE, "answer": {**STALE["answer"], "choosers": [{"kind": "teleport"}]}}
    ),
    "a count that is text": json.dumps({**STALE, "sources": {**STALE["sources"], "count": "3"}}),
}


@pytest.mark.parametrize("kept", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_a_snapshot_that_cant_be_read_is_folded_again_and_the_rest_of_the_chat_opens(
    app: Flask, demo: FlaskClient, monkeypatch: pytest.MonkeyPatch, kept: str
) -> None:
    session_id = new_chat(app)
    first, second = answered(app, session_id), answered(app, session_id, "How much cash do I have?")
    _set(app, first, snapshot=kept)
    page = demo.get(f"/chat/{session_id}")
    assert page.status_code == 200
    assert WORDS_IN_THE_ANSWER in _article(soup(page), first)  # folded from its events
    # Its events can't be folded either: the placeholder, and the rest of the chat as it was.
    packets = answers._stored_packets

    def stored_packets(engine: sa.Engine, message_id: str) -> list[object]:
        if message_id == first:
            raise ValueError("a row no page can draw")
        return packets(engine, message_id)

    monkeypatch.setattr(answers, "_stored_packets", stored_packets)
    drawn = soup(demo.get(f"/chat/{session_id}"))
    assert UNDRAWABLE in drawn.select_one(f"#message-{first}").get_text(" ", strip=True)
    assert "$" in drawn.select_one(f"#message-{second}").get_text(" ", strip=True)


def test_a_snapshot_the_database_cant_decode_leaves_every_answer_folded(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    first, second = answered(app, session_id), answered(app, session_id, "How much cash do I have?")
    with get_engine(app).begin() as conn:  # bytes that are not UTF-8, in a text column
        conn.execute(
            sa.text("UPDATE ai_chat_logs SET snapshot = CAST(x'80ff' AS TEXT) WHERE id = :id"),
            {"id": first},
        )
    page = demo.get(f"/chat/{session_id}")
    assert page.status_code == 200
    assert WORDS_IN_THE_ANSWER in _article(soup(page), first)
    assert "$" in _article(soup(page), second)


def test_a_stopped_answer_keeps_a_snapshot_and_its_forms_are_drawn_fresh(
    app: Flask, demo: FlaskClient
) -> None:
    engine, uid, session_id = get_engine(app), user_id(app), new_chat(app)
    _, answer_id = start_message(engine, uid, session_id, QUESTION, timedelta(seconds=30), "x")
    assert finished_events(engine, answer_id) is None  # running: nothing to keep yet
    assert not save_snapshot(engine, answer_id, VERSION, "{}")
    with app.app_context():
        assert chat_service(app).cancel(uid, session_id, answer_id)
    version, data = _kept(app, answer_id)
    assert version == VERSION and data is not None and json.loads(data)["answer"]["stopped"]
    assert not save_snapshot(engine, answer_id, VERSION, "{}")  # written once
    keys = []
    for _ in range(2):
        article = soup(demo.get(f"/chat/{session_id}")).select_one(f"#message-{answer_id}")
        assert "Stopped." in article.get_text(" ", strip=True)
        keys.append(article.select_one(".answer-regenerate [name=idempotency_key]")["value"])
    assert keys[0] != keys[1]


def test_an_answer_that_failed_keeps_a_snapshot_with_its_error(
    app: Flask, demo: FlaskClient
) -> None:
    engine, uid, session_id = get_engine(app), user_id(app), new_chat(app)
    # A turn whose runner died with no checkpoint to resume from fails, as it ends.
    _, answer_id = start_message(engine, uid, session_id, QUESTION, timedelta(seconds=-1), "x")
    with app.app_context():  # its first use takes over what dead runners left: this turn
        chat_service(app).resume_if_stale(uid, answer_id)
    version, data = _kept(app, answer_id)
    assert version == VERSION and data is not None
    assert json.loads(data)["answer"]["error"] == UNRESUMABLE
    article = soup(demo.get(f"/chat/{session_id}")).select_one(f"#message-{answer_id}")
    assert UNRESUMABLE in article.get_text(" ", strip=True)
    assert article.select_one(".answer-regenerate") is not None
