"""A user's lock-taking writes queue in the process, not in the connection pool."""

from __future__ import annotations

import threading
from datetime import timedelta

import psycopg
import psycopg.rows
import pytest
from flask import Flask
from sqlalchemy.engine import make_url
from sqlalchemy.pool import QueuePool

from tests.support.waiting import wait_for
from webapp.chat.open_streams import open_streams, worker_seen
from webapp.chat.queues import Batched, UserQueues
from webapp.services import chat_service
from webapp.store.app_db import get_engine
from webapp.store.users import create_api_token, user_for_token


@pytest.mark.postgres
def test_a_users_streams_wait_for_their_row_lock_on_one_connection(
    pg_app: Flask, pg_url: str
) -> None:
    # Another process holds the user's row. Three of the user's streams are opened here at
    # once: one waits on the database's lock with a pooled connection, the others in the
    # process with none (before: each held a connection while it waited).
    with pg_app.app_context():
        engine, service = get_engine(pg_app), chat_service(pg_app)
        user = user_for_token(engine, create_api_token(engine, "demo"))
        assert user is not None
    conninfo = make_url(pg_url).set(drivername="postgresql").render_as_string(False)
    opened: list[str | None] = []
    with psycopg.connect(conninfo, row_factory=psycopg.rows.tuple_row) as other:
        other.execute("SELECT 1 FROM users WHERE id = %s FOR UPDATE", (user.id,))
        threads = [
            threading.Thread(target=lambda: opened.append(service.open_stream(user.id)))
            for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        pool = engine.pool
        assert isinstance(pool, QueuePool)
        wait_for(lambda: service.user_queues.waiting() == 1 and pool.checkedout() >= 1)
        wait_for(lambda: _blocked_on_locks(other) == 1, "one waiter at the database")
        assert pool.checkedout() == 1
        other.rollback()
    for thread in threads:
        thread.join(10)
    assert len(opened) == 3 and all(opened)
    assert service.user_queues.waiting() == 0
    for stream in opened:
        assert stream is not None
        service.close_stream(stream)


def _blocked_on_locks(conn: psycopg.Connection[tuple[int]]) -> int:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE wait_event_type = 'Lock' AND datname = current_database()"
    ).fetchone()
    return int(row[0]) if row else 0


def test_a_users_queue_is_dropped_once_nobody_holds_or_waits_for_it() -> None:
    queues = UserQueues()
    with queues.turn(1), queues.turn(2):
        assert queues.waiting() == 2
    assert queues.waiting() == 0


def test_a_users_requests_that_queued_together_are_served_by_one_write() -> None:
    queues = UserQueues()
    served: list[int] = []

    def serve(user_id: int, wanted: int) -> list[str | None]:
        served.append(wanted)
        return [f"{user_id}-{n}" if n < 2 else None for n in range(wanted)]

    batched: Batched[str] = Batched(queues, serve)
    got: list[str | None] = []
    with queues.turn(7):  # the user's queue is busy: three requests wait behind it
        threads = [threading.Thread(target=lambda: got.append(batched.get(7))) for _ in range(3)]
        for thread in threads:
            thread.start()
        wait_for(lambda: batched.waiting(7) == 3)
    for thread in threads:
        thread.join(10)
    assert served == [3]
    assert sorted(got, key=str) == ["7-0", "7-1", None]


def test_requests_that_come_while_the_first_gathers_are_served_with_it() -> None:
    served: list[int] = []
    gathering, more_came = threading.Event(), threading.Event()

    def gather() -> None:  # as a yield to the other requests already accepted
        gathering.set()
        more_came.wait(10)

    def serve(user_id: int, wanted: int) -> list[str | None]:
        served.append(wanted)
        return ["ok"] * wanted

    batched: Batched[str] = Batched(UserQueues(), serve, gather)
    first = threading.Thread(target=batched.get, args=(7,))
    first.start()
    wait_for(gathering.is_set)
    others = [threading.Thread(target=batched.get, args=(7,)) for _ in range(2)]
    for thread in others:
        thread.start()
    wait_for(lambda: batched.waiting(7) == 3)
    more_came.set()
    for thread in [first, *others]:
        thread.join(10)
    assert served == [3]  # the first request did not go alone


def test_streams_counted_together_stop_at_the_cap(app: Flask) -> None:
    with app.app_context():
        engine = get_engine(app)
        user = user_for_token(engine, create_api_token(engine, "demo"))
        assert user is not None
        first = open_streams(engine, user.id, "w", 3, 2, timedelta(seconds=60))
        second = open_streams(engine, user.id, "w", 3, 2, timedelta(seconds=60))
    assert all(first) and second[0] is not None and second[1] is None


@pytest.mark.postgres
def test_streams_counted_at_once_by_many_workers_stop_at_the_cap(pg_app: Flask) -> None:
    # Each "worker" counts its streams in one statement (revision 0013), from a thread and a
    # pooled connection of its own: together they pass the cap by none.
    with pg_app.app_context():
        engine = get_engine(pg_app)
        user = user_for_token(engine, create_api_token(engine, "demo"))
        assert user is not None
    for n in range(8):
        worker_seen(engine, f"w{n}")  # alive: their streams count
    lease, start = timedelta(seconds=60), threading.Barrier(8)
    granted: list[str | None] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        start.wait(10)
        got = open_streams(engine, user.id, f"w{n}", 10, 3, lease)
        with lock:
            granted.extend(got)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(granted) == 24
    assert sum(1 for stream in granted if stream is not None) == 10
