"""A write checks its connection out without the idle ping (PostgreSQL counts each ping as a
transaction): a quiet turn's lease renewal is one transaction, not two. A dropped connection
is still found, by the write's first statement, and the write lands on a new one. The same
for a one-statement write in autocommit (`write_one`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from webapp.store import engine as store_engine
from webapp.store.engine import create_store_engine
from webapp.store.writes import write, write_one

pytestmark = pytest.mark.postgres


def _admin(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture
def engine(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setattr(store_engine, "PING_IDLE_SECONDS", 0.0)  # every reuse is "idle"
    made = create_store_engine(pg_url)
    with made.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS probe"))
        conn.execute(sa.text("CREATE TABLE probe (x INTEGER)"))
    yield made
    made.dispose()


@pytest.fixture
def pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    seen: list[object] = []
    ping = engine.dialect.do_ping

    def counted(dbapi: Any) -> bool:
        seen.append(dbapi)
        return ping(dbapi)

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    return seen


def _insert(conn: sa.Connection) -> None:
    conn.execute(sa.text("INSERT INTO probe VALUES (1)"))


def _write(engine: Engine) -> None:
    write(engine, _insert)


def _write_one(engine: Engine) -> None:  # one statement, in autocommit on PostgreSQL
    write_one(engine, sa.text("INSERT INTO probe VALUES (1)"))


WRITERS = pytest.mark.parametrize("writes", [_write, _write_one], ids=["write", "write_one"])


@WRITERS
def test_a_read_pings_an_idle_connection_and_a_write_does_not(
    engine: Engine, pings: list[object], writes: Callable[[Engine], None]
) -> None:
    with engine.connect() as conn:
        conn.execute(sa.text("SELECT 1"))
    before = len(pings)
    with engine.connect() as conn:  # the same pooled connection, idle again
        conn.execute(sa.text("SELECT 1"))
    assert len(pings) == before + 1
    writes(engine)
    writes(engine)
    assert len(pings) == before + 1


def _xact_commit(admin: str, database: str) -> int:
    """The database's committed transactions, once every backend of it has exited."""
    with psycopg.connect(admin, autocommit=True) as conn:
        for _ in range(200):  # a closed backend reports its statistics as it exits
            (left,) = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
            ).fetchone() or (0,)
            if not left:
                break
            time.sleep(0.05)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (database,)
        ).fetchone()
    return int(row[0]) if row else 0


@WRITERS
def test_a_write_on_an_idle_connection_is_one_transaction(
    engine: Engine, pg_admin_url: str, pg_url: str, writes: Callable[[Engine], None]
) -> None:
    database, admin = str(make_url(pg_url).database), _admin(pg_admin_url)

    def counted(then_write: bool) -> int:
        engine.pool.dispose()
        before = _xact_commit(admin, database)
        with engine.connect() as conn:  # a new connection (its start is a transaction) ...
            conn.execute(sa.text("SELECT 1"))  # ... read (rolled back), then idle
        if then_write:
            writes(engine)
        engine.pool.dispose()
        return _xact_commit(admin, database) - before

    # The ping before the write would be one more (an autocommit statement): 2, not 1.
    assert counted(then_write=True) - counted(then_write=False) == 1


@WRITERS
def test_a_write_on_a_dropped_connection_lands_on_a_new_one(
    engine: Engine, pings: list[object], pg_admin_url: str, writes: Callable[[Engine], None]
) -> None:
    with engine.connect() as conn:
        pid = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar()
    before = len(pings)
    with psycopg.connect(_admin(pg_admin_url), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    writes(engine)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM probe")).scalar() == 1
    assert len(pings) == before + 1  # the last read's; none before the write
