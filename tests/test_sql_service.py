"""`run_sql` on each backend: the views, the user's rows, JSON-safe values, caps and errors."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

import pytest

from webapp.store.accounts import NATIVE_ID_COLUMN, list_accounts, list_holdings
from webapp.tools.sql.result import SqlResult
from webapp.tools.sql.service import MAX_QUERY_LENGTH, run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

REQUIRED_COLUMNS = {
    "account_details": (
        "source",
        "source_account_id",
        "account_name",
        "institution_name",
        "account_type",
        "account_subtype",
        "current_balance",
        "currency",
    ),
    "holding_details": (
        "source",
        "source_account_id",
        "account_name",
        "ticker",
        "quantity",
        "market_value",
        "currency",
    ),
    "public_holding_details": (
        "source",
        "source_account_id",
        "account_name",
        "ticker",
        "quantity",
        "market_value",
        "currency",
    ),
}


def _ok(backend: SqlBackend, query: str, username: str = "demo", **options: int) -> SqlResult:
    result = run_sql(backend.engine, backend.users[username].id, query, **options)
    assert result.error is None, result.error
    return result


@pytest.mark.parametrize("view", list(REQUIRED_COLUMNS))
def test_each_view_has_its_fixed_columns(sql_backend: SqlBackend, view: str) -> None:
    result = _ok(sql_backend, f"SELECT * FROM {view}")
    assert result.columns[: len(REQUIRED_COLUMNS[view])] == REQUIRED_COLUMNS[view]
    assert result.rows and all(tuple(row) == result.columns for row in result.rows)


@pytest.mark.parametrize("username", ["demo", "alex"])
def test_account_details_are_exactly_the_users_accounts(
    sql_backend: SqlBackend, username: str
) -> None:
    result = _ok(sql_backend, "SELECT * FROM account_details", username)
    expected = [
        {k: v for k, v in account.items() if k not in NATIVE_ID_COLUMN.values()}
        for account in list_accounts(sql_backend.engine, sql_backend.users[username].id)
    ]
    assert sorted(map(repr, result.rows)) == sorted(map(repr, expected))


def test_public_holdings_leave_out_crypto(sql_backend: SqlBackend) -> None:
    public = _ok(sql_backend, "SELECT ticker FROM public_holding_details ORDER BY ticker")
    everything = _ok(sql_backend, "SELECT ticker FROM holding_details ORDER BY ticker")
    assert [r["ticker"] for r in public.rows] == ["AAPL", "VTI"]
    assert [r["ticker"] for r in everything.rows] == ["AAPL", "ETH", "VTI"]
    assert len(list_holdings(sql_backend.engine, sql_backend.users["demo"].id)) == 3


def test_aggregates_joins_and_ctes_work(sql_backend: SqlBackend) -> None:
    result = _ok(
        sql_backend,
        "WITH cards AS (SELECT * FROM account_details WHERE account_type = 'credit') "
        "SELECT institution_name, count(*) AS n, round(sum(current_balance), 2) AS owed "
        "FROM cards GROUP BY institution_name ORDER BY institution_name",
    )
    assert [(r["institution_name"], r["n"]) for r in result.rows] == [
        ("American Express", 1),
        ("Chase", 1),
        ("Citi", 1),
    ]
    assert sum(float(str(r["owed"])) for r in result.rows) == pytest.approx(
        1842.17 + 2315.40 + 624.50
    )
    joined = _ok(
        sql_backend,
        "SELECT a.institution_name, h.ticker FROM account_details a "
        "JOIN holding_details h ON h.source_account_id = a.source_account_id ORDER BY h.ticker",
    )
    assert [(r["institution_name"], r["ticker"]) for r in joined.rows] == [
        ("Robinhood", "AAPL"),
        ("Robinhood", "VTI"),
    ]


@pytest.mark.parametrize(
    ("max_rows", "count", "truncated"),
    [(3, 3, True), (9, 9, False), (50, 9, False), (0, 1, True)],
    ids=["capped", "exact", "room", "floor-of-one"],
)
def test_rows_are_capped_with_a_flag(
    sql_backend: SqlBackend, max_rows: int, count: int, truncated: bool
) -> None:
    result = _ok(sql_backend, "SELECT * FROM account_details", max_rows=max_rows)
    assert (len(result.rows), result.truncated) == (count, truncated)


def test_results_are_json_and_frozen(sql_backend: SqlBackend) -> None:
    result = _ok(sql_backend, "SELECT * FROM holding_details")
    assert json.loads(json.dumps(dataclasses.asdict(result), allow_nan=False))["rows"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.error = "x"  # type: ignore[misc]


def test_an_unknown_user_sees_no_rows(sql_backend: SqlBackend) -> None:
    result = run_sql(sql_backend.engine, 987654, "SELECT * FROM account_details")
    assert result.error is None and result.rows == ()


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("SELECT nope FROM account_details", "nope"),
        ("SELECT * FROM account_details WHERE", "syntax"),
        ("SELECT * FROM nowhere", "account_details, holding_details, public_holding_details"),
        ("", "empty"),
        ("   \n ", "empty"),
        ("SELECT 1" + " " * MAX_QUERY_LENGTH, "longer than"),
        ("SELECT '\x00'", "NUL"),
        ("SELECT '\ud800'", "not valid text"),
    ],
    ids=[
        "unknown-column",
        "syntax",
        "unknown-table",
        "empty",
        "blank",
        "too-long",
        "nul",
        "surrogate",
    ],
)
def test_bad_sql_gets_a_clear_error_and_no_rows(
    sql_backend: SqlBackend, query: str, fragment: str
) -> None:
    result = run_sql(sql_backend.engine, sql_backend.users["demo"].id, query)
    assert result.error is not None and fragment.lower() in result.error.lower()
    assert result.rows == () and result.columns == ()
    assert "Traceback" not in result.error and 'File "' not in result.error


@pytest.mark.parametrize(
    ("user_id", "query"),
    [(None, "SELECT 1"), ("1", "SELECT 1"), (True, "SELECT 1"), (1, None), (1, 42)],
    ids=["no-user", "str-user", "bool-user", "no-query", "int-query"],
)
def test_odd_arguments_never_raise(sql_backend: SqlBackend, user_id: object, query: object) -> None:
    result = run_sql(sql_backend.engine, user_id, query)  # type: ignore[arg-type]
    assert result.error and result.rows == ()


def test_the_deadline_stops_a_long_query(sql_backend: SqlBackend) -> None:
    result = run_sql(
        sql_backend.engine,
        sql_backend.users["demo"].id,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        timeout=0.3,
    )
    assert result.error is not None and "0.3 s" in result.error
