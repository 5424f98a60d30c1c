"""`run_sql` reads within a byte bound on each backend, and view names match in any case.

Issue 10, item 1: one query made 200 search results of a megabyte each. The service now cuts
values as it reads them (PostgreSQL before they leave the server) and stops reading rows once
the bytes are spent, so what a tool call holds stays small, whatever the query asks for.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from webapp.tools.sql.result import MIN_VALUE_BYTES, CutValue, SqlResult, build_result, value_bytes
from webapp.tools.sql.service import run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

BUDGET = 16_384


def _run(backend: SqlBackend, query: str, **options: int) -> SqlResult:
    return run_sql(backend.engine, backend.users["demo"].id, query, **options)


def _rows_per_label(backend: SqlBackend, size: int, rows: int = 200) -> str:
    """The issue's query: `rows` rows, each its own account label and a `size`-byte value."""
    if backend.name == "sqlite":
        return (
            f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT {rows}) "
            f"SELECT printf('%d', x) AS account_name, printf('%.*c', {size}, 'x') AS a FROM c"
        )
    # PostgreSQL has no printf: the big value is doubled up in a second WITH query.
    doublings = (size - 1).bit_length()
    return (
        f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < {rows}), "
        f"s(n, v) AS (SELECT 0, 'x'::text UNION ALL SELECT n+1, v || v FROM s "
        f"WHERE n < {doublings}) "
        f"SELECT x::text AS account_name, (SELECT left(v, {size}) FROM s "
        f"WHERE n = {doublings}) AS a FROM c"
    )


def _text_bytes(result: SqlResult) -> int:
    return len(json.dumps(result.rows, ensure_ascii=False).encode())


def test_the_issue_query_reads_a_few_cut_rows_not_200_megabytes(sql_backend: SqlBackend) -> None:
    result = _run(sql_backend, _rows_per_label(sql_backend, 999_000))
    assert result.error is None, result.error
    # The default bound (256 KB): each 999,000-byte value is cut to its column's share.
    assert 1 <= len(result.rows) < 10
    assert result.truncated and result.cut
    assert _text_bytes(result) < 2 * 262_144
    value = str(result.rows[0]["a"])
    assert value.startswith("xxxx") and value.endswith("bytes]") and "cut" in value


@pytest.mark.parametrize("size", [100, 3000], ids=["small-values", "larger-values"])
def test_rows_stop_once_the_bytes_are_spent(sql_backend: SqlBackend, size: int) -> None:
    result = _run(sql_backend, _rows_per_label(sql_backend, size), max_bytes=BUDGET)
    assert result.error is None, result.error
    assert result.truncated and result.cut
    assert len(result.rows) < 200
    # Reading stops at the row that reaches the bound: never much past it.
    assert sum(len(str(v)) + 16 for row in result.rows for v in row.values()) >= BUDGET
    assert _text_bytes(result) < BUDGET + 2 * value_bytes(BUDGET, 2)


def test_a_result_within_the_bounds_is_whole(sql_backend: SqlBackend) -> None:
    result = _run(sql_backend, _rows_per_label(sql_backend, 50, rows=20), max_bytes=BUDGET)
    assert result.error is None, result.error
    assert len(result.rows) == 20 and not result.truncated and not result.cut
    assert all(row["a"] == "x" * 50 for row in result.rows)


def test_a_huge_value_is_cut_to_its_share(sql_backend: SqlBackend) -> None:
    # Four columns share the bytes: each value keeps a quarter, then says it was cut.
    query = _rows_per_label(sql_backend, 900_000, rows=1).replace(
        " AS a FROM c", " AS a, 1 AS b, 'short' AS d FROM c"
    )
    result = _run(sql_backend, query, max_bytes=BUDGET)
    assert result.error is None, result.error
    (row,) = result.rows
    share = value_bytes(BUDGET, 4)
    assert str(row["a"]).startswith("x" * share) and "x" * (share + 1) not in str(row["a"])
    assert f"longer than {share} bytes" in str(row["a"])
    assert (row["account_name"], row["b"], row["d"]) == ("1", 1, "short")
    assert result.cut and not result.truncated


def test_values_keep_their_types_under_the_bound(sql_backend: SqlBackend) -> None:
    result = _run(
        sql_backend,
        "SELECT account_name, current_balance, 1 AS one, NULL AS missing "
        "FROM account_details ORDER BY current_balance DESC LIMIT 2",
    )
    assert result.error is None, result.error
    # Numbers stay numbers (the bound never turns a value into its text).
    assert all(isinstance(row["current_balance"], int | float) for row in result.rows)
    assert [(row["one"], row["missing"]) for row in result.rows] == [(1, None), (1, None)]
    assert result.rows[0]["current_balance"] >= result.rows[1]["current_balance"]  # type: ignore[operator]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT account_name FROM account_details -- the names",
        "SELECT account_name FROM account_details; -- the names",
        "/* names */ SELECT account_name FROM account_details ;",
        "SELECT account_name, account_name FROM account_details",
    ],
    ids=["closing-line-comment", "semicolon-then-comment", "comments-around", "repeated-name"],
)
def test_statement_ends_read_as_before(sql_backend: SqlBackend, query: str) -> None:
    result = _run(sql_backend, query)
    assert result.error is None, result.error
    assert len(result.rows) == 9


