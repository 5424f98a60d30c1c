"""The JSON API end to end with the offline engine: every channel carries the targets."""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, SupportsIndex, TypeVar

import httpx
import pytest
import sqlalchemy as sa
from flask import Flask
from httpx_sse import EventSource
from werkzeug.serving import make_server

from tests.support.apps import ApiClient, api_client, idle_after, make_app
from tests.support.fake_claude import FakeClaude, Paced, Reply, text_reply, tool_reply
from tests.support.waiting import wait_for
from webapp.chat import sessions
from webapp.chat.service import ChatService
from webapp.chat.tables import (
    ai_chat_logs,
    chat_checkpoints,
    chat_events,
    chat_idempotency_keys,
)
from webapp.packets.select import select_sources
from webapp.packets.state import PacketStream
from webapp.services import chat_service
from webapp.store.accounts import list_accounts
from webapp.store.app_db import close_engine, get_engine
from webapp.store.users import authenticate

T = TypeVar("T")

CREDIT = "silvia://your-account/credit-card"
SAPPHIRE = "silvia://your-account/sapphire-preferred"


@pytest.fixture
def demo(app: Flask) -> ApiClient:
    return api_client(app, "demo")


def demo_cards(app: Flask) -> dict[str, list[str]]:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    cards: dict[str, list[str]] = {}
    for account in list_accounts(get_engine(app), user.id):
        cards.setdefault(str(account["account_name"]), []).append(str(account["source_account_id"]))
    return cards


def test_credit_card_question_yields_typed_targets_on_every_channel(
    app: Flask, demo: ApiClient
) -> None:
    cards = demo_cards(app)
    pooled = {
        "kind": "accounts",
        "accounts": [{"accountId": i, "provider": "plaid"} for i in cards["Credit card"]],
    }
    sapphire = {"kind": "account", "accountId": cards["Sapphire Preferred"][0], "provider": "plaid"}
    with idle_after(app):
        session_id = demo.new_session()
        asked = demo.ask(session_id, "What do I owe on my credit cards?")
        events = demo.stream(asked["stream_url"])

    names = [e.event for e in events]
    assert names[-1] == "done" and json.loads(events[-1].data) == {"status": "complete"}
    assert [int(e.id) for e in events] == list(range(1, len(events) + 1))

    # SSE `citation`: data.citation.target
    live = {
        json.loads(e.data)["citation"]["source"]: json.loads(e.data)["citation"]["target"]
        for e in events
        if e.event == "citation"
    }
    assert live[CREDIT]["kind"] == "accounts"
    assert sorted(a["accountId"] for a in live[CREDIT]["accounts"]) == sorted(cards["Credit card"])
    assert live[SAPPHIRE] == sapphire
    # SSE `citations_summary`: data.citations[i].target
    (summary,) = [json.loads(e.data) for e in events if e.event == "citations_summary"]
    by_source = {c["source"]: c["target"] for c in summary["citations"]}
    assert by_source[SAPPHIRE] == sapphire
    assert sorted(a["accountId"] for a in by_source[CREDIT]["accounts"]) == sorted(
        a["accountId"] for a in pooled["accounts"]
    )
    # The raw `message` event carries no targets.
    (message,) = [e.data for e in events if e.event == "message"]
    assert '"target"' not in message

    # Packets fold into the processed state the browser renders.
    stream = PacketStream(0)
    stream.extend(json.loads(e.data) for e in events if e.event == "packet")
    state = stream.state
    assert state.is_complete and state.malformed_count == 0
    selected = select_sources(state)
    assert [d.document_id for d in selected.cited][:2] == [CREDIT, SAPPHIRE]
    assert selected.cited[1].target is not None and selected.cited[1].target.kind == "account"
    assert "[[1]]()" in state.text and "[[2]]()" in state.text

    # The stored row, raw through the API: messages[i].citations[j].target
    stored = demo.session(session_id)
    answer = stored["messages"][1]
    assert answer["role"] == "assistant" and answer["status"] == "complete"
    assert {c["source"]: c["target"] for c in answer["citations"]}[SAPPHIRE] == sapphire
    inline = answer["inline_citations"]
    assert inline and all(answer["content"][c["start"] : c["end"]] == c["text"] for c in inline)
    assert {c["source"]: c["target"] for c in inline}[SAPPHIRE] == sapphire
    # Provider names are for routing only: never in the text people read.
    assert "plaid" not in answer["content"].lower()


