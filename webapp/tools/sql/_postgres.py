"""Run the model's SQL on PostgreSQL: one read-only transaction, as the query role, for one user.

Layers: the pglast check (`_pg_guard`); `SET TRANSACTION READ ONLY`; `SET LOCAL ROLE
webapp_query`, which may select the views and no table; row-level security on every base
table, keyed on the transaction-local `webapp.user_id`; a statement timeout; a server-side
cursor, so no more than `max_rows + 1` rows ever leave the server.
"""

from __future__ import annotations

import psycopg
from psycopg import errors, sql
from sqlalchemy.engine import Engine

from webapp.store import QUERY_ROLE, USER_SETTING

from ._pg_guard import check_postgres_query
from ._result import VIEWS_HINT, SqlResult, build_result

_CURSOR = "webapp_execute_sql"


def _begin(connection: psycopg.Connection[object], user_id: int, timeout: float) -> None:
    """Open the read-only transaction, scoped to `user_id`, as the query role."""
    with connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION READ ONLY")
        cursor.execute(
            sql.SQL("SET LOCAL statement_timeout = {}").format(
                sql.Literal(max(1, int(timeout * 1000)))
            )
        )
        cursor.execute("SELECT set_config(%s, %s, true)", (USER_SETTING, str(user_id)))
        cursor.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(QUERY_ROLE)))


def _message(exc: psycopg.Error, timeout: float) -> str:
    if isinstance(exc, errors.QueryCanceled):
        return f"the query ran longer than {timeout:g} s and was stopped; make it simpler."
    if isinstance(exc, errors.InsufficientPrivilege):
        return f"that cannot be queried here; {VIEWS_HINT}."
    if isinstance(exc, errors.ProgramLimitExceeded | errors.OutOfMemory):
        return "a value in the query grew past the size limit."
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return "only reading is allowed: nothing can be created, changed or deleted."
    primary = exc.diag.message_primary if isinstance(exc, psycopg.DatabaseError) else None
    return primary or "the query could not be run."


def run_postgres(
    engine: Engine, user_id: int, query: str, *, max_rows: int, timeout: float
) -> SqlResult:
    """Run `query` for `user_id` on the engine's PostgreSQL database."""
    check_postgres_query(query)
    pooled = engine.raw_connection()
    try:
        connection = pooled.driver_connection
        if not isinstance(connection, psycopg.Connection):
            return SqlResult.failed("the query service is not available.")
        connection.rollback()  # start from a clean transaction, whatever the pool handed over
        try:
            _begin(connection, user_id, timeout)
            with connection.cursor(name=_CURSOR) as cursor:
                cursor.execute(query)
                names = [column.name for column in cursor.description or ()]
                fetched = cursor.fetchmany(max_rows + 1)
            if not names:
                return SqlResult.failed("the statement returned no columns; send a SELECT.")
            return build_result(names, fetched, max_rows)
        except psycopg.Error as exc:
            return SqlResult.failed(_message(exc, timeout))
        finally:
            try:
                connection.rollback()
            except psycopg.Error:
                pooled.invalidate()
    finally:
        pooled.close()
