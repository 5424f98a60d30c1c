"""A turn's whole life under real operations: deadlines, cancel, brief failures, retries."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from flask import Flask
from httpx_sse import ServerSentEvent, connect_sse

from tests.support.apps import api_client
from tests.support.fake_claude import FakeClaude, HttpError, Paced, text_reply
from tests.support.gunicorn import gunicorn
from tests.support.waiting import wait_for
from tests.test_serving import _ask, _client, _env, _sqlite, _stalling_reply, _stream, _token
from webapp import create_app
from webapp.store import writes
from webapp.store.app_db import close_engine

T = TypeVar("T")
ANSWER = "Your cards: $1,842.17 at American Express and $2,940.00 at Chase."


def _settled(client: httpx.Client, session_id: str) -> list[dict[str, Any]] | None:
    messages: list[dict[str, Any]] = client.get(f"/api/chat/sessions/{session_id}").json()[
        "messages"
    ]
    return messages if messages[-1]["status"] != "running" else None


def _packets(events: list[ServerSentEvent]) -> list[dict[str, Any]]:
    return [json.loads(e.data)["obj"] for e in events if e.event == "packet"]


def test_a_model_that_only_pings_is_stopped_at_the_turn_deadline(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    with FakeClaude([_stalling_reply(120), text_reply((ANSWER, []))]) as fake, ExitStack() as stack:
        server = stack.enter_context(
            gunicorn(
                _env(
                    url,
                    ANTHROPIC_API_KEY="test-key",
                    ANTHROPIC_BASE_URL=fake.url,
                    TURN_DEADLINE_SECONDS="3",
                ),
                tmp_path,
            )
        )
        client = stack.enter_context(_client(server, _token(url)))
        session_id, stream_url = _ask(client)
        events = _stream(client, stream_url)
        stored = wait_for(lambda: _settled(client, session_id))
        again = client.post(
            f"/api/chat/sessions/{session_id}/messages", json={"message": "And now?"}
        )
    kinds = [p["type"] for p in _packets(events)]
    assert kinds[-2:] == ["error", "stop"]
    assert json.loads(events[-1].data) == {"status": "error"}
    assert stored[-1]["status"] == "error" and "took too long" in stored[-1]["error"]
    assert again.status_code == 202  # the session takes questions again


def test_a_503_then_success_still_answers(tmp_path: Path, seeded_sqlite_template: Path) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    unavailable = HttpError(
        503,
        {"type": "error", "error": {"type": "api_error", "message": "try later"}},
        {"retry-after-ms": "100"},
    )
    with FakeClaude([unavailable, text_reply((ANSWER, []))]) as fake, ExitStack() as stack:
        server = stack.enter_context(
            gunicorn(_env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url), tmp_path)
        )
        client = stack.enter_context(_client(server, _token(url)))
        session_id, stream_url = _ask(client)
        events = _stream(client, stream_url)
        stored = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    assert json.loads(events[-1].data) == {"status": "complete"}
    assert stored[-1]["content"] == ANSWER and len(fake.requests) == 2


def test_a_write_lock_held_past_every_retry_resumes_the_turn(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    # Still streaming when the lock goes: the runner meets the failure mid-answer.
    slow = Paced(text_reply(("Thinking about your cards, one moment please. " * 30, [])), 0.1)
    with FakeClaude([slow, text_reply((ANSWER, []))]) as fake, ExitStack() as stack:
        server = stack.enter_context(
            gunicorn(_env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url), tmp_path)
        )
        client = stack.enter_context(_client(server, _token(url)))
        session_id, _ = _ask(client)
        wait_for(lambda: True if len(fake.requests) == 1 else None)
        # Another program holds the file's write lock longer than a write keeps retrying.
        blocker = sqlite3.connect(url.removeprefix("sqlite:///"))
        blocker.execute("BEGIN IMMEDIATE")
        time.sleep(writes.WRITE_RETRY_SECONDS + 3)
        blocker.rollback()
        blocker.close()
        stored = wait_for(lambda: _settled(client, session_id))
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[-1]["status"] == "complete" and stored[-1]["content"] == ANSWER
    assert len(fake.requests) == 2  # resumed from its checkpoint, asked again


@pytest.fixture
def slow_app(tmp_path: Path, seeded_sqlite_template: Path) -> Flask:
    return create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test",
            "DATABASE_URL": _sqlite(tmp_path, seeded_sqlite_template),
            "ANTHROPIC_API_KEY": "test-key",
        }
    )


def test_cancel_keeps_what_was_written_and_frees_the_session(slow_app: Flask) -> None:
    long_text = "One part of the answer, then another. " * 40
    with FakeClaude([Paced(text_reply((long_text, [])), 0.02), text_reply((ANSWER, []))]) as fake:
        slow_app.config["ANTHROPIC_BASE_URL"] = fake.url
        client = api_client(slow_app)
        session_id = client.new_session()
        asked = client.ask(session_id, "What do I owe?")
        events: list[ServerSentEvent] = []
        base = f"/api/chat/sessions/{session_id}/messages/{asked['message_id']}"

        def read() -> None:
            with client.http as http, connect_sse(http, "GET", asked["stream_url"]) as source:
                for event in source.iter_sse():
                    events.append(event)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        wait_for(lambda: True if any("message_delta" in e.data for e in events) else None)
        cancelled = client.http.post(f"{base}/cancel")
        reader.join(30)
        stored = client.session(session_id)["messages"]
        again = client.http.post(f"{base}/cancel")
        next_answer = client.ask(session_id, "And now?")
        client.stream(next_answer["stream_url"])
    close_engine(slow_app)
    assert cancelled.status_code == 202 and again.status_code == 409
    stops = [p for p in _packets(events) if p["type"] == "stop"]
    assert stops == [{"type": "stop", "stop_reason": "user_cancelled"}]
    assert json.loads(events[-1].data) == {"status": "cancelled"}
    kept = stored[-1]["content"]
    assert stored[-1]["status"] == "cancelled" and kept and long_text.startswith(kept)
    assert kept != long_text  # stopped part-way


def test_a_stopped_answer_keeps_its_text_and_citations_as_streamed() -> None:
    from webapp.chat.event_log import written_so_far
    from webapp.chat.notes import StoredEvent

    place = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
    target = {"kind": "accounts", "accounts": [{"accountId": "acc-1", "provider": "plaid"}]}
    doc = {
        "document_id": "silvia://your-account/credit-card",
        "semantic_identifier": "Credit card",
        "target": target,
    }

    def packet(seq: int, obj: dict[str, Any]) -> StoredEvent:
        return StoredEvent(seq, "packet", json.dumps({"placement": place, "obj": obj}))

    events = [
        packet(1, {"type": "search_tool_documents_delta", "documents": [doc]}),
        packet(2, {"type": "message_start", "final_documents": None}),
        packet(3, {"type": "message_delta", "content": "You owe $4,782.07 "}),
        packet(
            4, {"type": "citation_info", "citation_number": 1, "document_id": doc["document_id"]}
        ),
        packet(5, {"type": "message_delta", "content": "[[1]]() in all."}),
        packet(6, {"type": "message_delta", "content": " Withdrawn."}),
        StoredEvent(7, "reset", json.dumps({"after": 5})),
        StoredEvent(8, "citation", "not json"),
    ]
    text, citations = written_so_far(events)
    assert text == "You owe $4,782.07 [[1]]() in all."
    assert citations == [
        {"number": 1, "source": doc["document_id"], "title": "Credit card", "target": target}
    ]


def test_a_users_fourth_running_answer_is_refused_with_retry_after(slow_app: Flask) -> None:
    stall = _stalling_reply(30)
    with FakeClaude([stall, stall, stall, text_reply((ANSWER, []))]) as fake:
        slow_app.config["ANTHROPIC_BASE_URL"] = fake.url
        client = api_client(slow_app)
        asked = [client.ask(client.new_session(), "What do I owe?") for _ in range(3)]
        fourth = client.http.post(
            f"/api/chat/sessions/{client.new_session()}/messages",
            json={"message": "And my checking?"},
        )
        other_user = api_client(slow_app, "alex")
        theirs = other_user.http.post(
            f"/api/chat/sessions/{other_user.new_session()}/messages", json={"message": "Hi"}
        )
        for one in asked:  # stop the three so the test ends promptly
            client.http.post(one["stream_url"].removesuffix("/stream") + "/cancel")
    close_engine(slow_app)
    assert fourth.status_code == 429 and fourth.headers["Retry-After"] == "5"
    assert "wait for one to finish" in fourth.json()["error"]
    assert theirs.status_code == 202  # the cap is per user


def test_a_stopped_turns_sandbox_ends_instead_of_running_on(slow_app: Flask) -> None:
    from webapp.store.app_db import get_engine
    from webapp.tools.runner import LocalTools

    tools = LocalTools(get_engine(slow_app), 1)
    tools.stop()
    outcome = tools.run("execute_python", {"code": "import time\ntime.sleep(30)\nprint('late')"})
    close_engine(slow_app)
    text = json.dumps(outcome.content)
    assert "cancelled" in text and "late" not in text


def test_cancelling_a_turn_stops_its_tools(slow_app: Flask) -> None:
    from webapp.services import chat_service
    from webapp.store.app_db import get_engine
    from webapp.tools.runner import LocalTools

    made: list[LocalTools] = []
    with slow_app.app_context():
        service = chat_service()

    def tools(user_id: int) -> LocalTools:
        made.append(LocalTools(get_engine(slow_app), user_id))
        return made[-1]

    service.tools = tools
    with FakeClaude([_stalling_reply(30)]) as fake:
        slow_app.config["ANTHROPIC_BASE_URL"] = fake.url
        client = api_client(slow_app)
        session_id = client.new_session()
        asked = client.ask(session_id, "What is AAPL at?")
        wait_for(lambda: True if made and len(fake.requests) == 1 else None)
        client.http.post(asked["stream_url"].removesuffix("/stream") + "/cancel")
        service.wait_idle()
    close_engine(slow_app)
    assert made[0].stopped.is_set()