def test_last_event_id_resumes_after_that_event(app: Flask, demo: ApiClient) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        asked = demo.ask(session_id, "What are my holdings?")
        everything = demo.stream(asked["stream_url"])
        rest = demo.stream(asked["stream_url"], last_event_id="5")
    assert [e.id for e in rest] == [e.id for e in everything[5:]]
    assert [e.data for e in rest] == [e.data for e in everything[5:]]


def test_a_dropped_connection_loses_nothing(tmp_path: Path) -> None:
    release = threading.Event()

    class HeldReplies(list[Reply]):
        """The scripted replies; the second (the answer's text) waits for `release`."""

        def pop(self, index: SupportsIndex = -1) -> Reply:
            if len(self) == 1:
                release.wait(20)
            return super().pop(index)

    query = (
        "SELECT source, source_account_id, account_name, current_balance "
        "FROM account_details WHERE account_name = 'Credit card'"
    )
    cite = {
        "type": "search_result_location",
        "source": CREDIT,
        "title": "Credit card",
        "cited_text": "…",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    with FakeClaude() as fake:
        app = make_app(tmp_path, ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake.url)
        # The answer's text waits until the reader has hung up, so the hang-up is mid-stream.
        fake.replies = HeldReplies(
            [
                tool_reply(("q", "execute_sql", {"query": query})),
                text_reply(("You owe on two cards.", [cite])),
            ]
        )
        demo = api_client(app)
        server = make_server("127.0.0.1", 0, app, threaded=True)
        serving = threading.Thread(target=server.serve_forever, daemon=True)
        serving.start()
        try:
            with idle_after(app):
                session_id = demo.new_session()
                stream_url = demo.ask(session_id, "What do I owe on my credit cards?")["stream_url"]
                headers = {"Authorization": f"Bearer {demo.token}"}
                with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=20) as http:
                    with http.stream("GET", stream_url, headers=headers) as response:
                        assert response.status_code == 200
                        events = EventSource(response).iter_sse()
                        first = [next(events), next(events)]
                    # The connection is closed now, with the answer not yet written.
                    assert demo.session(session_id)["messages"][1]["status"] == "running"
                release.set()
                stored = demo.wait_done(session_id)
                replayed = demo.stream(stream_url, last_event_id="0")
        finally:
            release.set()
            server.shutdown()
            server.server_close()
    answer = stored["messages"][1]
    assert answer["status"] == "complete" and answer["content"] == "You owe on two cards."
    assert [c["source"] for c in answer["citations"]] == [CREDIT]
    assert answer["citations"][0]["target"]["kind"] == "accounts"
    assert [(e.id, e.data) for e in replayed[:2]] == [(e.id, e.data) for e in first]
    assert [int(e.id) for e in replayed] == list(range(1, len(replayed) + 1))
    assert replayed[-1].event == "done"
    assert json.loads(replayed[-1].data) == {"status": "complete"}


def test_history_is_text_only_and_sessions_are_listed(app: Flask, demo: ApiClient) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        demo.stream(demo.ask(session_id, "What do I owe on my credit cards?")["stream_url"])
        demo.stream(demo.ask(session_id, "What are my holdings?")["stream_url"])
    stored = demo.session(session_id)
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant"] * 2
    assert stored["title"] == "What do I owe on my credit cards"  # its first words
    listed = demo.http.get("/api/chat/sessions").json()["sessions"]
    assert [s["id"] for s in listed] == [session_id]


def test_other_users_cannot_see_a_session(app: Flask, demo: ApiClient) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        asked = demo.ask(session_id, "What are my holdings?")
        demo.stream(asked["stream_url"])
    alex = api_client(app, "alex").http
    assert alex.get(f"/api/chat/sessions/{session_id}").status_code == 404
    assert alex.get(asked["stream_url"]).status_code == 404
    assert (
        alex.post(f"/api/chat/sessions/{session_id}/messages", json={"message": "hi"}).status_code
        == 404
    )
    assert alex.get("/api/chat/sessions").json() == {"sessions": [], "next": None}


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"{not json", {"content-type": "application/json"}, 400),
        (b"[1, 2]", {"content-type": "application/json"}, 400),
        (b'{"message": 7}', {"content-type": "application/json"}, 400),
        (b'{"message": "   "}', {"content-type": "application/json"}, 400),
        (json.dumps({"message": "x" * 9000}).encode(), {"content-type": "application/json"}, 400),
        (
            json.dumps({"message": "x" * 100_000}).encode(),
            {"content-type": "application/json"},
            413,
        ),
    ],
    ids=["malformed", "not-an-object", "not-a-string", "blank", "too-long", "oversize-body"],
)
def test_bad_requests_get_clear_errors(
    app: Flask, demo: ApiClient, body: bytes, headers: dict[str, str], status: int
) -> None:
    session_id = demo.new_session()
    response = demo.http.post(
        f"/api/chat/sessions/{session_id}/messages", content=body, headers=headers
    )
    assert response.status_code == status
    assert isinstance(response.json()["error"], str) and response.json()["error"]
    assert demo.session(session_id)["messages"] == []


