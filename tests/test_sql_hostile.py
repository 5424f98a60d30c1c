"""Hostile SQL: every route we know of to another user's rows, the secrets, files or writes.

Runs on SQLite always and on PostgreSQL when reachable. Each attack must come back as an
error with no rows, the data must be unchanged afterwards, and across every query (benign
or hostile, for either user) no clerk_id, Plaid item id or access token may appear.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa

from webapp.store.accounts import list_accounts
from webapp.store.schema import metadata
from webapp.tools.sql.result import SqlResult
from webapp.tools.sql.service import run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

SECRETS_QUERY = (
    "SELECT clerk_id FROM users UNION ALL SELECT item_id FROM plaid_items "
    "UNION ALL SELECT access_token FROM plaid_items UNION ALL SELECT clerk_id FROM plaid_items"
)

# Attacks that must fail on either backend.
BOTH = {
    "base-table": "SELECT * FROM plaid_items",
    "base-secret-column": "SELECT access_token FROM plaid_items",
    "users-table": "SELECT clerk_id FROM users",
    "tokens-table": "SELECT * FROM api_tokens",
    "base-accounts-all-users": "SELECT * FROM plaid_accounts",
    "union-base": "SELECT source_account_id, account_name FROM account_details "
    "UNION SELECT item_id, access_token FROM plaid_items",
    "union-all-users": "SELECT account_name FROM account_details UNION ALL "
    "SELECT name FROM plaid_accounts",
    "subquery-base": "SELECT (SELECT access_token FROM plaid_items LIMIT 1) FROM account_details",
    "exists-base": "SELECT * FROM account_details WHERE EXISTS "
    "(SELECT 1 FROM users WHERE clerk_id LIKE 'user_%')",
    "count-base": "SELECT count(*) FROM plaid_accounts",
    "cte-over-base": "WITH x AS (SELECT * FROM plaid_accounts) SELECT * FROM x",
    "cte-shadows-view": "WITH account_details AS (SELECT name AS account_name FROM plaid_accounts)"
    " SELECT * FROM account_details",
    "cte-shadows-view-quoted": 'WITH "Account_Details" AS (SELECT * FROM plaid_accounts) '
    'SELECT * FROM "Account_Details"',
    "cte-shadows-holdings": "WITH holding_details(ticker) AS MATERIALIZED "
    "(SELECT ticker FROM holdings) SELECT * FROM holding_details",
    "case-tricks": "sElEcT * FrOm PlAiD_iTeMs",
    "quoted-name": 'SELECT * FROM "plaid_items"',
    "comment-in-name": "SELECT * FROM/**/plaid_items",
    "comment-hides-write": "/* SELECT */ DELETE FROM holdings",
    "line-comment-then-write": "-- just a comment\nDROP TABLE users",
    "trailing-write": "SELECT * FROM account_details; DELETE FROM holdings",
    "trailing-write-comment": "SELECT 1;DROP TABLE users --",
    "two-selects": "SELECT 1; SELECT 2",
    "insert": "INSERT INTO plaid_items (user_id, item_id, access_token, clerk_id, "
    "institution_name) VALUES (1, 'x', 'y', 'z', 'w')",
    "insert-view": "INSERT INTO account_details (account_name) VALUES ('x')",
    "update": "UPDATE plaid_accounts SET user_id = 1",
    "delete": "DELETE FROM holdings",
    "create-table": "CREATE TABLE stolen AS SELECT * FROM plaid_items",
    "create-view": "CREATE VIEW v AS SELECT * FROM plaid_items",
    "create-temp": "CREATE TEMP TABLE t (a int)",
    "drop-table": "DROP TABLE users",
    "drop-view": "DROP VIEW account_details",
    "alter": "ALTER TABLE users ADD COLUMN x int",
    "vacuum": "VACUUM",
    "begin": "BEGIN",
    "with-delete": "WITH x AS (SELECT 1) DELETE FROM holdings",
    "explain": "EXPLAIN SELECT * FROM account_details",
}
SQLITE_ONLY = {
    "sqlite-master": "SELECT sql FROM sqlite_master",
    "sqlite-schema": "SELECT name FROM sqlite_schema",
    "sqlite-master-count": "SELECT count(*) FROM sqlite_master",
    "main-qualified": "SELECT * FROM main.plaid_items",
    "bracket-quoted": "SELECT * FROM [plaid_items]",
    "string-cte-name": "WITH 'account_details' AS (SELECT * FROM plaid_accounts) "
    "SELECT * FROM account_details",
    "cte-named-like-table": "WITH plaid_items AS (SELECT 1) SELECT count(*) FROM main.plaid_items",
    "attach": "ATTACH DATABASE '{tmp}/attached.db' AS stolen",
    "attach-in-select": "SELECT * FROM account_details; ATTACH '{tmp}/attached.db' AS x",
    "detach": "DETACH DATABASE main",
    "vacuum-into": "VACUUM INTO '{tmp}/copy.db'",
    "pragma": "PRAGMA table_info(plaid_items)",
    "pragma-write": "PRAGMA query_only = 0",
    "pragma-function": "SELECT * FROM pragma_table_info('plaid_items')",
    "pragma-database-list": "SELECT * FROM pragma_database_list",
    "load-extension": "SELECT load_extension('/tmp/evil')",
    "readfile": "SELECT readfile('/etc/passwd')",
    "writefile": "SELECT writefile('{tmp}/out.txt', 'x')",
    "edit": "SELECT edit('x', 'vi')",
    "fts3-tokenizer": "SELECT fts3_tokenizer('simple')",
    "randomblob": "SELECT randomblob(900000000)",
    "zeroblob": "SELECT zeroblob(900000000)",
    "direct-user-function": "SELECT current_user_id()",
    "sqlite-version": "SELECT sqlite_version()",
    "json-each": "SELECT * FROM json_each('[1]')",
    "replace": "REPLACE INTO users (id, username, password_hash, clerk_id) "
    "VALUES (1, 'demo', 'x', 'y')",
    "reindex": "REINDEX",
    "analyze": "ANALYZE",
    "savepoint": "SAVEPOINT s",
}
POSTGRES_ONLY = {
    "pg-class": "SELECT relname FROM pg_class",
    "pg-catalog-qualified": "SELECT * FROM pg_catalog.pg_tables",
    "pg-policies": "SELECT * FROM pg_policies",
    "pg-stats": "SELECT * FROM pg_stats",
    "information-schema": "SELECT table_name FROM information_schema.tables",
    "public-qualified": "SELECT * FROM public.plaid_items",
    "set-config-user": "SELECT set_config('webapp.user_id', '{alex}', true), * "
    "FROM account_details",
    "set-config-role": "SELECT set_config('role', 'postgres', true)",
    "query-to-xml": "SELECT query_to_xml('SELECT * FROM plaid_items', true, false, '')",
    "table-to-xml": "SELECT table_to_xml('plaid_items', true, false, '')",
    "read-file": "SELECT pg_read_file('/etc/passwd')",
    "ls-dir": "SELECT pg_ls_dir('.')",
    "current-setting": "SELECT current_setting('webapp.user_id')",
    "sleep": "SELECT pg_sleep(5)",
    "set-role": "SET ROLE postgres",
    "reset-role": "RESET ROLE",
    "set-user": "SET webapp.user_id = '{alex}'",
    "set-session-authorization": "SET SESSION AUTHORIZATION postgres",
    "copy-program": "COPY (SELECT 1) TO PROGRAM 'id'",
    "select-into": "SELECT * INTO stolen FROM account_details",
    "for-update": "SELECT * FROM account_details FOR UPDATE",
    "writing-cte": "WITH d AS (DELETE FROM holdings RETURNING *) SELECT * FROM d",
    "lock": "LOCK TABLE users",
    "do-block": "DO $$ BEGIN PERFORM 1; END $$",
    "notify": "SELECT pg_notify('x', 'y')",
    "nextval": "SELECT nextval('users_id_seq')",
    "dollar-quoted-two": "SELECT $x$; DELETE FROM holdings; $x$; DELETE FROM holdings",
    "prepare": "PREPARE p AS SELECT * FROM plaid_items",
    "table-statement": "TABLE plaid_items",
    "rows-from-function": "SELECT * FROM ROWS FROM (set_config('webapp.user_id', '{alex}', true))",
    "version": "SELECT version()",
}
BENIGN = [
    "SELECT * FROM account_details",
    "SELECT * FROM holding_details",
    "SELECT * FROM public_holding_details",
    "SELECT source, source_account_id, account_name FROM account_details ORDER BY 3",
    "SELECT a.*, h.* FROM account_details a LEFT JOIN holding_details h "
    "ON a.source_account_id = h.source_account_id",
    "SELECT account_type, sum(current_balance) AS total FROM account_details GROUP BY 1",
    "WITH x AS (SELECT * FROM account_details) SELECT count(*) AS n FROM x",
]


def _snapshot(backend: SqlBackend) -> dict[str, list[str]]:
    with backend.engine.connect() as connection:
        return {
            table.name: sorted(repr(tuple(row)) for row in connection.execute(sa.select(table)))
            for table in metadata.sorted_tables
        }


def _secrets(backend: SqlBackend) -> set[str]:
    with backend.engine.connect() as connection:
        found = set(connection.execute(sa.text(SECRETS_QUERY)).scalars())
    assert len(found) >= 2 + 5 + 5  # two users' clerk ids; five items' ids and tokens
    return found


def _run(backend: SqlBackend, username: str, query: str, **options: float) -> SqlResult:
    return run_sql(backend.engine, backend.users[username].id, query, **options)  # type: ignore[arg-type]


def _attack(backend: SqlBackend, tmp: Path, query: str) -> None:
    query = query.replace("{tmp}", str(tmp)).replace("{alex}", str(backend.users["alex"].id))
    before = _snapshot(backend)
    result = _run(backend, "demo", query, timeout=1.0)
    assert result.error, f"the attack ran: {result.rows[:3]}"
    assert result.rows == () and result.columns == ()
    assert "Traceback" not in result.error
    for secret in _secrets(backend):
        assert secret not in result.error
    assert list(tmp.iterdir()) == []  # no file was attached, copied or written
    assert _snapshot(backend) == before


@pytest.mark.parametrize("query", list(BOTH.values()), ids=list(BOTH))
def test_attacks_fail_cleanly(sql_backend: SqlBackend, tmp_path: Path, query: str) -> None:
    _attack(sql_backend, tmp_path, query)


@pytest.mark.parametrize("query", list(SQLITE_ONLY.values()), ids=list(SQLITE_ONLY))
def test_sqlite_attacks_fail_cleanly(
    sqlite_backend: SqlBackend, tmp_path: Path, query: str
) -> None:
    _attack(sqlite_backend, tmp_path, query)


@pytest.mark.postgres
@pytest.mark.parametrize("query", list(POSTGRES_ONLY.values()), ids=list(POSTGRES_ONLY))
def test_postgres_attacks_fail_cleanly(
    postgres_backend: SqlBackend, tmp_path: Path, query: str
) -> None:
    _attack(postgres_backend, tmp_path, query)


def test_no_secret_appears_in_any_result(sql_backend: SqlBackend, tmp_path: Path) -> None:
    secrets = _secrets(sql_backend)
    extra = SQLITE_ONLY if sql_backend.name == "sqlite" else POSTGRES_ONLY
    alex = str(sql_backend.users["alex"].id)
    queries = [
        *BENIGN,
        *(
            q.replace("{tmp}", str(tmp_path)).replace("{alex}", alex)
            for q in (*BOTH.values(), *extra.values())
        ),
    ]
    for username in ("demo", "alex"):
        for query in queries:
            result = _run(sql_backend, username, query, timeout=1.0)
            shown = json.dumps([result.columns, result.rows, result.error])
            assert not any(secret in shown for secret in secrets), query
    assert all(_run(sql_backend, "demo", query).rows for query in BENIGN)


@pytest.mark.parametrize(("viewer", "owner"), [("demo", "alex"), ("alex", "demo")])
def test_no_route_shows_another_users_accounts(
    sql_backend: SqlBackend, viewer: str, owner: str
) -> None:
    theirs = list_accounts(sql_backend.engine, sql_backend.users[owner].id)
    their_ids = {str(a["source_account_id"]) for a in theirs if a["source_account_id"]}
    their_id = sorted(their_ids)[0]
    probes = [
        *BENIGN,
        f"SELECT * FROM account_details WHERE source_account_id = '{their_id}'",
        f"SELECT * FROM holding_details WHERE source_account_id IN ('{their_id}') OR 1 = 1",
        "SELECT * FROM account_details WHERE account_name = 'Credit card' OR 'x' = 'x'",
    ]
    for query in probes:
        result = _run(sql_backend, viewer, query)
        assert result.error is None, result.error
        shown = json.dumps(result.rows)
        assert not any(account_id in shown for account_id in their_ids), query


def test_a_recursive_cte_bomb_is_stopped_by_the_deadline(sql_backend: SqlBackend) -> None:
    result = _run(
        sql_backend,
        "demo",
        "WITH RECURSIVE bomb(n) AS (SELECT 1 UNION ALL "
        "SELECT n + 1 FROM bomb WHERE n < 1000000000) SELECT max(n) FROM bomb",
        timeout=0.5,
    )
    assert result.error is not None and "stopped" in result.error


@pytest.mark.parametrize(
    "query",
    [
        "WITH RECURSIVE s(n, v) AS (SELECT 1, 'xxxxxxxx' UNION ALL "
        "SELECT n + 1, v || v FROM s WHERE n < 40) SELECT max(length(v)) AS size, max(v) AS v FROM s",
        "SELECT replace(replace(replace('xxxxxxxxxx', 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), "
        "'x', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')",
    ],
    ids=["doubling-string", "replace-blowup"],
)
def test_values_cannot_grow_without_bound(sql_backend: SqlBackend, query: str) -> None:
    result = _run(sql_backend, "demo", query, timeout=1.0)
    # Stopped by SQLite's length limit or by the deadline; never a multi-megabyte value.
    assert result.error is not None or len(json.dumps(result.rows)) < 1_100_000
    if result.error is not None:
        assert "size limit" in result.error or "stopped" in result.error


def test_a_huge_cartesian_product_is_capped(sql_backend: SqlBackend) -> None:
    result = _run(
        sql_backend,
        "demo",
        "SELECT a.account_name, b.account_name AS b, c.account_name AS c "
        "FROM account_details a, account_details b, account_details c, account_details d, "
        "account_details e, account_details f, account_details g, account_details h",
        max_rows=50,
        timeout=60.0,  # room: only the row cap may end it
    )
    assert result.error is None
    assert len(result.rows) == 50 and result.truncated
