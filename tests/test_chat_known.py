"""Whose each message is, as a worker last saw (`chat/known.py`): a stream's open checks it
without reading the message's row, and a deleted chat's messages are forgotten."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from tests.support.apps import ApiClient, api_client, idle_after, make_app
from tests.support.clock import Clock
from webapp.chat.conversations import get_message
from webapp.chat.known import KnownMessages
from webapp.chat.records import MessageRow
from webapp.chat.sessions import delete_session
from webapp.services import chat_service
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.web import api


def test_a_message_is_known_for_its_user_and_chat_alone_and_for_a_while() -> None:
    clock = Clock()
    known = KnownMessages(seconds=30, timer=clock)
    known.remember(1, "chat", "answer", "assistant")
    assert known.role(1, "chat", "answer") == "assistant"
    assert known.role(2, "chat", "answer") is None  # another user's ids are never a hit
    assert known.role(1, "other", "answer") is None
    clock.now = 31
    assert known.role(1, "chat", "answer") is None


def test_a_chat_forgotten_forgets_its_messages_only() -> None:
    known = KnownMessages()
    known.remember(1, "a", "q", "user")
    known.remember(1, "a", "m", "assistant")
    known.remember(1, "b", "n", "assistant")
    known.forget_session("a")
    assert known.role(1, "a", "q") is None
    assert known.role(1, "a", "m") is None
    assert known.role(1, "b", "n") == "assistant"


def message_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the API's reads of a message's row."""
    reads: list[str] = []

    def counted(
        engine: Engine, user_id: int, session_id: str, message_id: str
    ) -> MessageRow | None:
        reads.append(message_id)
        return get_message(engine, user_id, session_id, message_id)

    monkeypatch.setattr(api, "get_message", counted)
    return reads


@pytest.fixture
def app(tmp_path: Path) -> Flask:
    return make_app(tmp_path)


def asked(app: Flask, client: ApiClient) -> tuple[str, str]:
    """Ask in a new chat and wait for the answer to end: the chat's id and its stream's URL."""
    with idle_after(app):
        session_id = client.new_session()
        url = client.ask(session_id, "What do I owe on my credit cards?")["stream_url"]
    return session_id, str(url)


def test_streams_of_an_answer_asked_here_read_no_message_row(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = message_reads(monkeypatch)
    client = api_client(app)
    with idle_after(app):
        session_id = client.new_session()
        url = client.ask(session_id, "What do I owe on my credit cards?")["stream_url"]
        for _ in range(3):
            assert client.stream(url)[-1].event == "done"
    assert reads == []


def test_a_message_read_once_is_not_read_again(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    client = api_client(app)
    session_id, url = asked(app, client)
    with app.app_context():
        chat_service().known.forget_session(session_id)  # as a worker that did not ask it
    reads = message_reads(monkeypatch)
    for _ in range(2):
        assert client.stream(url)[-1].event == "done"
    assert len(reads) == 1


def test_a_chat_deleted_here_has_no_streams_at_once(app: Flask) -> None:
    client = api_client(app)
    session_id, url = asked(app, client)
    assert client.stream(url)[-1].event == "done"
    assert client.http.delete(f"/api/chat/sessions/{session_id}").status_code == 204
    assert client.http.get(url).status_code == 404


def test_a_chat_deleted_by_another_worker_ends_a_stream_opened_meanwhile(app: Flask) -> None:
    client = api_client(app)
    session_id, url = asked(app, client)
    assert client.stream(url)[-1].event == "done"
    # Deleted through another worker: this one is not told.
    assert delete_session(get_engine(app), api_user_id(app), session_id)
    with app.app_context():
        # Nothing kept here of a look at it (a look is kept two seconds, flights.py; within
        # them, a finished answer's stream is shown that look again).
        chat_service().reader.flights.forget_all()
    response = client.http.get(url)
    # Still remembered here: the stream opens, finds no answer, and ends with no event.
    assert response.status_code == 200
    assert "event:" not in response.text


def api_user_id(app: Flask) -> int:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    return user.id


def test_a_chat_deleted_here_just_after_a_read_of_its_answer_has_no_streams(
    app: Flask,
) -> None:
    client = api_client(app)
    session_id, url = asked(app, client)
    assert client.stream(url)[-1].event == "done"
    with app.app_context():
        chat_service().known.forget_session(session_id)  # as a worker that did not ask it
    assert client.stream(url)[-1].event == "done"  # read here once, and remembered
    assert client.http.delete(f"/api/chat/sessions/{session_id}").status_code == 204
    assert client.http.get(url).status_code == 404
