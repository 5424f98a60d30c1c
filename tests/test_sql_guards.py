"""The checks made on the model's SQL before it runs: SQLite's token rules and pglast's AST walk."""

from __future__ import annotations

import pytest

from webapp.tools.sql.pg_guard import check_postgres_query
from webapp.tools.sql.result import QueryRejected
from webapp.tools.sql.sqlite_lex import check_sqlite_query, fold_name, tokens

RESERVED = frozenset({"plaid_items", "plaid_accounts", "users", "account_details"})


@pytest.mark.parametrize(
    ("sql", "ctes"),
    [
        ("SELECT * FROM account_details", set()),
        ("  \n\tselect 1", set()),
        ("/* lead */ -- line\nSELECT 1", set()),
        ("VALUES (1), (2)", set()),
        ("WITH x AS (SELECT 1) SELECT * FROM x", {"x"}),
        ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r", {"r"}),
        ('WITH "My CTE" AS MATERIALIZED (SELECT 1) SELECT 1', {"my cte"}),
        ("WITH a AS NOT MATERIALIZED (SELECT 1), b(x) AS (SELECT 2) SELECT 1", {"a", "b"}),
        ("SELECT * FROM account_details AS a", set()),
        ("SELECT 'account_details AS (' FROM account_details", set()),
        ("SELECT 1 -- WITH account_details AS (", set()),
    ],
    ids=[
        "plain",
        "whitespace",
        "comments-first",
        "values",
        "cte",
        "recursive",
        "quoted-cte",
        "materialized",
        "alias-is-not-a-cte",
        "inside-a-string",
        "inside-a-comment",
    ],
)
def test_sqlite_queries_pass_and_name_their_ctes(sql: str, ctes: set[str]) -> None:
    assert check_sqlite_query(sql, RESERVED) == ctes


@pytest.mark.parametrize(
    "sql",
    [
        "",
        "   ",
        "-- only a comment",
        "DELETE FROM holdings",
        "/* SELECT */ DROP TABLE users",
        "PRAGMA table_info(users)",
        "ATTACH 'x.db' AS x",
        "VACUUM INTO '/tmp/x'",
        "EXPLAIN SELECT 1",
        "REPLACE INTO users VALUES (1)",
        "BEGIN",
        "(SELECT 1)",
        '"SELECT" 1',
        "[select] 1",
        "WITH account_details AS (SELECT * FROM plaid_accounts) SELECT * FROM account_details",
        'WITH "ACCOUNT_DETAILS" AS (SELECT 1) SELECT 1',
        "WITH [Account_Details] AS (SELECT 1) SELECT 1",
        "WITH `account_details`(a) AS MATERIALIZED (SELECT 1) SELECT 1",
        "WITH 'account_details' AS (SELECT 1) SELECT 1",
        "WITH x AS (SELECT 1), plaid_items AS (SELECT 2) SELECT 1",
        "WITH /* c */ holding_details /* c */ AS /* c */ (SELECT 1) SELECT 1",
        "WITH sqlite_master AS (SELECT 1) SELECT 1",
        "SELECT 1 FROM account_details WINDOW users AS (ORDER BY 1)",
    ],
    ids=[
        "empty",
        "blank",
        "comment-only",
        "delete",
        "comment-hides-drop",
        "pragma",
        "attach",
        "vacuum-into",
        "explain",
        "replace",
        "begin",
        "parenthesised",
        "quoted-select",
        "bracketed-select",
        "cte-shadows-view",
        "cte-upper-quoted",
        "cte-bracketed",
        "cte-backticked-materialized",
        "cte-string-name",
        "second-cte-shadows-table",
        "comments-around-cte",
        "cte-named-sqlite",
        "window-named-like-a-table",
    ],
)
def test_sqlite_rejections(sql: str) -> None:
    with pytest.raises(QueryRejected):
        check_sqlite_query(sql, RESERVED)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "a 'it''s' \"q\"\"x\" [b c] `d`",
            [
                ("word", "a"),
                ("quoted", "it's"),
                ("quoted", 'q"x'),
                ("quoted", "b c"),
                ("quoted", "d"),
            ],
        ),
        ("x/*unterminated", [("word", "x")]),
        ("ÄB $x", [("word", "Äb"), ("other", "$"), ("word", "x")]),
        ("a\u00a0b", [("word", "a\u00a0b")]),
    ],
    ids=["quotes", "open-comment", "ascii-only-folding", "nbsp-is-not-space"],
)
def test_sqlite_tokens_follow_sqlite(sql: str, expected: list[tuple[str, str]]) -> None:
    assert list(tokens(sql)) == expected