def test_a_wide_row_is_bounded_too(sql_backend: SqlBackend) -> None:
    big = "printf('%.*c', 500000, 'x')" if sql_backend.name == "sqlite" else "(SELECT v FROM s)"
    prefix = (
        ""
        if sql_backend.name == "sqlite"
        else (
            "WITH RECURSIVE s0(n, v) AS (SELECT 0, 'x'::text UNION ALL SELECT n+1, v || v FROM s0 "
            "WHERE n < 19), s(v) AS (SELECT v FROM s0 WHERE n = 19) "
        )
    )
    columns = ", ".join(f"{big} AS c{i}" for i in range(80))
    result = _run(sql_backend, f"{prefix}SELECT {columns}", max_bytes=BUDGET)
    assert result.error is None, result.error
    assert result.cut
    share = value_bytes(BUDGET, 80)
    assert share == MIN_VALUE_BYTES
    assert _text_bytes(result) < 80 * (share + 100)


def test_sqlite_refuses_a_result_of_more_than_100_columns(sqlite_backend: SqlBackend) -> None:
    columns = ", ".join(f"{i} AS c{i}" for i in range(101))
    result = _run(sqlite_backend, f"SELECT {columns}")
    assert result.error is not None and "too many columns" in result.error
    assert _run(sqlite_backend, f"SELECT {columns.rsplit(',', 1)[0]}").error is None


def test_postgres_cuts_values_before_they_leave_the_server(postgres_backend: SqlBackend) -> None:
    # A 32 MB value: only its column's share of the bytes ever reaches the worker.
    result = _run(
        postgres_backend,
        "WITH RECURSIVE s(n, v) AS (SELECT 0, 'x'::text UNION ALL "
        "SELECT n+1, v || v FROM s WHERE n < 25) SELECT v, n FROM s WHERE n = 25",
        max_bytes=BUDGET,
    )
    assert result.error is None, result.error
    (row,) = result.rows
    assert row["n"] == 25 and len(str(row["v"])) < value_bytes(BUDGET, 2) + 100


def test_a_value_cut_by_the_server_is_marked() -> None:
    result = build_result(["a", "b"], [(CutValue("y" * 50_000), 2)], 10, max_bytes=BUDGET)
    value = str(result.rows[0]["a"])
    assert value.startswith("y" * value_bytes(BUDGET, 2)) and value.endswith("bytes]")
    assert result.cut and result.rows[0]["b"] == 2


def test_values_are_cut_between_characters() -> None:
    result = build_result(["a"], [("é" * 20_000,)], 10, max_bytes=4096)
    value = str(result.rows[0]["a"])
    kept = value.split(" … ")[0]
    assert set(kept) == {"é"} and len(kept.encode()) <= 4096


# View names, in any case (SQLite reads names case-insensitively; PostgreSQL folds unquoted
# names to lower case), and still nothing but the views.


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM Account_Details",
        "SELECT * FROM ACCOUNT_DETAILS",
        "SELECT a.account_name FROM Account_Details a JOIN Holding_Details h "
        "USING (source_account_id)",
        "WITH cards AS (SELECT * FROM Account_Details) SELECT * FROM cards",
        "SELECT * FROM PUBLIC_HOLDING_DETAILS",
    ],
    ids=["mixed-case", "upper-case", "join", "inside-a-with", "holdings"],
)
def test_view_names_match_in_any_case(sql_backend: SqlBackend, query: str) -> None:
    result = _run(sql_backend, query)
    assert result.error is None, result.error
    assert result.rows


def test_mixed_case_reads_the_same_rows(sql_backend: SqlBackend) -> None:
    lower = _run(sql_backend, "SELECT * FROM account_details ORDER BY source_account_id")
    mixed = _run(sql_backend, "SELECT * FROM Account_Details ORDER BY source_account_id")
    assert mixed.rows == lower.rows and len(lower.rows) == 9


def test_a_quoted_mixed_case_name_works_where_the_database_reads_it(
    sql_backend: SqlBackend,
) -> None:
    result = _run(sql_backend, 'SELECT * FROM "Account_Details"')
    if sql_backend.name == "sqlite":
        assert result.error is None and len(result.rows) == 9
    else:  # PostgreSQL reads a quoted name as written: no such view, and the model is told why
        assert result.error is not None and "account_details, without quotes" in result.error


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM Plaid_Accounts",
        "SELECT * FROM plaid_accounts AS Account_Details",
        "SELECT access_token FROM PLAID_ITEMS",
        "WITH Account_Details AS (SELECT * FROM plaid_accounts) SELECT * FROM account_details",
        'WITH "ACCOUNT_DETAILS" AS (SELECT name FROM plaid_accounts) SELECT * FROM account_details',
        "SELECT * FROM Account_Details a, Plaid_Items p",
    ],
    ids=[
        "base-table-mixed-case",
        "alias-named-like-a-view",
        "secret-upper-case",
        "with-named-like-a-view",
        "quoted-with-named-like-a-view",
        "view-and-base-table",
    ],
)
def test_any_case_still_reaches_only_the_views(sql_backend: SqlBackend, query: str) -> None:
    result = _run(sql_backend, query)
    assert result.error is not None and not result.rows