@pytest.mark.parametrize("token", [None, "Bearer nope", "Basic abc", "Bearer "])
def test_the_api_needs_a_valid_token(app: Flask, token: str | None) -> None:
    client = app.test_client()
    headers = {"Authorization": token} if token else {}
    response = client.get("/api/chat/sessions", headers=headers)
    assert response.status_code == 401
    assert "error" in response.get_json()


def test_no_log_record_of_complete_turns_names_an_account(
    app: Flask, demo: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    cards = demo_cards(app)
    ids = [i for values in cards.values() for i in values]
    caplog.set_level(logging.DEBUG)
    with idle_after(app):
        session_id = demo.new_session()
        for question in (
            "What do I owe on my credit cards?",
            "What are my holdings?",
            "What is my checking balance?",
        ):
            demo.stream(demo.ask(session_id, question)["stream_url"])
    records = [r.getMessage() for r in caplog.records]
    assert any("[Citations]" in r for r in records)
    assert not [r for r in records if any(i in r for i in ids)]


# Sessions: rename and delete.


def _rows(app: Flask, table: sa.Table, column: sa.Column[Any], value: str) -> int:
    with get_engine(app).connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count()).select_from(table).where(column == value)
            ).scalar()
            or 0
        )


def test_rename_trims_the_title_and_answers_with_the_session(app: Flask, demo: ApiClient) -> None:
    session_id = demo.new_session()
    response = demo.http.patch(
        f"/api/chat/sessions/{session_id}", json={"title": "  Card debts 💳  "}
    )
    assert response.status_code == 200, response.text
    assert response.json()["id"] == session_id and response.json()["title"] == "Card debts 💳"
    assert demo.session(session_id)["title"] == "Card debts 💳"
    listed = demo.http.get("/api/chat/sessions").json()["sessions"]
    assert [s["title"] for s in listed] == ["Card debts 💳"]
    longest = "x" * 80
    assert (
        demo.http.patch(f"/api/chat/sessions/{session_id}", json={"title": longest}).json()["title"]
        == longest
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"title": ""}',
        b'{"title": "   "}',
        json.dumps({"title": "x" * 81}).encode(),
        b'{"title": "a\\u0000b"}',
        b'{"title": "two\\nlines"}',
        b'{"title": "tab\\there"}',
        b'{"title": "half \\ud800 pair"}',
        b'{"title": "\\udfff"}',
        b'{"title": "evil\\u202egnp"}',
        b'{"title": 7}',
        b"{}",
        b"{not json",
    ],
    ids=[
        "empty",
        "blank",
        "too-long",
        "nul",
        "newline",
        "tab",
        "lone-high-surrogate",
        "lone-low-surrogate",
        "bidi-override",
        "not-a-string",
        "missing",
        "malformed",
    ],
)
def test_a_bad_title_is_refused_and_nothing_changes(
    app: Flask, demo: ApiClient, body: bytes
) -> None:
    session_id = demo.new_session()
    response = demo.http.patch(
        f"/api/chat/sessions/{session_id}",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str) and response.json()["error"]
    assert demo.session(session_id)["title"] == "New chat"


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_another_users_session_cannot_be_renamed_or_deleted(
    app: Flask, demo: ApiClient, method: str
) -> None:
    session_id = demo.new_session()
    alex = api_client(app, "alex").http
    for target in (session_id, "nope"):
        response = alex.request(method, f"/api/chat/sessions/{target}", json={"title": "Mine"})
        assert response.status_code == 404
        assert response.json() == {"error": "No such chat session."}
    assert demo.session(session_id)["title"] == "New chat"


