"""Run the model's SQL on SQLite: read-only, through the views, for one user, time-boxed.

Layers, each enough for most attacks and together for all we know of:
- a separate read-only connection (`mode=ro`, `PRAGMA query_only`), with small limits;
- `current_user_id()` on that connection returns only this user's id, and the views filter on it;
- an authorizer that allows SELECT, the allow-listed functions, reads of the views, and reads
  of exactly the base-table columns each view itself reads, through that view;
- the token checks in `sqlite_lex.py` (a query must start as one; no CTE may take the name of a
  table or view, so the authorizer can tell a CTE's rows from a table's);
- a progress handler that stops the query at a wall-clock deadline, a row cap, and a byte
  bound: rows are read one at a time, values cut to their share of it (`_result.read_rows`).
A view's name may be written in any case, as SQLite reads it; the authorizer names the view a
read goes through as the query spelled it, so that name is folded before it is compared.
"""

from __future__ import annotations

import re
import sqlite3
import time
from urllib.parse import quote

from webapp.store.schema import QUERY_VIEWS, USER_FUNCTION

from .allowed import SQLITE_FUNCTIONS
from .result import VIEWS_HINT, SqlResult, read_rows
from .sqlite_lex import check_sqlite_query, fold_name

_LIMITS = (
    (sqlite3.SQLITE_LIMIT_LENGTH, 1_000_000),  # no value (string or blob) past 1 MB
    (sqlite3.SQLITE_LIMIT_SQL_LENGTH, 100_000),
    (sqlite3.SQLITE_LIMIT_ATTACHED, 0),
    # Each result column may hold a 1 MB value; 100 columns bound one row to 100 MB
    # (SQLite's default, 2000, would allow 2 GB). The views have a dozen columns each.
    (sqlite3.SQLITE_LIMIT_COLUMN, 100),
)
_WRITES = {
    sqlite3.SQLITE_INSERT,
    sqlite3.SQLITE_UPDATE,
    sqlite3.SQLITE_DELETE,
    sqlite3.SQLITE_CREATE_TABLE,
    sqlite3.SQLITE_CREATE_VIEW,
    sqlite3.SQLITE_CREATE_INDEX,
    sqlite3.SQLITE_CREATE_TRIGGER,
    sqlite3.SQLITE_DROP_TABLE,
    sqlite3.SQLITE_DROP_VIEW,
    sqlite3.SQLITE_DROP_INDEX,
    sqlite3.SQLITE_DROP_TRIGGER,
    sqlite3.SQLITE_ALTER_TABLE,
    sqlite3.SQLITE_REINDEX,
    sqlite3.SQLITE_ANALYZE,
    sqlite3.SQLITE_CREATE_VTABLE,
    sqlite3.SQLITE_DROP_VTABLE,
    sqlite3.SQLITE_CREATE_TEMP_TABLE,
    sqlite3.SQLITE_CREATE_TEMP_VIEW,
}
_READ_ONLY = "only reading is allowed: nothing can be created, changed or deleted."
_PROGRESS_STEPS = 1000
_NO_SUCH_TABLE = re.compile(r"no such table: (?:\w+\.)?(.+)")

Read = tuple[str, str, str]  # (table, column, the view it is read through)


class _Guard:
    """The authorizer: remember why it refused, so the model gets a clear reason."""

    def __init__(self) -> None:
        self.view_reads: frozenset[Read] = frozenset()
        self.cte_names: frozenset[str] = frozenset()
        self.reason: str | None = None

    def _deny(self, reason: str) -> int:
        self.reason = self.reason or reason
        return sqlite3.SQLITE_DENY

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, _db: str | None, inner: str | None
    ) -> int:
        if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            return self._read(arg1 or "", arg2 or "", inner or "")
        if action == sqlite3.SQLITE_FUNCTION:
            name = (arg2 or "").lower()
            # The views call current_user_id(); the model's own SQL has no need to.
            if name in SQLITE_FUNCTIONS or (name == USER_FUNCTION and _view(inner)):
                return sqlite3.SQLITE_OK
            return self._deny(f'the function "{arg2}" is not available in these queries.')
        if action == sqlite3.SQLITE_PRAGMA:
            return self._deny("PRAGMA statements are not allowed.")
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return self._deny("ATTACH and DETACH are not allowed.")
        if arg1 in ("sqlite_master", "sqlite_temp_master"):
            return self._deny("the database schema cannot be read or changed here.")
        if action in _WRITES:
            return self._deny(_READ_ONLY)
        return self._deny("only SELECT statements can run here.")

    def _read(self, table: str, column: str, inner: str) -> int:
        if table in QUERY_VIEWS or (table, column, fold_name(inner)) in self.view_reads:
            return sqlite3.SQLITE_OK
        # A WITH query's own rows; no WITH query may take a real table's name (_sqlite_lex).
        if fold_name(table) in self.cte_names:
            return sqlite3.SQLITE_OK
        return self._deny(f'"{table}" cannot be queried here; {VIEWS_HINT}.')


