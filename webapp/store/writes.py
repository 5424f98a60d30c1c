"""The one way a write reaches the database: one transaction, tried again while it may pass.

A request's write, a turn's batch and a worker's heartbeat all go through `write`, so a
SQLite file locked for a moment by another process, or a PostgreSQL connection dropped by a
failover, delays the write instead of failing the request.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from .engine import autocommit, unpinged

# How long a write keeps retrying a locked database or a dropped connection before it gives up.
WRITE_RETRY_SECONDS = 10.0

T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """Tell whether a database error may pass if the same write is tried again.

    SQLite's lock held past the driver's short busy wait, a PostgreSQL connection that was
    dropped or terminated, a serialization failure or a deadlock: all of these are about
    timing, not about the write itself.
    """
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    text = str(exc.orig).lower()
    if "database is locked" in text or "database is busy" in text:
        return True
    sqlstate = getattr(exc.orig, "sqlstate", None) or ""
    return sqlstate[:2] in ("08", "57") or sqlstate in ("40001", "40P01")


def write(
    engine: Engine, work: Callable[[sa.Connection], T], *, budget: float = WRITE_RETRY_SECONDS
) -> T:
    """Run `work` in one transaction, trying again with backoff while the error is transient.

    The wait between tries is `time.sleep`, so under gevent a locked SQLite file or a
    reconnecting PostgreSQL pool lets every other greenlet run meanwhile.
    """

    def attempt() -> T:
        with engine.begin() as conn:
            return work(conn)

    return _retrying(attempt, budget)


def write_one(
    engine: Engine, statement: sa.Executable, *, budget: float = WRITE_RETRY_SECONDS
) -> int:
    """Run one statement as a transaction of its own, tried again as `write` tries; return
    how many rows it changed.

    On PostgreSQL it runs in autocommit (`engine.autocommit`): one round trip, where `write`
    takes three (`BEGIN`, the statement, `COMMIT`). A statement is atomic on its own.
    """

    def attempt() -> int:
        with autocommit(engine) as conn:
            result = conn.execute(statement)
            conn.commit()  # SQLite's; a no-op for the driver in autocommit
            return int(getattr(result, "rowcount", 0) or 0)

    return _retrying(attempt, budget)


def write_scalar(
    engine: Engine,
    statement: sa.Executable,
    values: dict[str, Any],
    *,
    budget: float = WRITE_RETRY_SECONDS,
) -> Any:
    """Run one statement that writes, with `values`, as a transaction of its own (as
    `write_one` does) and return the first column of its first row."""

    def attempt() -> Any:
        with autocommit(engine) as conn:
            value = conn.execute(statement, values).scalar()
            conn.commit()  # SQLite's; a no-op for the driver in autocommit
            return value

    return _retrying(attempt, budget)


def _retrying(attempt: Callable[[], T], budget: float) -> T:
    deadline = time.monotonic() + budget
    delay = 0.01
    while True:
        try:
            # No idle ping first: a dropped connection fails the first statement, which
            # invalidates the pool, and the write is tried again on a new connection. In
            # autocommit (`write_one`) that statement never ran, so trying it again is safe.
            with unpinged():
                return attempt()
        except sa.exc.DBAPIError as exc:
            if not is_transient(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 0.5)
