"""The SQLite file under the Procfile's gunicorn while the flask commands run beside it.

SQLite keeps its readers' and writers' places with POSIX advisory locks, and closing any
descriptor of the file drops every such lock the process holds on it ("How To Corrupt An
SQLite Database File", section 2.2: https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
A process that opens the file outside SQLite leaves its connections unlocked: another
process's last close then takes the database for its own, checkpoints and deletes the -wal
and -shm under them, and commits can be lost.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from httpx_sse import ServerSentEvent, connect_sse

from tests.support.gunicorn import BIN, Server, gunicorn
from webapp.store.engine import create_store_engine
from webapp.store.users import create_api_token

QUESTIONS = (
    "What is my Chase checking balance?",
    "What do I owe on my credit cards?",
    "What is my net worth?",
    "How much cash do I have?",
)
TURNS = 24


def _flask(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "flask"), "--app", "webapp", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _commands_until(stop: threading.Event, env: dict[str, str], failures: list[str]) -> int:
    """Run every flask command, over and over, until `stop`; return how many ran."""
    names = (f"cli-user-{n}" for n in itertools.count())
    ran = 0
    while not stop.is_set():
        for args in (
            ("init-db",),
            ("create-token", "demo"),
            ("create-user", next(names), "--password", "pw"),
            ("seed-demo",),
        ):
            done = _flask(env, *args)
            ran += 1
            if done.returncode != 0:
                failures.append(f"{args}: {done.stderr[-500:]}")
    return ran


def _turn(server: Server, token: str, question: str) -> tuple[str, list[ServerSentEvent]]:
    with httpx.Client(
        base_url=server.url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx.Timeout(30, read=120),
    ) as client:
        session_id = client.post("/api/chat/sessions", json={}).json()["id"]
        asked = client.post(f"/api/chat/sessions/{session_id}/messages", json={"message": question})
        assert asked.status_code == 202, asked.text
        with connect_sse(client, "GET", asked.json()["stream_url"]) as source:
            assert source.response.status_code == 200
            return str(asked.json()["message_id"]), list(source.iter_sse())


def _answer_text(events: list[ServerSentEvent]) -> str:
    message = next(e for e in events if e.event == "message")
    content = json.loads(message.data)["message"]["content"]
    return "".join(block.get("text", "") for block in content)


def test_flask_commands_beside_serving_lose_and_corrupt_nothing(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    url = f"sqlite:///{database}"
    env = {
        "DATABASE_URL": url,
        "SECRET_KEY": "test",
        "ANTHROPIC_API_KEY": "",
        "REDIS_URL": "",
        "MAX_TURNS_PER_USER": str(TURNS),
        "MAX_STREAMS_PER_USER": str(TURNS * 2),
        "MAX_NEW_CHATS_PER_MINUTE": str(TURNS * 4),  # each turn is a chat of its own
    }
    engine = create_store_engine(url)
    try:
        token = create_api_token(engine, "demo")
    finally:
        engine.dispose()
    stop = threading.Event()
    failures: list[str] = []
    with gunicorn(env, tmp_path) as server, ThreadPoolExecutor(8) as pool:
        # The first answers open each worker's connections; then the commands run beside more.
        first = list(pool.map(lambda q: _turn(server, token, q), QUESTIONS * 2))
        commands = pool.submit(_commands_until, stop, env, failures)
        try:
            rest = list(
                pool.map(
                    lambda q: _turn(server, token, q),
                    [QUESTIONS[i % len(QUESTIONS)] for i in range(TURNS)],
                )
            )
        finally:
            stop.set()
        ran = commands.result()
        after = [_turn(server, token, q) for q in QUESTIONS]
        log = server.log_text()
    turns = first + rest + after

    assert ran >= 4 and failures == []
    for _, events in turns:
        assert json.loads(events[-1].data) == {"status": "complete"}
        text = _answer_text(events)
        assert "$" in text and "couldn't" not in text, text
    assert "disk I/O error" not in log and "malformed" not in log

    with sqlite3.connect(database) as check:
        assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        for message_id, events in turns:
            stored = {
                seq
                for (seq,) in check.execute(
                    "SELECT seq FROM chat_events WHERE message_id = ?", (message_id,)
                )
            }
            assert {int(e.id) for e in events if e.id} <= stored, message_id
            status = check.execute(
                "SELECT status FROM ai_chat_logs WHERE id = ?", (message_id,)
            ).fetchone()
            assert status == ("complete",)
