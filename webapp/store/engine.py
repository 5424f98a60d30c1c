"""One SQLAlchemy engine per database URL: SQLite by default, PostgreSQL through psycopg 3."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, make_url

from .schema import USER_FUNCTION, USER_SETTING

# The user the views show on this thread's SQLite connections (see `user_scope`).
_scoped_user: ContextVar[int | None] = ContextVar("webapp_store_scoped_user", default=None)


POOL_SIZE = 10
POOL_OVERFLOW = 20
POOL_TIMEOUT = 30
SQLITE_BUSY_SECONDS = 0.2
# The SQLite file holds Plaid access tokens: readable and writable by the app's user alone.
SQLITE_FILE_MODE = 0o600

_log = logging.getLogger(__name__)


class DatabaseURLError(ValueError):
    """The configured DATABASE_URL names no database this app can use."""


def normalize_url(url: str) -> str:
    """Return `url` with PostgreSQL pointed at psycopg 3; reject any other backend."""
    try:
        parsed = make_url(url)
    except sa.exc.ArgumentError as exc:
        raise DatabaseURLError("DATABASE_URL is not a database URL") from exc
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    elif backend != "sqlite":
        raise DatabaseURLError("DATABASE_URL must be a sqlite:// or postgresql:// URL")
    return parsed.render_as_string(hide_password=False)


def sqlite_file(engine: Engine) -> str | None:
    """Return the path of the engine's SQLite file, or None for memory or PostgreSQL."""
    if engine.dialect.name != "sqlite":
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return database


def _current_user_id() -> int | None:
    return _scoped_user.get()


def _on_sqlite_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    # The views filter on this function; outside `user_scope` it is NULL and they show nothing.
    # Not marked deterministic: its value changes between runs of one cached statement.
    dbapi_connection.create_function(USER_FUNCTION, 0, _current_user_id)
    path = _file_of(dbapi_connection)
    if path is not None:
        # Before WAL mode makes the -wal and -shm: SQLite gives them the main file's mode.
        narrow_sqlite_files(path)
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys = ON")
        # WAL lets the chat stream read while a turn writes; a no-op for in-memory databases.
        # NORMAL syncs at WAL checkpoints, not at every commit: a power cut may lose the last
        # few commits (never corrupt the file); a crashed process loses nothing.
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
    finally:
        cursor.close()


def _file_of(dbapi_connection: sqlite3.Connection) -> str | None:
    """Return the path of the connection's main database file, or None for memory."""
    for _seq, name, path in dbapi_connection.execute("PRAGMA database_list"):
        if name == "main":
            return str(path) or None
    return None


def narrow_sqlite_files(path: str) -> None:
    """Make the database file and its -wal and -shm readable by their owner only.

    By path alone (stat and chmod): the file is never opened outside SQLite, because closing
    any descriptor of it would drop every POSIX lock this process's SQLite connections hold
    on it (https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
    """
    for name in (path, f"{path}-wal", f"{path}-shm"):
        try:
            if stat.S_IMODE(os.stat(name).st_mode) & ~SQLITE_FILE_MODE:
                os.chmod(name, SQLITE_FILE_MODE)
        except FileNotFoundError:
            continue
        except PermissionError:
            _log.warning("could not make %s readable by its owner only", name)


def _on_sqlite_do_connect(
    dialect: Any, record: object, cargs: list[object], cparams: dict[str, object]
) -> sqlite3.Connection | None:
    # A file SQLite is about to create is created owner-only, through the umask: there is no
    # moment at which it is readable by others. The umask is the process's, so it is narrowed
    # only for the open that creates the file (once per database), not for every connection.
    database = cargs[0] if cargs else cparams.get("database")
    if (
        not isinstance(database, str)
        or not database
        or database == ":memory:"
        or database.startswith("file:")
        or os.path.lexists(database)
    ):
        return None  # SQLAlchemy connects as usual; `_on_sqlite_connect` narrows the mode
    previous = os.umask(0o077)
    try:
        connection: sqlite3.Connection = dialect.connect(*cargs, **cparams)
    finally:
        os.umask(previous)
    return connection


