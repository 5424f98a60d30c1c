"""The JSON API end to end with the offline engine: every channel carries the targets."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import SupportsIndex

import httpx
import pytest
from flask import Flask
from httpx_sse import EventSource
from werkzeug.serving import make_server

from tests.support.apps import ApiClient, api_client, idle_after, make_app
from tests.support.fake_claude import FakeClaude, Reply, text_reply, tool_reply
from webapp.packets import PacketStream, select_sources
from webapp.store import authenticate, get_engine, list_accounts

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
    pooled = {"kind": "accounts", "accounts": [
        {"accountId": i, "provider": "plaid"} for i in cards["Credit card"]]}
    sapphire = {"kind": "account", "accountId": cards["Sapphire Preferred"][0],
                "provider": "plaid"}
    with idle_after(app):
        session_id = demo.new_session()
        asked = demo.ask(session_id, "What do I owe on my credit cards?")
        events = demo.stream(asked["stream_url"])

    names = [e.event for e in events]
    assert names[-1] == "done" and json.loads(events[-1].data) == {"status": "complete"}
    assert [int(e.id) for e in events] == list(range(1, len(events) + 1))

    # SSE `citation`: data.citation.target
    live = {json.loads(e.data)["citation"]["source"]: json.loads(e.data)["citation"]["target"]
            for e in events if e.event == "citation"}
    assert live[CREDIT]["kind"] == "accounts"
    assert sorted(a["accountId"] for a in live[CREDIT]["accounts"]) == sorted(cards["Credit card"])
    assert live[SAPPHIRE] == sapphire
    # SSE `citations_summary`: data.citations[i].target
    (summary,) = [json.loads(e.data) for e in events if e.event == "citations_summary"]
    by_source = {c["source"]: c["target"] for c in summary["citations"]}
    assert by_source[SAPPHIRE] == sapphire
    assert sorted(a["accountId"] for a in by_source[CREDIT]["accounts"]) == \
        sorted(a["accountId"] for a in pooled["accounts"])
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
    assert inline and all(answer["content"][c["start"]:c["end"]] == c["text"] for c in inline)
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

    query = ("SELECT source, source_account_id, account_name, current_balance "
             "FROM account_details WHERE account_name = 'Credit card'")
    cite = {"type": "search_result_location", "source": CREDIT, "title": "Credit card",
            "cited_text": "…", "search_result_index": 0, "start_block_index": 0,
            "end_block_index": 1}
    with FakeClaude() as fake:
        app = make_app(tmp_path, ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake.url)
        # The answer's text waits until the reader has hung up, so the hang-up is mid-stream.
        fake.replies = HeldReplies([tool_reply(("q", "execute_sql", {"query": query})),
                                    text_reply(("You owe on two cards.", [cite]))])
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
    assert stored["title"] == "What do I owe on my credit cards?"
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
    assert alex.post(f"/api/chat/sessions/{session_id}/messages",
                     json={"message": "hi"}).status_code == 404
    assert alex.get("/api/chat/sessions").json() == {"sessions": []}


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"{not json", {"content-type": "application/json"}, 400),
        (b"[1, 2]", {"content-type": "application/json"}, 400),
        (b'{"message": 7}', {"content-type": "application/json"}, 400),
        (b'{"message": "   "}', {"content-type": "application/json"}, 400),
        (json.dumps({"message": "x" * 9000}).encode(), {"content-type": "application/json"}, 400),
        (json.dumps({"message": "x" * 100_000}).encode(), {"content-type": "application/json"}, 413),
    ],
    ids=["malformed", "not-an-object", "not-a-string", "blank", "too-long", "oversize-body"],
)
def test_bad_requests_get_clear_errors(
    app: Flask, demo: ApiClient, body: bytes, headers: dict[str, str], status: int
) -> None:
    session_id = demo.new_session()
    response = demo.http.post(f"/api/chat/sessions/{session_id}/messages", content=body,
                              headers=headers)
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
        for question in ("What do I owe on my credit cards?", "What are my holdings?",
                         "What is my checking balance?"):
            demo.stream(demo.ask(session_id, question)["stream_url"])
    records = [r.getMessage() for r in caplog.records]
    assert any("[Citations]" in r for r in records)
    assert not [r for r in records if any(i in r for i in ids)]
