"""What a turn's requests ask of PostgreSQL, in round trips: counted on the wire (libpq's
trace), so that a read folded away or a `BEGIN` left out shows here, never as a time."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from tests.support.apps import api_client, idle_after
from tests.support.round_trips import round_trips
from webapp.chat.tables import chat_sessions
from webapp.store.app_db import get_engine
from webapp.store.engine import autocommit, create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.writes import write, write_one

pytestmark = pytest.mark.postgres

QUESTION = "Can I deduct charitable donations?"


def test_asking_costs_the_request_eleven_round_trips(pg_app: Flask) -> None:
    # The chat's row (1), its history (1), and the question, its answer and first checkpoint
    # stored in one transaction (BEGIN, the user's lock, the two rows, the chat's time and
    # title, its other titles, the new title, the count of running answers, the checkpoint,
    # COMMIT: 9). Before: 24, each read inside BEGIN ... ROLLBACK, the running answer read
    # before the store refused it, the checkpoint deleted before it was first written.
    demo = api_client(pg_app, "demo")
    with idle_after(pg_app):  # the token's lookup and the service's first look, once
        demo.ask(demo.new_session(), QUESTION)
    session_id = demo.new_session()
    with idle_after(pg_app), round_trips(get_engine(pg_app)) as trips:
        demo.ask(session_id, QUESTION)
    assert trips.count <= 11, trips.sent


def test_streaming_a_finished_answer_costs_seven_round_trips(pg_app: Flask) -> None:
    # The answer's row (1), the stream counted (BEGIN, the user's lock, the count and the
    # stream's row in one INSERT, COMMIT: 4), its events (1), the stream forgotten (1).
    # Before: 14.
    demo = api_client(pg_app, "demo")
    session_id = demo.new_session()
    with idle_after(pg_app):
        url = demo.ask(session_id, QUESTION)["stream_url"]
    with round_trips(get_engine(pg_app)) as trips:
        events = demo.stream(url)
    assert events[-1].event == "done"
    assert trips.count <= 7, trips.sent


def test_a_statement_on_its_own_is_one_round_trip(pg_url: str) -> None:
    engine = create_store_engine(pg_url)
    try:
        query = sa.select(sa.func.count()).select_from(chat_sessions)
        upgrade_database(engine)
        with round_trips(engine) as read, autocommit(engine) as conn:
            conn.execute(query).scalar()
        update = chat_sessions.update().where(chat_sessions.c.id == "none").values(title="x")
        with round_trips(engine) as one:
            assert write_one(engine, update) == 0
        with round_trips(engine) as transaction:
            write(engine, lambda conn: conn.execute(update))
    finally:
        engine.dispose()
    assert (read.count, one.count) == (1, 1), (read.sent, one.sent)
    assert transaction.count == 3  # BEGIN, the statement, COMMIT


def test_rows_inserted_together_go_as_one_insert_statement(pg_url: str) -> None:
    engine = create_store_engine(pg_url)
    table = sa.table("round_trip_rows", sa.column("n", sa.Integer))
    seen: list[tuple[str, bool]] = []

    def note(_c: Any, _cur: Any, statement: str, _p: Any, _ctx: Any, many: bool) -> None:
        seen.append((statement, many))

    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TEMPORARY TABLE round_trip_rows (n integer)"))
            sa.event.listen(engine, "before_cursor_execute", note)
            conn.execute(table.insert(), [{"n": 1}, {"n": 2}, {"n": 3}])
            assert conn.execute(sa.text("SELECT count(*) FROM round_trip_rows")).scalar() == 3
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)
        engine.dispose()
    (insert, _many), _count = seen
    # Not psycopg's executemany (a Bind and an Execute per row): one INSERT ... VALUES
    # (...), (...), (...), as SQLAlchemy's "insertmanyvalues" writes it.
    assert insert.count("(%(") == 3, insert
