"""A turn's life across workers and hosts, under the Procfile's gunicorn (issue 18, item 8).

Writes wait out a locked database; a cancel or a deadline met in one process ends the turn's
model stream and sandbox in the process that runs it; a dead worker's streams stop counting
when its lease lapses; a reload closes old workers' streams at once and hands their turns on
from the latest checkpoint.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import threading
from contextlib import ExitStack, closing
from datetime import UTC, timedelta
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from bs4 import BeautifulSoup
from httpx_sse import ServerSentEvent, connect_sse

from tests.support.fake_claude import FakeClaude, Paced, Reply, text_reply, tool_reply
from tests.support.gunicorn import Server, gunicorn
from tests.support.waiting import PATIENCE, wait_for
from tests.test_python_sandbox_serving import _launcher_of
from tests.test_serving import (
    _ask,
    _client,
    _env,
    _migrate,
    _sqlite,
    _stalling_reply,
    _token,
)
from webapp.chat import records
from webapp.chat.tables import chat_open_streams, chat_workers
from webapp.store.engine import create_store_engine
from webapp.tools.python import procs

LOCK_SECONDS = 1.5  # longer than SQLite's own busy wait, far shorter than a write's retries
PATIENCE_PINGS = int(PATIENCE) * 2  # a model that pings (one a second) longer than a test waits


def _signed_in(server: Server, username: str) -> httpx.Client:
    """Return a browser-like client signed in as `username` (password demo)."""
    client = httpx.Client(base_url=server.url, timeout=30)
    page = client.get("/login")
    token = BeautifulSoup(page.text, "html.parser").select_one('input[name="csrf_token"]')
    assert token is not None
    signed = client.post(
        "/login",
        data={"username": username, "password": "demo", "csrf_token": str(token["value"])},
    )
    assert signed.status_code in (302, 303), signed.text
    return client


def _csrf(client: httpx.Client, path: str) -> str:
    token = BeautifulSoup(client.get(path).text, "html.parser").select_one(
        'input[name="csrf_token"]'
    )
    assert token is not None
    return str(token["value"])


def test_new_chats_wait_out_a_write_lock_instead_of_failing(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    with (
        gunicorn(_env(url), tmp_path) as server,
        _client(server, _token(url)) as api,
        closing(_signed_in(server, "demo")) as demo,
        closing(_signed_in(server, "alex")) as alex,
    ):
        token = _csrf(alex, "/accounts")
        # Another program holds the file's write lock past SQLite's own short busy wait.
        blocker = sqlite3.connect(url.removeprefix("sqlite:///"), check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")
        release = threading.Timer(LOCK_SECONDS, blocker.rollback)
        release.start()
        try:
            created = api.post("/api/chat/sessions", json={})
            opened = demo.get("/")  # no chat yet: the page makes one
            new = alex.post("/chat", data={"csrf_token": token})
        finally:
            release.join()
            blocker.close()
        listed = api.get("/api/chat/sessions").json()["sessions"]
    assert created.status_code == 201, created.text
    assert opened.status_code == 302 and "/chat/" in opened.headers["location"]
    assert new.status_code in (302, 303) and "/chat/" in new.headers["location"]
    assert created.json()["id"] in {s["id"] for s in listed}
    assert "Traceback" not in server.log_text()


def _two_hosts(stack: ExitStack, env: dict[str, str], tmp_path: Path) -> tuple[Server, Server]:
    """Start two servers of one worker each on one database: two hosts, as far as a turn knows."""
    one = {**env, "WEB_CONCURRENCY": "1"}
    return (
        stack.enter_context(gunicorn(one, tmp_path, name="a")),
        stack.enter_context(gunicorn(one, tmp_path, name="b")),
    )


def _cancel(client: httpx.Client, session_id: str, stream_url: str) -> httpx.Response:
    message_id = stream_url.rsplit("/", 2)[-2]
    return client.post(f"/api/chat/sessions/{session_id}/messages/{message_id}/cancel")


def _status(client: httpx.Client, session_id: str) -> str:
    return str(client.get(f"/api/chat/sessions/{session_id}").json()["messages"][-1]["status"])


def _marker(name: str) -> str:
    return f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{name}'])\n"


# Starts a marked child, then, long before the call's own 10 s limit, another: a sandbox seen
# to start the second ran on after its turn was cancelled.
SANDBOX = (
    "import subprocess, sys, time\n"
    + _marker("sandbox-started")
    + "time.sleep(8)\n"
    + _marker("sandbox-still-running")
    + "time.sleep(60)\n"
)


def _marked(pids: set[int], marker: str) -> bool:
    for pid in pids:
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def test_a_cancel_met_by_another_host_ends_the_runners_sandbox_at_once(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    replies: list[Reply] = [
        tool_reply(("t1", "execute_python", {"code": SANDBOX})),
        text_reply(("Done.", [])),
    ]
    with FakeClaude(replies) as fake, ExitStack() as stack:
        env = _env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url)
        runner_host, other_host = _two_hosts(stack, env, tmp_path)
        token = _token(url)
        on_runner = stack.enter_context(_client(runner_host, token))
        on_other = stack.enter_context(_client(other_host, token))
        session_id, stream_url = _ask(on_runner)  # the turn runs where it was asked
        _, launcher = wait_for(lambda: _launcher_of(runner_host), "the sandbox never started")
        tree = {launcher}

        def seen(marker: str) -> bool:
            tree.update(procs.descendants(launcher))
            return _marked(tree, marker)

        wait_for(lambda: seen("sandbox-started"), "the sandboxed code never ran")
        cancelled = _cancel(on_other, session_id, stream_url)
        late: list[bool] = []

        def gone() -> bool:
            late.append(seen("sandbox-still-running"))
            return all(procs.real_uid(pid) is None for pid in tree)

        wait_for(gone, f"the sandbox outlived its cancelled turn: {tree}")
        status = _status(on_other, session_id)
    assert cancelled.status_code == 202, cancelled.text
    assert not any(late), "the sandbox ran on after the cancel"
    assert status == "cancelled"
    assert len(fake.requests) == 1  # nothing asked the model again for the cancelled turn


def test_a_cancel_met_by_another_host_ends_the_runners_model_stream_at_once(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    # A model that starts, then only pings: longer than any test waits.
    with FakeClaude([_stalling_reply(PATIENCE_PINGS)]) as fake, ExitStack() as stack:
        env = _env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url)
        runner_host, other_host = _two_hosts(stack, env, tmp_path)
        token = _token(url)
        on_runner = stack.enter_context(_client(runner_host, token))
        on_other = stack.enter_context(_client(other_host, token))
        session_id, stream_url = _ask(on_runner)
        wait_for(lambda: len(fake.requests) == 1, "the model was never asked")
        cancelled = _cancel(on_other, session_id, stream_url)
        wait_for(lambda: fake.abandoned == 1, "the cancelled turn's model stream stayed open")
        status = _status(on_other, session_id)
    assert cancelled.status_code == 202, cancelled.text
    assert status == "cancelled"
    assert len(fake.requests) == 1


def _stream_workers(url: str) -> set[str]:
    """Return the workers whose open streams are counted in the database."""
    engine = create_store_engine(url)
    try:
        with engine.connect() as conn:
            return {str(w) for w in conn.execute(sa.select(chat_open_streams.c.worker)).scalars()}
    finally:
        engine.dispose()


def _lapsed(url: str, workers: set[str], lease: timedelta) -> bool:
    """Tell whether none of `workers` has renewed its lease within `lease`."""
    engine = create_store_engine(url)
    try:
        with engine.connect() as conn:
            seen = conn.execute(
                sa.select(chat_workers.c.seen_at).where(chat_workers.c.id.in_(workers))
            ).scalars()
            cutoff = records.now() - lease
            return all(at.replace(tzinfo=at.tzinfo or UTC) < cutoff for at in seen)
    finally:
        engine.dispose()


def _stream_status(stack: ExitStack, server: Server, token: str, url: str) -> int:
    """Open a stream and return its status code; an open one stays open until the test ends."""
    host, port = server.url.removeprefix("http://").split(":")
    sock = stack.enter_context(closing(socket.create_connection((host, int(port)))))
    sock.sendall(
        f"GET {url} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    return int(sock.recv(4096).split(b" ", 2)[1])


def test_a_killed_workers_streams_stop_counting_when_its_lease_lapses(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    lease = timedelta(seconds=2)
    stalling = [_stalling_reply(PATIENCE_PINGS) for _ in range(3)]  # asked again after takeovers
    with FakeClaude(stalling) as fake, ExitStack() as stack:
        env = _env(
            url,
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=fake.url,
            TURN_LEASE_SECONDS=str(lease.total_seconds()),
            MAX_STREAMS_PER_USER="4",
        )
        server = stack.enter_context(gunicorn(env, tmp_path))
        token = _token(url)
        client = stack.enter_context(_client(server, token))
        _, stream_url = _ask(client)
        wait_for(lambda: len(fake.requests) == 1, "the model was never asked")
        with ExitStack() as first:
            opened = [_stream_status(first, server, token, stream_url) for _ in range(4)]
            held = _stream_workers(url)
            killed = server.workers()
            for worker in killed:  # every worker dies at once, as in an out-of-memory kill
                os.kill(worker, signal.SIGKILL)
        wait_for(
            lambda: len(set(server.workers()) - set(killed)) == 2, "gunicorn started no new workers"
        )
        wait_for(lambda: _lapsed(url, held, lease), "the killed workers' leases never lapsed")
        # The readers reconnect once the dead workers' leases have lapsed: each is let in.
        again = [_stream_status(stack, server, token, stream_url) for _ in range(4)]
    assert opened == [200] * 4 and held
    assert again == [200] * 4


@pytest.mark.postgres
def test_a_deadline_met_by_another_host_ends_the_runners_model_stream_at_once(
    tmp_path: Path, pg_url: str
) -> None:
    _migrate(pg_url)
    with FakeClaude([_stalling_reply(PATIENCE_PINGS)]) as fake, ExitStack() as stack:
        env = _env(
            pg_url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url, WEB_CONCURRENCY="1"
        )
        # Only the other host's sweeper holds turns to a short deadline: it is the one that
        # ends this turn, and the runner hears of it through PostgreSQL's notifications.
        runner_host = stack.enter_context(gunicorn(env, tmp_path, name="a"))
        stack.enter_context(gunicorn({**env, "TURN_DEADLINE_SECONDS": "3"}, tmp_path, name="b"))
        client = stack.enter_context(_client(runner_host, _token(pg_url)))
        session_id, _ = _ask(client)
        wait_for(lambda: _status(client, session_id) != "running", "the deadline never came")
        wait_for(lambda: fake.abandoned == 1, "the overdue turn's model stream stayed open")
        stored = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][-1]
    assert stored["status"] == "error" and "took too long" in stored["error"]
    assert len(fake.requests) == 1  # and nothing asked the model again for it


FINAL = "Your cards: $1,842.17 at American Express and $2,940.00 at Chase."
# About 15 s at 7 characters every 50 ms: the old worker could write all of it well within
# gunicorn's graceful timeout, were it let to.
SECOND_ROUND = "Looking at what your cards owe, one account after another. " * 30


def _text(events: list[ServerSentEvent]) -> str:
    return "".join(
        str(obj.get("content", ""))
        for e in events
        if e.event == "packet"
        and (obj := json.loads(e.data)["obj"])["type"] in ("message_start", "message_delta")
    )


def test_a_reload_ends_old_workers_streams_and_hands_turns_on_from_the_latest_checkpoint(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    query = {"query": "SELECT account_name, current_balance FROM account_details"}
    replies: list[Reply] = [
        tool_reply(("t1", "execute_sql", query)),
        Paced(text_reply((SECOND_ROUND, [])), 0.05),
        text_reply((FINAL, [])),
    ]
    with FakeClaude(replies) as fake, ExitStack() as stack:
        env = _env(
            url,
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=fake.url,
            WEB_CONCURRENCY="1",
            TURN_LEASE_SECONDS="300",  # only the old worker's hand-over lets another resume
        )
        server = stack.enter_context(gunicorn(env, tmp_path))
        client = stack.enter_context(_client(server, _token(url)))
        session_id, stream_url = _ask(client)
        before: list[ServerSentEvent] = []
        reloaded = False
        with connect_sse(client, "GET", stream_url) as source:
            for event in source.iter_sse():
                before.append(event)
                if not reloaded and event.event == "packet" and "message_delta" in event.data:
                    server.process.send_signal(signal.SIGHUP)  # as round two begins to stream
                    reloaded = True
        # The old worker's stream ended as the reload began, before the answer did.
        assert "done" not in [e.event for e in before], "the old worker wrote the answer out"
        resumed = wait_for(lambda: _resume(client, stream_url, before[-1].id))
        stored = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][-1]
    assert SECOND_ROUND.startswith(_text(before)) and _text(before) != SECOND_ROUND
    # The turn went on from its checkpoint after the tool round: the model was asked round
    # two again with the tool's result, not the question from the start.
    assert len(fake.requests) == 3
    assert fake.requests[2]["messages"] == fake.requests[1]["messages"]
    # The client resumed by Last-Event-ID: what the old worker wrote past the checkpoint is
    # withdrawn, and the answer goes on whole.
    assert resumed[0].event == "reset"
    assert _text(resumed) == FINAL
    assert resumed[-1].event == "done" and json.loads(resumed[-1].data) == {"status": "complete"}
    assert stored["status"] == "complete" and stored["content"] == FINAL
    assert "Traceback" not in server.log_text()


def _resume(client: httpx.Client, url: str, last_id: str) -> list[ServerSentEvent] | None:
    try:
        with connect_sse(client, "GET", url, headers={"Last-Event-ID": last_id}) as source:
            if source.response.status_code != 200:
                return None
            return list(source.iter_sse())
    except httpx.HTTPError:
        return None  # the server is between workers
