"""Run the model's SQL on PostgreSQL: one read-only transaction, as the query role, for one user.

Layers: the pglast check (`pg_guard.py`); `SET TRANSACTION READ ONLY`; `SET LOCAL ROLE
webapp_query`, which may select the views and no table; row-level security on every base
table, keyed on the transaction-local `webapp.user_id`; a statement timeout over the whole
read; a server-side cursor, so no more than `max_rows + 1` rows ever leave the server.

PostgreSQL has no per-value size limit short of 1 GB, so the server cuts values before they
are sent: the checked statement is declared once to learn its columns, then read through a
query that keeps each value whole only while its text fits the column's share of
`max_bytes` and otherwise sends the start of its text instead (`_bounded`). Rows come in
small batches, and no batch is asked for once the bytes are spent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import cast

import psycopg
from psycopg import errors, sql
from sqlalchemy.engine import Engine

from webapp.store.schema import QUERY_ROLE, USER_SETTING

from .pg_guard import check_postgres_query
from .result import VIEWS_HINT, CutValue, SqlResult, read_rows, value_bytes

_CURSOR = "webapp_execute_sql"
_BATCH = 50


def _begin(connection: psycopg.Connection[object], user_id: int, timeout: float) -> None:
    """Open the read-only transaction, scoped to `user_id`, as the query role."""
    with connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION READ ONLY")
        _set_timeout(cursor, timeout)
        cursor.execute("SELECT set_config(%s, %s, true)", (USER_SETTING, str(user_id)))
        cursor.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(QUERY_ROLE)))


def _set_timeout(cursor: psycopg.Cursor[object], seconds: float) -> None:
    cursor.execute(
        sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(max(1, int(seconds * 1000))))
    )


def _message(exc: psycopg.Error, timeout: float) -> str:
    if isinstance(exc, errors.QueryCanceled):
        return _timed_out(timeout)
    if isinstance(exc, errors.InsufficientPrivilege):
        return f"that cannot be queried here; {VIEWS_HINT}."
    if isinstance(exc, errors.ProgramLimitExceeded | errors.OutOfMemory):
        return "a value in the query grew past the size limit."
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return "only reading is allowed: nothing can be created, changed or deleted."
    primary = exc.diag.message_primary if isinstance(exc, psycopg.DatabaseError) else None
    return primary or "the query could not be run."


def _timed_out(timeout: float) -> str:
    return f"the query ran longer than {timeout:g} s and was stopped; make it simpler."


class _Expired(Exception):
    """The whole read went past its deadline between two statements."""


def _bounded(statement: str, columns: int, limit: int) -> sql.Composed:
    """Return `statement` read so that no value's text is longer than `limit` characters.

    Column i comes back as itself when its text fits, else NULL; the last column is an
    array holding, for each cut value, the start of its text (NULL for the others).
    """
    names = [sql.Identifier(f"c{i}") for i in range(1, columns + 1)]
    fits, starts = [], []
    for name in names:
        text = sql.SQL("{}::text").format(sql.SQL("q.") + name)
        fits.append(
            sql.SQL("CASE WHEN octet_length({}) <= {} THEN {} END").format(
                text, sql.Literal(limit), sql.SQL("q.") + name
            )
        )
        starts.append(
            sql.SQL("CASE WHEN octet_length({}) > {} THEN left({}, {}) END").format(
                text, sql.Literal(limit), text, sql.Literal(limit)
            )
        )
    # The statement goes in whole, between line breaks: a closing `--` comment ends there.
    return sql.SQL("SELECT {}, ARRAY[{}]::text[] FROM (\n{}\n) AS q ({})").format(
        sql.SQL(", ").join(fits),
        sql.SQL(", ").join(starts),
        sql.SQL(statement),
        sql.SQL(", ").join(names),
    )


def _read(
    connection: psycopg.Connection[object],
    statement: str,
    *,
    max_rows: int,
    max_bytes: int,
    timeout: float,
) -> SqlResult:
    deadline = time.monotonic() + timeout

    def remaining() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Expired
        return left

    # Declaring plans the statement and names its columns; no row is made yet.
    with connection.cursor(name=_CURSOR) as cursor:
        cursor.execute(statement)
        names = [column.name for column in cursor.description or ()]
    if not names:
        return SqlResult.failed("the statement returned no columns; send a SELECT.")
    bounded = _bounded(statement, len(names), value_bytes(max_bytes, len(names)))
    with connection.cursor() as plain, connection.cursor(name=_CURSOR) as cursor:
        _set_timeout(plain, remaining())
        cursor.execute(bounded)

        def fetch(n: int) -> list[tuple[object, ...]]:
            # Each FETCH is a statement of its own: it gets what is left of the time.
            _set_timeout(plain, remaining())
            return [_unpack(row) for row in cursor.fetchmany(n)]

        return read_rows(names, fetch, max_rows=max_rows, max_bytes=max_bytes, batch=_BATCH)


def _unpack(row: object) -> tuple[object, ...]:
    *values, starts = cast("Sequence[object]", row)  # psycopg's default rows are tuples
    if not isinstance(starts, list):
        return tuple(values)
    return tuple(
        value if start is None else CutValue(str(start))
        for value, start in zip(values, starts, strict=True)
    )


def run_postgres(
    engine: Engine, user_id: int, query: str, *, max_rows: int, timeout: float, max_bytes: int
) -> SqlResult:
    """Run `query` for `user_id` on the engine's PostgreSQL database."""
    statement = check_postgres_query(query)
    pooled = engine.raw_connection()
    try:
        connection = pooled.driver_connection
        if not isinstance(connection, psycopg.Connection):
            return SqlResult.failed("the query service is not available.")
        connection.rollback()  # start from a clean transaction, whatever the pool handed over
        try:
            _begin(connection, user_id, timeout)
            return _read(
                connection, statement, max_rows=max_rows, max_bytes=max_bytes, timeout=timeout
            )
        except _Expired:
            return SqlResult.failed(_timed_out(timeout))
        except psycopg.Error as exc:
            return SqlResult.failed(_message(exc, timeout))
        finally:
            try:
                connection.rollback()
            except psycopg.Error:
                pooled.invalidate()
    finally:
        pooled.close()