def test_delete_removes_the_session_and_everything_in_it(app: Flask, demo: ApiClient) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        kept = demo.new_session()
        response = demo.http.post(
            f"/api/chat/sessions/{session_id}/messages",
            json={"message": "What are my holdings?"},
            headers={"Idempotency-Key": "holdings-1"},
        )
        message_id = response.json()["message_id"]
        demo.stream(response.json()["stream_url"])
    assert _rows(app, chat_events, chat_events.c.message_id, message_id) > 0
    assert _rows(app, chat_checkpoints, chat_checkpoints.c.message_id, message_id) == 1
    assert _rows(app, chat_idempotency_keys, chat_idempotency_keys.c.session_id, session_id) == 1

    deleted = demo.http.delete(f"/api/chat/sessions/{session_id}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert demo.http.get(f"/api/chat/sessions/{session_id}").status_code == 404
    assert demo.http.delete(f"/api/chat/sessions/{session_id}").status_code == 404
    assert [s["id"] for s in demo.http.get("/api/chat/sessions").json()["sessions"]] == [kept]
    assert _rows(app, ai_chat_logs, ai_chat_logs.c.session_id, session_id) == 0
    assert _rows(app, chat_events, chat_events.c.message_id, message_id) == 0
    assert _rows(app, chat_checkpoints, chat_checkpoints.c.message_id, message_id) == 0
    assert _rows(app, chat_idempotency_keys, chat_idempotency_keys.c.session_id, session_id) == 0
    # The key went with the chat: asked again elsewhere, it is a new question.
    with idle_after(app):
        again = demo.http.post(
            f"/api/chat/sessions/{kept}/messages",
            json={"message": "What are my holdings?"},
            headers={"Idempotency-Key": "holdings-1"},
        )
    assert again.status_code == 202 and again.json()["message_id"] != message_id


LONG_TEXT = "One part of the answer, then another. " * 400


def _streamed_some(app: Flask, message_id: str) -> bool | None:
    with get_engine(app).connect() as conn:
        found = (
            conn.execute(
                sa.select(chat_events.c.data).where(chat_events.c.message_id == message_id)
            )
            .scalars()
            .all()
        )
    return True if any("message_delta" in data for data in found) else None


def test_deleting_a_session_with_a_running_answer_stops_its_runner(tmp_path: Path) -> None:
    with FakeClaude([Paced(text_reply((LONG_TEXT, [])), 0.05)]) as fake:
        app = make_app(tmp_path, ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake.url)
        demo = api_client(app)
        session_id = demo.new_session()
        message_id = demo.ask(session_id, "What do I owe?")["message_id"]
        wait_for(lambda: _streamed_some(app, message_id))
        with app.app_context():
            service = chat_service()
        assert service._threads  # the runner is at work
        cancelled: list[tuple[str, bool]] = []
        real_cancel = service.cancel

        def cancel(user_id: int, session: str, message: str) -> bool:
            ended = real_cancel(user_id, session, message)
            cancelled.append((message, ended))
            return ended

        service.cancel = cancel  # type: ignore[method-assign,assignment]
        deleted = demo.http.delete(f"/api/chat/sessions/{session_id}")
        # The paced reply would take a minute; a stopped runner ends long before.
        service.wait_idle(30)
        alive = list(service._threads)
        close_engine(app)
    assert deleted.status_code == 204
    assert cancelled == [(message_id, True)]  # it was running, and was ended first
    assert alive == []
    # Nothing was written for the answer after the chat went.
    assert _rows(app, ai_chat_logs, ai_chat_logs.c.session_id, session_id) == 0
    assert _rows(app, chat_events, chat_events.c.message_id, message_id) == 0
    assert _rows(app, chat_checkpoints, chat_checkpoints.c.message_id, message_id) == 0


# Idempotency-Key on asking.


def _ask_with_key(
    client: ApiClient, session_id: str, key: str, question: str = "What are my holdings?"
) -> httpx.Response:
    return client.http.post(
        f"/api/chat/sessions/{session_id}/messages",
        json={"message": question},
        headers={"Idempotency-Key": key},
    )


def test_the_same_key_again_answers_the_same_message_and_starts_nothing(
    app: Flask, demo: ApiClient
) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        first = _ask_with_key(demo, session_id, "k-1")
        second = _ask_with_key(demo, session_id, "k-1")  # while the first is running, or not
        demo.wait_done(session_id)
        third = _ask_with_key(demo, session_id, "k-1")  # after it has finished
    assert first.status_code == second.status_code == third.status_code == 202
    assert first.json() == second.json() == third.json()
    assert set(first.json()) == {"message_id", "stream_url"}
    messages = demo.session(session_id)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["id"] == first.json()["message_id"]
    # Another key is another question; so is the same key for another user.
    with idle_after(app):
        other = _ask_with_key(demo, session_id, "k-2")
        demo.wait_done(session_id)
        alex = api_client(app, "alex")
        alex_session = alex.new_session()
        theirs = _ask_with_key(alex, alex_session, "k-1")
        alex.wait_done(alex_session)
    assert other.status_code == 202 and other.json() != first.json()
    assert theirs.status_code == 202 and theirs.json()["message_id"] != first.json()["message_id"]
    assert len(demo.session(session_id)["messages"]) == 4


def test_a_key_older_than_a_day_is_a_new_question(app: Flask, demo: ApiClient) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        first = _ask_with_key(demo, session_id, "old")
        demo.wait_done(session_id)
        with get_engine(app).begin() as conn:
            conn.execute(
                chat_idempotency_keys.update().values(
                    created_at=datetime.now(UTC) - timedelta(hours=24, minutes=1)
                )
            )
        again = _ask_with_key(demo, session_id, "old")
        demo.wait_done(session_id)
        repeat = _ask_with_key(demo, session_id, "old")
    assert again.status_code == 202 and again.json() != first.json()
    assert repeat.json() == again.json()
    assert len(demo.session(session_id)["messages"]) == 4


@pytest.mark.parametrize(
    ("key", "status"),
    [("k" * 200, 202), ("k" * 201, 400), ("", 400)],
    ids=["200-chars", "201-chars", "empty"],
)
def test_an_idempotency_key_is_1_to_200_characters(
    app: Flask, demo: ApiClient, key: str, status: int
) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        response = _ask_with_key(demo, session_id, key)
    assert response.status_code == status
    if status == 400:
        assert "Idempotency-Key" in response.json()["error"]
        assert demo.session(session_id)["messages"] == []


def test_a_key_used_for_another_question_or_chat_is_refused(app: Flask, demo: ApiClient) -> None:
    with idle_after(app):
        session_id, other_session = demo.new_session(), demo.new_session()
        first = _ask_with_key(demo, session_id, "k")
        demo.wait_done(session_id)
        other_question = _ask_with_key(demo, session_id, "k", "What is my net worth?")
        other_chat = _ask_with_key(demo, other_session, "k")
    assert first.status_code == 202
    assert other_question.status_code == other_chat.status_code == 422
    assert "another question" in other_question.json()["error"]
    assert len(demo.session(session_id)["messages"]) == 2
    assert demo.session(other_session)["messages"] == []


@pytest.mark.parametrize("backend", ["app", "pg_app"], ids=["sqlite", "postgresql"])
def test_two_requests_racing_with_one_key_ask_once(
    backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    app: Flask = request.getfixturevalue(backend)
    demo = api_client(app, "demo")
    # Both requests look the key up before either has asked: the race the key must survive,
    # however slow the machine (the key is stored with the question, in one transaction).
    looked = threading.Barrier(2)
    real_find = sessions.find_key
    calls: list[str] = []
    lock = threading.Lock()

    def find_key(*args: Any) -> tuple[str, str] | None:
        found = real_find(*args)
        with lock:
            calls.append(threading.current_thread().name)
            first_look = calls.count(threading.current_thread().name) == 1
        if first_look:
            looked.wait(10)
        return found

    monkeypatch.setattr(sessions, "find_key", find_key)
    # The winner is slow to start its turn once its question is stored (a loaded machine):
    # the loser, refused as busy meanwhile, must still find the key and answer the same.
    real_start = ChatService.start_turn

    def slow_start(self: ChatService, *args: Any, **kwargs: Any) -> Any:
        threading.Event().wait(1.5)
        return real_start(self, *args, **kwargs)

    monkeypatch.setattr(ChatService, "start_turn", slow_start)
    session_id = demo.new_session()
    responses: list[httpx.Response] = []

    def post() -> None:
        responses.append(_ask_with_key(api_client(app), session_id, "race"))

    with idle_after(app):
        racers = [threading.Thread(target=post, name=f"racer-{i}") for i in range(2)]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join(30)
        demo.wait_done(session_id)
    assert [r.status_code for r in responses] == [202, 202]
    assert responses[0].json() == responses[1].json()
    messages = demo.session(session_id)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["id"] == responses[0].json()["message_id"]


def test_a_request_that_loses_the_race_for_its_key_withdraws_its_question(
    app: Flask, demo: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    with idle_after(app):
        session_id = demo.new_session()
        first = _ask_with_key(demo, session_id, "late")
        demo.wait_done(session_id)
        # The twin looked before the first had recorded the key, and asks after it finished:
        # its insert of the key fails, and the key's first message wins.
        real_find = sessions.find_key
        looks: list[str] = []

        def find_key(*args: Any) -> tuple[str, str] | None:
            looks.append("look")
            return None if len(looks) == 1 else real_find(*args)

        monkeypatch.setattr(sessions, "find_key", find_key)
        twin = _ask_with_key(demo, session_id, "late")
    assert twin.status_code == 202 and twin.json() == first.json()
    messages = demo.session(session_id)["messages"]
    assert [m["id"] for m in messages][1:] == [first.json()["message_id"]]
    assert len(messages) == 2