def create_store_engine(url: str) -> Engine:
    """Create the engine for `url`, with the per-connection set-up each backend needs."""
    normalized = normalize_url(url)
    # Bound values are chat events and citation targets (account ids): an error's text, which
    # reaches the logs, must never quote them.
    # Connections are held only for one statement or one short transaction, by turn runners
    # and stream readers alike (greenlets under gevent), so a modest pool serves thousands
    # of open streams; a burst waits for a connection rather than opening hundreds.
    options: dict[str, Any] = {"hide_parameters": True}
    database = make_url(normalized).database
    if not normalized.startswith("sqlite") or (database and database != ":memory:"):
        options |= {
            "pool_size": POOL_SIZE,
            "max_overflow": POOL_OVERFLOW,
            "pool_timeout": POOL_TIMEOUT,
        }
    if normalized.startswith("sqlite"):
        # Writers hold the file for one short transaction. The driver waits briefly, in C (which
        # blocks a gevent worker's loop); past that, `store.writes.write` retries with sleeps
        # that let other greenlets run.
        options["connect_args"] = {"timeout": SQLITE_BUSY_SECONDS}
    engine = sa.create_engine(normalized, **options)
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "do_connect", _on_sqlite_do_connect)
        sa.event.listen(engine, "connect", _on_sqlite_connect)
    else:
        # Several rows in one INSERT ... VALUES statement, as SQLAlchemy does for psycopg2,
        # rather than psycopg 3's `executemany` (a Bind and an Execute per row in a pipeline):
        # one statement for the server to run for a question and its answer, or a turn's
        # batch of events.
        engine.dialect.use_insertmanyvalues_wo_returning = True
        _ping_when_idle(engine)
    return engine


@contextmanager
def autocommit(engine: Engine) -> Iterator[Connection]:
    """Yield a connection on which each statement is its own transaction.

    For a read or a write of one statement: on PostgreSQL it is then one round trip, not
    three (psycopg's `BEGIN`, the statement, and the pool's `ROLLBACK` or a `COMMIT`). Never
    for work that needs two statements to agree, nor with `user_scope` (its setting lasts
    one transaction). SQLite, whose `BEGIN` costs no round trip, is left as it is.
    """
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        yield connection


# A pooled connection idle this long is pinged before use. `pool_pre_ping` pings on every
# checkout, and PostgreSQL counts each ping as a transaction of its own (`xact_commit`): one
# more per read. A connection that breaks within this time fails its statement instead,
# which invalidates the pool; writes retry (`store.writes.write`).
PING_IDLE_SECONDS = 10.0

# Set while a write that retries a dropped connection checks one out (`unpinged`): it needs
# no ping, which would double a quiet turn's lease renewal (issue 21's idle answer).
_retried: ContextVar[bool] = ContextVar("webapp_store_write_retries", default=False)


@contextmanager
def unpinged() -> Iterator[None]:
    """Check connections out without the idle ping, for a caller that retries a dead one."""
    token = _retried.set(True)
    try:
        yield
    finally:
        _retried.reset(token)


def _ping_when_idle(engine: Engine) -> None:
    def checkin(_dbapi: object, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    def checkout(dbapi: Any, record: Any, _proxy: object) -> None:
        idle_since = record.info.pop("idle_since", None)
        if idle_since is None or time.monotonic() - idle_since < PING_IDLE_SECONDS:
            return
        if _retried.get():
            return  # its first statement finds a dead connection, and the write tries again
        try:
            engine.dialect.do_ping(dbapi)
        except Exception as exc:  # as `pool_pre_ping` does: the pool connects afresh
            raise sa.exc.DisconnectionError() from exc

    sa.event.listen(engine.pool, "checkin", checkin)
    sa.event.listen(engine.pool, "checkout", checkout)


def _set_pg_user(connection: Connection, value: str) -> None:
    connection.execute(
        sa.text("SELECT set_config(:name, :value, true)"), {"name": USER_SETTING, "value": value}
    )


@contextmanager
def user_scope(connection: Connection, user_id: int) -> Iterator[Connection]:
    """Let the views on `connection` show `user_id`'s rows until the block ends."""
    if connection.dialect.name == "postgresql":
        # Transaction-local, so it cannot outlive the caller's transaction even on error.
        _set_pg_user(connection, str(int(user_id)))
        yield connection
        _set_pg_user(connection, "")
        return
    token = _scoped_user.set(int(user_id))
    try:
        yield connection
    finally:
        _scoped_user.reset(token)