def test_names_fold_like_sqlite() -> None:
    assert fold_name("Account_DETAILS") == "account_details"
    assert fold_name("ÉCOLE") == "École"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM account_details",
        "select sum(current_balance) from public.account_details where account_type = 'credit'",
        "WITH x AS (SELECT * FROM holding_details) SELECT ticker, sum(market_value) FROM x GROUP BY 1",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
        "SELECT a.account_name FROM account_details a JOIN holding_details h USING (source_account_id)",
        "SELECT extract(year FROM now()), date_trunc('month', now()), round(1.234, 2)",
        "SELECT account_name FROM account_details WHERE account_name ILIKE '%card%' LIMIT 5;",
        "SELECT rank() OVER (ORDER BY current_balance DESC), coalesce(official_name, '') "
        "FROM account_details",
        "TABLE account_details",
        "VALUES (1, 'a')",
        "WITH plaid_items AS (SELECT 1 AS n) SELECT n FROM plaid_items",
    ],
    ids=[
        "star",
        "schema-public",
        "cte",
        "recursive",
        "join",
        "date-functions",
        "trailing-semicolon",
        "window",
        "table-statement",
        "values",
        "cte-shadowing-is-its-own-name",
    ],
)
def test_postgres_queries_pass(sql: str) -> None:
    assert isinstance(check_postgres_query(sql), str)


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT * FROM plaid_items", "cannot be queried"),
        ("SELECT * FROM account_details UNION SELECT * FROM plaid_accounts", "cannot be queried"),
        ("SELECT * FROM pg_catalog.pg_class", "cannot be queried"),
        ("SELECT * FROM information_schema.tables", "cannot be queried"),
        ("SELECT * FROM other.account_details", "cannot be queried"),
        ("SELECT (SELECT count(*) FROM users)", "cannot be queried"),
        ("WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a", "cannot be queried"),
        (
            "SELECT * FROM account_details, LATERAL (SELECT * FROM api_tokens) t",
            "cannot be queried",
        ),
        ("SELECT set_config('webapp.user_id', '2', true)", "set_config"),
        ("SELECT pg_catalog.set_config('role', 'postgres', true)", "set_config"),
        ("SELECT query_to_xml('select * from plaid_items', true, false, '')", "query_to_xml"),
        ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
        ("SELECT pg_sleep(10)", "pg_sleep"),
        ("SELECT current_setting('webapp.user_id')", "current_setting"),
        ('SELECT "SUM"(1)', "SUM"),
        ("SELECT myschema.sum(1)", "myschema.sum"),
        ("SELECT * FROM generate_series(1, 10)", "generate_series"),
        ("SELECT 1; SELECT 2", "exactly one"),
        ("SELECT 1; DELETE FROM holdings", "exactly one"),
        ("DELETE FROM holdings", "only SELECT"),
        ("SET ROLE postgres", "only SELECT"),
        ("RESET ROLE", "only SELECT"),
        ("SET webapp.user_id = 2", "only SELECT"),
        ("COPY (SELECT 1) TO PROGRAM 'id'", "only SELECT"),
        ("EXPLAIN SELECT * FROM account_details", "only SELECT"),
        ("WITH d AS (DELETE FROM holdings RETURNING *) SELECT * FROM d", "only SELECT"),
        ("SELECT * INTO copy FROM account_details", "SELECT INTO"),
        ("SELECT * FROM account_details FOR UPDATE", "row locks"),
        ("SELEC 1", "syntax error"),
    ],
    ids=[
        "base-table",
        "union-base-table",
        "pg-catalog",
        "information-schema",
        "other-schema",
        "subquery",
        "cte-scope",
        "lateral",
        "set-config",
        "set-role-function",
        "query-to-xml",
        "read-file",
        "sleep",
        "current-setting",
        "quoted-upper-name",
        "other-schema-function",
        "generate-series",
        "two-selects",
        "select-then-delete",
        "delete",
        "set-role",
        "reset-role",
        "set-user",
        "copy-program",
        "explain",
        "writing-cte",
        "select-into",
        "for-update",
        "syntax",
    ],
)
def test_postgres_rejections(sql: str, reason: str) -> None:
    with pytest.raises(QueryRejected, match=reason):
        check_postgres_query(sql)


@pytest.mark.parametrize(
    ("sql", "statement"),
    [
        ("SELECT 1", "SELECT 1"),
        ("SELECT 1;", "SELECT 1"),
        ("SELECT 'é€' AS x ;  -- done", "SELECT 'é€' AS x "),
        ("-- first\nSELECT 1 -- last", "SELECT 1 -- last"),
        ("SELECT ';' AS s;;", "SELECT ';' AS s"),
    ],
    ids=["bare", "semicolon", "non-ascii-then-comment", "comments", "semicolon-in-string"],
)
def test_postgres_check_returns_the_statement_alone(sql: str, statement: str) -> None:
    # The query service reads the statement inside its own query: no `;` may come with it.
    assert check_postgres_query(sql) == statement
