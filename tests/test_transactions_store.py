"""Transactions in the data model: the tables and `transaction_details` (revision 0010), the
security behind them on both databases, and six months of demo rows a person recognises."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa

from webapp.store.demo import seed_demo
from webapp.store.demo_spending import DAYS, demo_transactions
from webapp.store.engine import create_store_engine
from webapp.store.migrate import downgrade_database, head_revision, upgrade_database
from webapp.store.schema import QUERY_ROLE, VIEW_OWNER_ROLE
from webapp.tools.sql.service import run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

# docs/specs.md, "Tools and data": these names are fixed, in this order.
FIXED_COLUMNS = [
    "source",
    "source_account_id",
    "account_name",
    "institution_name",
    "transaction_id",
    "date",
    "description",
    "merchant_name",
    "category",
    "subcategory",
    "amount",
    "currency",
    "pending",
    "file_id",
]
NOW = datetime(2026, 3, 17, 15, 0, tzinfo=UTC)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tx.sqlite'}"


def _views(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_view_names())


def _secured(engine: sa.Engine, view: str) -> tuple[str, bool]:
    with engine.connect() as connection:
        owner = connection.execute(
            sa.text("SELECT viewowner FROM pg_views WHERE viewname = :v"), {"v": view}
        ).scalar_one()
        readable = connection.execute(
            sa.text("SELECT has_table_privilege(:r, :v, 'SELECT')"), {"r": QUERY_ROLE, "v": view}
        ).scalar_one()
    return str(owner), bool(readable)


@pytest.mark.parametrize(
    "url_fixture", ["sqlite_url", pytest.param("pg_url", marks=pytest.mark.postgres)]
)
def test_the_tables_and_view_come_and_go_with_the_others_intact(
    request: pytest.FixtureRequest, url_fixture: str
) -> None:
    engine = create_store_engine(request.getfixturevalue(url_fixture))
    try:
        upgrade_database(engine)
        seed_demo(engine, "demo", now=NOW)
        assert "transaction_details" in _views(engine)
        columns = [c["name"] for c in sa.inspect(engine).get_columns("transaction_details")]
        assert columns[: len(FIXED_COLUMNS)] == FIXED_COLUMNS

        assert downgrade_database(engine, "0009") == "0009"
        tables = set(sa.inspect(engine).get_table_names())
        assert not {"transactions", "statement_files"} & tables
        assert "transaction_details" not in _views(engine)
        assert {"account_details", "holding_details"} <= _views(engine)

        assert upgrade_database(engine) == head_revision()
        seed_demo(engine, "demo", now=NOW)
        if engine.dialect.name == "postgresql":
            for view in ("transaction_details", "account_details"):
                assert _secured(engine, view) == (VIEW_OWNER_ROLE, True)
            with engine.connect() as connection:
                secured = connection.execute(
                    sa.text(
                        "SELECT relname, relrowsecurity FROM pg_class"
                        " WHERE relname IN ('transactions', 'statement_files')"
                    )
                ).all()
            assert dict(secured) == {"transactions": True, "statement_files": True}
    finally:
        engine.dispose()


def test_the_view_shows_the_fixed_columns(sql_backend: SqlBackend) -> None:
    result = run_sql(
        sql_backend.engine, sql_backend.users["demo"].id, "SELECT * FROM transaction_details"
    )
    assert result.error is None, result.error
    assert list(result.columns[: len(FIXED_COLUMNS)]) == FIXED_COLUMNS
    assert result.rows


def _account_ids(backend: SqlBackend, username: str) -> set[str]:
    result = run_sql(
        backend.engine,
        backend.users[username].id,
        "SELECT source_account_id FROM account_details WHERE source_account_id IS NOT NULL",
    )
    return {str(row["source_account_id"]) for row in result.rows}


@pytest.mark.parametrize("viewer", ["demo", "alex"])
def test_each_user_sees_only_their_own_transactions(sql_backend: SqlBackend, viewer: str) -> None:
    other = "alex" if viewer == "demo" else "demo"
    result = run_sql(
        sql_backend.engine,
        sql_backend.users[viewer].id,
        "SELECT DISTINCT source, source_account_id FROM transaction_details",
        max_rows=1000,
    )
    assert result.error is None, result.error
    seen = {str(row["source_account_id"]) for row in result.rows}
    assert seen and seen <= _account_ids(sql_backend, viewer)
    assert not seen & _account_ids(sql_backend, other)
    assert {row["source"] for row in result.rows} == {"plaid"}


@pytest.mark.parametrize("table", ["transactions", "statement_files"])
def test_the_base_tables_cannot_be_queried(sql_backend: SqlBackend, table: str) -> None:
    result = run_sql(sql_backend.engine, sql_backend.users["demo"].id, f"SELECT * FROM {table}")
    assert result.error is not None
    assert not result.rows


def test_no_identifier_beyond_the_account_id_reaches_a_result(sql_backend: SqlBackend) -> None:
    engine = sql_backend.engine
    with engine.connect() as connection:
        secrets = {
            str(value)
            for row in connection.execute(
                sa.text("SELECT item_id, access_token, clerk_id FROM plaid_items")
            )
            for value in row
        }
    result = run_sql(
        engine,
        sql_backend.users["demo"].id,
        "SELECT * FROM transaction_details",
        max_rows=5000,
    )
    assert result.error is None and result.rows
    text = repr(result.rows)
    assert secrets and not any(secret in text for secret in secrets)
    assert "user_id" not in result.columns


# The demo rows.


@pytest.mark.parametrize("username", ["demo", "alex"])
def test_demo_rows_are_the_same_every_time_and_cover_six_months(username: str) -> None:
    today = date(2026, 3, 17)
    rows = demo_transactions(username, today)
    assert rows == demo_transactions(username, today)
    assert min(row.on for row in rows) >= today - timedelta(days=DAYS)
    assert max(row.on for row in rows) <= today
    months = {(row.on.year, row.on.month) for row in rows}
    assert len(months) >= 6
    details = {row.detail for row in rows}
    assert {
        "INCOME_WAGES",
        "FOOD_AND_DRINK_GROCERIES",
        "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT",
    } <= details
    assert details & {"RENT_AND_UTILITIES_RENT", "LOAN_PAYMENTS_MORTGAGE_PAYMENT"}


def test_demo_has_a_trip_a_refund_subscriptions_and_transfers() -> None:
    rows = demo_transactions("demo", date(2026, 3, 17))
    categories = {row.category for row in rows}
    assert {"TRAVEL", "ENTERTAINMENT", "TRANSFER_IN", "TRANSFER_OUT"} <= categories
    assert any(row.amount < 0 and "REFUND" in row.name for row in rows)
    netflix = [row.on for row in rows if row.merchant == "Netflix"]
    assert len(netflix) >= 6 and {day.day for day in netflix} == {7}


@pytest.mark.parametrize("day", [date(2026, 3, 1), date(2026, 3, 17), date(2026, 12, 31)])
def test_card_rows_add_up_to_the_cards_balances(day: date) -> None:
    owed = {
        ("American Express", "Credit card"): 1842.17,
        ("Citi", "Credit card"): 624.50,
        ("Chase", "Sapphire Preferred"): 2315.40,
        ("Bank of America", "Credit card"): 410.09,
    }
    totals: dict[tuple[str, str], float] = {}
    for username in ("demo", "alex"):
        for row in demo_transactions(username, day):
            totals[row.account] = totals.get(row.account, 0.0) + row.amount
    for card, balance in owed.items():
        assert round(totals[card], 2) == balance, card


def test_seeded_card_balances_match_through_the_views(sql_backend: SqlBackend) -> None:
    user = sql_backend.users["demo"].id
    engine = sql_backend.engine
    balances = run_sql(
        engine,
        user,
        "SELECT source_account_id, current_balance FROM account_details"
        " WHERE account_type = 'credit'",
    )
    sums = run_sql(
        engine,
        user,
        "SELECT source_account_id, round(sum(amount), 2) AS total FROM transaction_details"
        " GROUP BY source_account_id",
    )
    assert balances.error is None and sums.error is None, (balances.error, sums.error)
    total = {row["source_account_id"]: float(str(row["total"])) for row in sums.rows}
    assert len(balances.rows) == 3
    for row in balances.rows:
        assert total[row["source_account_id"]] == float(str(row["current_balance"]))


def test_seeding_again_replaces_the_rows_and_keeps_last_month(sqlite_url: str) -> None:
    engine = create_store_engine(sqlite_url)
    try:
        upgrade_database(engine)
        seed_demo(engine, "demo", now=NOW)
        counted = "SELECT count(*) FROM transactions"
        with engine.connect() as connection:
            first = connection.execute(sa.text(counted)).scalar_one()
        later = NOW + timedelta(days=40)
        users = seed_demo(engine, "demo", now=later)
        with engine.connect() as connection:
            assert connection.execute(sa.text(counted)).scalar_one() > 0
            newest = connection.execute(sa.text("SELECT max(date) FROM transactions")).scalar_one()
        assert first > 0 and newest <= later.date().isoformat()
        last_month = run_sql(
            engine,
            users["demo"].id,
            "SELECT count(*) AS n FROM transaction_details"
            " WHERE subcategory = 'FOOD_AND_DRINK_GROCERIES' AND date LIKE '2026-03-%'",
        )
        assert last_month.error is None and int(str(last_month.rows[0]["n"])) > 0
    finally:
        engine.dispose()
