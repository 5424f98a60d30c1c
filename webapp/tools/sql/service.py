"""`run_sql`: the query service behind the `execute_sql` tool. It never raises."""

from __future__ import annotations

import logging

from sqlalchemy.engine import Engine

from webapp.store.engine import sqlite_file

from ..offload import offload
from .postgres import run_postgres
from .result import DEFAULT_MAX_BYTES, QueryRejected, SqlResult
from .sqlite import run_sqlite

MAX_QUERY_LENGTH = 20_000
MAX_ROWS_LIMIT = 10_000
MIN_MAX_BYTES = 1024
DEFAULT_TIMEOUT = 2.0

_log = logging.getLogger(__name__)


def _input_error(user_id: object, query: object) -> str | None:
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        return "no user is signed in."
    if not isinstance(query, str) or not query.strip():
        return "the query is empty; send one SELECT statement."
    if len(query) > MAX_QUERY_LENGTH:
        return f"the query is longer than {MAX_QUERY_LENGTH} characters."
    if "\x00" in query:
        return "the query contains a NUL character."
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        return "the query is not valid text."
    return None


def run_sql(
    engine: Engine,
    user_id: int,
    query: str,
    *,
    max_rows: int = 200,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> SqlResult:
    """Run the model's `query` read-only over `user_id`'s rows of the views; never raise.

    At most `max_rows` rows and about `max_bytes` of text are read: values past their
    share are cut as they are read, and reading stops once the bytes are spent.
    """
    problem = _input_error(user_id, query)
    if problem is not None:
        return SqlResult.failed(problem)
    rows = max(1, min(int(max_rows), MAX_ROWS_LIMIT))
    size = max(MIN_MAX_BYTES, int(max_bytes))
    try:
        if engine.dialect.name == "postgresql":
            return run_postgres(
                engine, user_id, query, max_rows=rows, timeout=timeout, max_bytes=size
            )
        database = sqlite_file(engine)
        if database is None:
            return SqlResult.failed("the query service needs a database file or PostgreSQL.")
        # SQLite runs in C without yielding: off the event loop under gevent.
        return offload(
            run_sqlite, database, user_id, query, max_rows=rows, timeout=timeout, max_bytes=size
        )
    except QueryRejected as exc:
        return SqlResult.failed(str(exc))
    except Exception as exc:  # the tool must answer, whatever went wrong underneath
        # Only the kind of failure: the query and its values may name the user's accounts.
        _log.warning("execute_sql failed: %s", type(exc).__name__)
        return SqlResult.failed("the query could not be run.")
