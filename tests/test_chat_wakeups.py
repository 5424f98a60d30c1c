"""Readers are woken by writes, never by polling: in-process, and across processes through
SQLite's data_version, PostgreSQL's LISTEN/NOTIFY or Redis pub/sub."""

from __future__ import annotations

import json
import queue
import socket
import threading
from collections.abc import Callable, Generator, Iterator
from datetime import timedelta
from typing import cast

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from webapp.chat import event_log, leases
from webapp.chat.conversations import create_session
from webapp.chat.notes import StoredEvent
from webapp.chat.wakeups import Listener, PostgresListener, RedisListener, SqlitePoller, Wakeups
from webapp.services import chat_service
from webapp.store.app_db import get_engine
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import authenticate

LEASE = timedelta(minutes=5)
WAIT = 10.0  # generous: only a missing wake-up takes this long


def running_answer(engine: Engine) -> tuple[int, str, str]:
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    session_id = create_session(engine, user.id).id
    _, message_id = leases.start_message(engine, user.id, session_id, "Hi", LEASE, "writer")
    return user.id, session_id, message_id


def packet(seq: int) -> StoredEvent:
    return StoredEvent(
        seq, "packet", json.dumps({"obj": {"type": "message_delta", "content": f"w{seq} "}})
    )


def test_a_wake_reaches_only_the_readers_of_that_message() -> None:
    wakeups = Wakeups()
    with wakeups.watch("a") as a1, wakeups.watch("a") as a2, wakeups.watch("b") as b:
        wakeups.wake("a")
        assert a1.is_set() and a2.is_set() and not b.is_set()
    assert wakeups.watched() == []


def test_an_idle_reader_makes_no_queries_until_a_write_wakes_it(app: Flask) -> None:
    engine = get_engine(app)
    user_id, session_id, message_id = running_answer(engine)
    service = chat_service(app)
    queries: list[str] = []
    seen: queue.Queue[StoredEvent | None] = queue.Queue()

    def count(*args: object) -> None:
        queries.append(str(args[2]))

    def read() -> None:
        for event in service.events(user_id, session_id, message_id):
            seen.put(event)
            if event is not None and event.event == "done":
                return

    sa.event.listen(engine, "before_cursor_execute", count)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        # Its first look: what is there, and whether the answer still runs; then it sleeps.
        for _ in range(200):
            if len(queries) >= 2:
                break
            reader.join(0.05)
        settled = len(queries)
        reader.join(0.5)  # quiet for a while: a polling reader would query meanwhile
        assert len(queries) == settled and seen.empty()
        event_log.append_events(engine, message_id, "writer", LEASE, [packet(1)])
        written = len(queries)
        service.announce(message_id)
        woke = seen.get(timeout=WAIT)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert woke is not None and woke.seq == 1
    assert len(queries) - written == 1  # one read of what is new, and nothing more


@pytest.fixture
def sqlite_file_engine(app: Flask) -> Engine:
    return get_engine(app)


def wait_for_wake(
    listener: Listener, wakeups: Wakeups, message_id: str, write: threading.Event
) -> Iterator[bool]:
    stop = threading.Event()
    thread = threading.Thread(target=listener.run, args=(wakeups, stop), daemon=True)
    with wakeups.watch(message_id) as flag:
        thread.start()
        try:
            flag.wait(WAIT)  # the listener's first (re)connect wakes everyone once
            flag.clear()
            write.set()
            yield flag.wait(WAIT)
        finally:
            stop.set()
            thread.join(WAIT)


def after(write: threading.Event, action: Callable[[], None]) -> threading.Thread:
    """A writer that acts once `write` is set: once the reader is waiting."""

    def run() -> None:
        write.wait(WAIT)
        action()

    return threading.Thread(target=run, daemon=True)


def test_sqlite_readers_hear_another_connections_write(sqlite_file_engine: Engine) -> None:
    engine = sqlite_file_engine
    _, _, message_id = running_answer(engine)
    other = create_store_engine(engine.url.render_as_string(hide_password=False))
    write = threading.Event()
    wakeups = Wakeups()
    outcome = wait_for_wake(SqlitePoller(engine), wakeups, message_id, write)
    writer = after(
        write, lambda: event_log.append_events(other, message_id, "writer", LEASE, [packet(1)])
    )
    writer.start()
    assert next(outcome)
    other.dispose()


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Engine]:
    engine = create_store_engine(pg_url)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    yield engine
    engine.dispose()


@pytest.mark.postgres
def test_postgresql_readers_hear_a_commit_through_notify(pg_engine: Engine) -> None:
    _, _, message_id = running_answer(pg_engine)
    write = threading.Event()
    outcome = wait_for_wake(PostgresListener(pg_engine), Wakeups(), message_id, write)
    writer = after(
        write, lambda: event_log.append_events(pg_engine, message_id, "writer", LEASE, [packet(1)])
    )
    writer.start()
    assert next(outcome)


def redis_reachable() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.mark.skipif(not redis_reachable(), reason="no Redis at 127.0.0.1:6379")
def test_redis_readers_hear_a_publish_from_another_host() -> None:
    url = "redis://127.0.0.1:6379/0"
    write = threading.Event()
    outcome = wait_for_wake(RedisListener(url), Wakeups(), "m-redis", write)
    writer = after(write, lambda: RedisListener(url).publish("m-redis"))
    writer.start()
    assert next(outcome)


def test_heartbeats_of_a_quiet_answer_cost_no_queries(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    from webapp.chat import reading

    monkeypatch.setattr(reading, "HEARTBEAT_SECONDS", 0.01)
    engine = get_engine(app)
    user_id, session_id, message_id = running_answer(engine)
    reader = cast(
        Generator[StoredEvent | None, None, None],
        chat_service(app).events(user_id, session_id, message_id),
    )
    assert next(reader) is None  # the first look is done, and the first heartbeat came
    queries: list[object] = []

    def count(*args: object) -> None:
        queries.append(args[2])

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        beats = [next(reader) for _ in range(20)]
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
        reader.close()
    assert beats == [None] * 20 and queries == []