def _view(inner: str | None) -> bool:
    """Tell whether `inner`, as the query spelled it, names one of the views."""
    return inner is not None and fold_name(inner) in QUERY_VIEWS


def _view_reads(connection: sqlite3.Connection) -> frozenset[Read]:
    """Return the base-table columns each view reads, as SQLite reports them, and through what."""
    seen: set[Read] = set()

    def record(action: int, arg1: str | None, arg2: str | None, _db: object, inner: object) -> int:
        if action == sqlite3.SQLITE_READ and isinstance(inner, str):
            seen.add((arg1 or "", arg2 or "", fold_name(inner)))
        return sqlite3.SQLITE_OK

    connection.set_authorizer(record)
    try:
        for view in QUERY_VIEWS:
            connection.execute(f"SELECT * FROM {view} LIMIT 0").fetchall()
    finally:
        connection.set_authorizer(None)
    return frozenset(read for read in seen if read[0] not in QUERY_VIEWS)


def _message(exc: Exception, guard: _Guard, timed_out: bool, timeout: float) -> str:
    if guard.reason is not None:
        return guard.reason
    text = str(exc)
    if timed_out or text == "interrupted":
        return f"the query ran longer than {timeout:g} s and was stopped; make it simpler."
    if "one statement at a time" in text:
        return "send exactly one SQL statement (no `;` between statements)."
    if "readonly database" in text or "query_only" in text:
        return _READ_ONLY
    if text == "incomplete input":
        return "syntax error: the query ends too early (incomplete input)."
    if "too big" in text:
        return "a value in the query grew past the size limit."
    missing = _NO_SUCH_TABLE.fullmatch(text)
    if missing:
        return f'"{missing.group(1)}" cannot be queried here; {VIEWS_HINT}.'
    return text


def _prepare(connection: sqlite3.Connection, user_id: int, query: str, guard: _Guard) -> None:
    connection.create_function(USER_FUNCTION, 0, lambda: user_id, deterministic=True)
    connection.execute("PRAGMA query_only = ON")
    for limit, value in _LIMITS:
        connection.setlimit(limit, value)
    schema = connection.execute("SELECT name FROM sqlite_master").fetchall()
    guard.cte_names = check_sqlite_query(query, {fold_name(name) for (name,) in schema})
    guard.view_reads = _view_reads(connection)
    connection.set_authorizer(guard)


def run_sqlite(
    database: str, user_id: int, query: str, *, max_rows: int, timeout: float, max_bytes: int
) -> SqlResult:
    """Run `query` for `user_id` on the SQLite file `database`."""
    check_sqlite_query(query, ())  # fail fast, before opening the file
    guard = _Guard()
    deadline = time.monotonic() + timeout
    connection: sqlite3.Connection | None = None
    try:
        connection = sqlite3.connect(f"file:{quote(database)}?mode=ro", uri=True, timeout=5)
        _prepare(connection, user_id, query, guard)
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
        cursor = connection.execute(query)
        names = [column[0] for column in cursor.description or ()]
        if not names:
            return SqlResult.failed("the statement returned no columns; send a SELECT.")
        return read_rows(names, cursor.fetchmany, max_rows=max_rows, max_bytes=max_bytes)
    except (sqlite3.Error, sqlite3.Warning) as exc:
        timed_out = time.monotonic() > deadline
        return SqlResult.failed(_message(exc, guard, timed_out, timeout))
    finally:
        if connection is not None:
            connection.close()
