"""The app as production runs it: the Procfile's gunicorn (gevent workers), one or two hosts."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import threading
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from httpx_sse import ServerSentEvent, connect_sse

from tests.support.fake_claude import FakeClaude, Paced, Reply, text_reply
from tests.support.gunicorn import Server, gunicorn
from tests.support.waiting import wait_for
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import create_api_token

QUESTION = "What do I owe on my credit cards?"
T = TypeVar("T")


def _token(url: str, username: str = "demo") -> str:
    engine = create_store_engine(url)
    try:
        return create_api_token(engine, username)
    finally:
        engine.dispose()


def _sqlite(tmp_path: Path, template: Path) -> str:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(template, database)
    return f"sqlite:///{database}"


def _env(database_url: str, **more: str) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "SECRET_KEY": "test",
        "ANTHROPIC_API_KEY": "",
        "REDIS_URL": "",
        **more,
    }


def _client(server: Server, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx.Timeout(30, read=60),
    )


def _ask(client: httpx.Client, question: str = QUESTION) -> tuple[str, str]:
    session_id = client.post("/api/chat/sessions", json={}).json()["id"]
    response = client.post(f"/api/chat/sessions/{session_id}/messages", json={"message": question})
    assert response.status_code == 202, response.text
    return session_id, str(response.json()["stream_url"])


def _stream(client: httpx.Client, url: str) -> list[ServerSentEvent]:
    with connect_sse(client, "GET", url) as source:
        assert source.response.status_code == 200
        return list(source.iter_sse())


def _open_raw_stream(server: Server, token: str, url: str) -> socket.socket:
    """Open an SSE request and read its status line, holding the connection open."""
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(
        f"GET {url} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    head = sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 200"), head[:100]
    return sock


def _stalling_reply(seconds: int) -> Paced:
    """A model that starts its answer, then only pings for `seconds`."""
    events: list[dict[str, Any]] = text_reply(("Thinking", []))[:3]
    return Paced(events + [{"type": "ping"}] * seconds, 1.0)


def test_an_answer_streams_whole_under_the_procfile_server(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    with gunicorn(_env(url), tmp_path) as server, _client(server, _token(url)) as client:
        session_id, stream_url = _ask(client)
        events = _stream(client, stream_url)
        stored = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    names = [e.event for e in events]
    assert names[-1] == "done" and json.loads(events[-1].data) == {"status": "complete"}
    assert {"packet", "citation", "citations_summary", "message"} <= set(names)
    assert [int(e.id) for e in events] == sorted({int(e.id) for e in events})
    assert stored[-1]["status"] == "complete" and "$" in stored[-1]["content"]
    assert "Traceback" not in server.log_text()


def test_sign_in_page_answers_while_a_hundred_streams_wait(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    # 100 open streams are more than the old thread pools had threads (2 workers x 32).
    url = _sqlite(tmp_path, seeded_sqlite_template)
    with FakeClaude([_stalling_reply(40)]) as fake, ExitStack() as stack:
        server = stack.enter_context(
            gunicorn(
                _env(
                    url,
                    ANTHROPIC_API_KEY="test-key",
                    ANTHROPIC_BASE_URL=fake.url,
                    MAX_STREAMS_PER_USER="200",
                ),
                tmp_path,
            )
        )
        token = _token(url)
        client = stack.enter_context(_client(server, token))
        _, stream_url = _ask(client)
        sockets = [
            stack.enter_context(closing(_open_raw_stream(server, token, stream_url)))
            for _ in range(100)
        ]
        probes = [httpx.get(f"{server.url}/login", timeout=10) for _ in range(5)]
        assert len(sockets) == 100
    assert [p.status_code for p in probes] == [200] * 5


@pytest.mark.postgres
def test_a_turn_asked_on_one_host_streams_from_another(tmp_path: Path, pg_url: str) -> None:
    _migrate(pg_url)
    text = "You owe $4,782.07 across three cards, most of it on the Sapphire Preferred. " * 3
    reply = Paced(text_reply((text, [])), 0.02)
    with FakeClaude([reply]) as fake, ExitStack() as stack:
        env = _env(pg_url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url)
        host_a = stack.enter_context(gunicorn(env, tmp_path, name="a"))
        host_b = stack.enter_context(gunicorn(env, tmp_path, name="b"))
        token = _token(pg_url)
        on_a = stack.enter_context(_client(host_a, token))
        on_b = stack.enter_context(_client(host_b, token))
        session_id, stream_url = _ask(on_a)
        events = _stream(on_b, stream_url)
        stored = on_b.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    assert events[-1].event == "done"
    assert json.loads(events[-1].data) == {"status": "complete"}
    assert stored[-1]["content"] == text
    assert _streamed_text(events) == text


@pytest.mark.postgres
def test_a_killed_host_hands_its_running_turn_to_the_other(tmp_path: Path, pg_url: str) -> None:
    _migrate(pg_url)
    final = "Your cards: $1,842.17 at American Express, $2,940.00 at Chase and none at Citi."
    replies: list[Reply] = [_stalling_reply(60), text_reply((final, []))]
    with FakeClaude(replies) as fake, ExitStack() as stack:
        env = _env(
            pg_url,
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=fake.url,
            TURN_LEASE_SECONDS="2",
        )
        host_a = stack.enter_context(gunicorn(env, tmp_path, name="a"))
        host_b = stack.enter_context(gunicorn(env, tmp_path, name="b"))
        token = _token(pg_url)
        on_a = stack.enter_context(_client(host_a, token))
        on_b = stack.enter_context(_client(host_b, token))
        session_id, stream_url = _ask(on_a)
        events: list[ServerSentEvent] = []
        first_text = threading.Event()

        def read() -> None:
            with connect_sse(on_b, "GET", stream_url) as source:
                for event in source.iter_sse():
                    events.append(event)
                    if event.event == "packet" and "message_delta" in event.data:
                        first_text.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert first_text.wait(30), "host B never streamed host A's first words"
        host_a.kill()
        reader.join(60)
        stored = on_b.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    names = [e.event for e in events]
    assert "reset" in names, names
    after_reset = events[names.index("reset") + 1 :]
    assert _streamed_text(after_reset) == final
    assert names[-1] == "done" and json.loads(events[-1].data) == {"status": "complete"}
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[-1]["status"] == "complete" and stored[-1]["content"] == final
    assert len(fake.requests) == 2  # asked once by A, once by B from the checkpoint


def _migrate(url: str) -> None:
    engine = create_store_engine(url)
    try:
        upgrade_database(engine)
        seed_demo(engine, "demo")
    finally:
        engine.dispose()


def _streamed_text(events: list[ServerSentEvent]) -> str:
    parts: list[str] = []
    for event in events:
        if event.event != "packet":
            continue
        obj = json.loads(event.data).get("obj", {})
        if obj.get("type") in ("message_start", "message_delta"):
            parts.append(obj.get("content", ""))
    return "".join(parts)


@pytest.mark.parametrize("signal_name", ["SIGHUP", "SIGTERM"])
def test_a_deploy_mid_turn_with_no_reader_still_completes_the_answer(
    tmp_path: Path, seeded_sqlite_template: Path, signal_name: str
) -> None:
    # SIGHUP: gunicorn reloads its workers. SIGTERM: the server stops and a new one starts.
    url = _sqlite(tmp_path, seeded_sqlite_template)
    final = "Your cards: $1,842.17 at American Express and $2,940.00 at Chase."
    with FakeClaude([_stalling_reply(60), text_reply((final, []))]) as fake, ExitStack() as stack:
        # A lease far longer than the wait: only the exiting worker's hand-over can pass.
        env = _env(
            url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url, TURN_LEASE_SECONDS="300"
        )
        server = stack.enter_context(gunicorn(env, tmp_path, name="before"))
        token = _token(url)
        client = stack.enter_context(_client(server, token))
        session_id, _ = _ask(client)
        wait_for(lambda: len(fake.requests) == 1)  # the turn is running, nobody reads it
        if signal_name == "SIGHUP":
            server.process.send_signal(signal.SIGHUP)
            after = server
        else:
            server.stop()
            after = stack.enter_context(gunicorn(env, tmp_path, name="after"))
        with _client(after, token) as again:
            stored = wait_for(lambda: _finished(again, session_id))
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[-1]["status"] == "complete" and stored[-1]["content"] == final


def _finished(client: httpx.Client, session_id: str) -> list[dict[str, Any]] | None:
    try:
        messages: list[dict[str, Any]] = client.get(f"/api/chat/sessions/{session_id}").json()[
            "messages"
        ]
    except httpx.HTTPError:
        return None  # the server is between workers
    return messages if messages[-1]["status"] != "running" else None


def test_a_users_21st_open_stream_is_refused_across_both_workers(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    with FakeClaude([_stalling_reply(40), _stalling_reply(40)]) as fake, ExitStack() as stack:
        server = stack.enter_context(
            gunicorn(_env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url), tmp_path)
        )
        token, theirs = _token(url), _token(url, "alex")
        client = stack.enter_context(_client(server, token))
        _, stream_url = _ask(client)
        for _ in range(20):  # new connections: gunicorn spreads them over its two workers
            stack.enter_context(closing(_open_raw_stream(server, token, stream_url)))
        refused = httpx.get(
            f"{server.url}{stream_url}", timeout=10, headers={"Authorization": f"Bearer {token}"}
        )
        alex = stack.enter_context(_client(server, theirs))
        _, their_url = _ask(alex)
        allowed = _open_raw_stream(server, theirs, their_url)
        allowed.close()
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "5"
    assert "as many answers open" in refused.json()["error"]
