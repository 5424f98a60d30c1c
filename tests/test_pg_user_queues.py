"""A user's lock-taking writes queue in the process, not in the connection pool."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest
from flask import Flask
from sqlalchemy.engine import make_url

from tests.support.waiting import wait_for
from webapp import create_app
from webapp.chat.queues import UserQueues
from webapp.services import chat_service
from webapp.store.app_db import close_engine, get_engine
from webapp.store.demo import seed_demo
from webapp.store.migrate import upgrade_database
from webapp.store.users import create_api_token, user_for_token


@pytest.fixture(scope="module")
def pg_app(pg_url: str) -> Iterator[Flask]:
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": pg_url, "ANTHROPIC_API_KEY": None}
    )
    upgrade_database(get_engine(app))
    seed_demo(get_engine(app), "demo")
    yield app
    close_engine(app)


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
    with psycopg.connect(conninfo) as other:
        other.execute("SELECT 1 FROM users WHERE id = %s FOR UPDATE", (user.id,))
        threads = [
            threading.Thread(target=lambda: opened.append(service.open_stream(user.id)))
            for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        wait_for(lambda: service.user_queues.waiting() == 1 and engine.pool.checkedout() >= 1)
        wait_for(lambda: _blocked_on_locks(other) == 1, "one waiter at the database")
        assert engine.pool.checkedout() == 1
        other.rollback()
    for thread in threads:
        thread.join(10)
    assert len(opened) == 3 and all(opened)
    assert service.user_queues.waiting() == 0
    for stream in opened:
        assert stream is not None
        service.close_stream(stream)


def _blocked_on_locks(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE wait_event_type = 'Lock' AND datname = current_database()"
    ).fetchone()
    return int(row[0]) if row else 0


def test_a_users_queue_is_dropped_once_nobody_holds_or_waits_for_it() -> None:
    queues = UserQueues()
    with queues.turn(1):
        with queues.turn(2):
            assert queues.waiting() == 2
    assert queues.waiting() == 0
