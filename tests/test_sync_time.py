"""Account data carries its own sync time, and sources show it: "Synced 2 hours ago".

From the column (revision 0007) through the views and the query service, to the source a
turn builds from its rows (the oldest sync time of the rows it covers) and the sheet's row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
import sqlalchemy as sa
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient

from tests.support.apps import idle_after
from webapp.chat.conversations import create_session
from webapp.citations.citable import from_sql, synced_at
from webapp.store.app_db import get_engine
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import downgrade_database, head_revision, upgrade_database
from webapp.store.schema import QUERY_ROLE, VIEW_OWNER_ROLE
from webapp.store.users import authenticate
from webapp.tools.sql.service import run_sql
from webapp.web.snippet import freshness, relative_time

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

SYNCED_TABLES = ("plaid_accounts", "snaptrade_accounts", "crypto_wallets", "holdings")
# The views revision 0007 recreated (transaction_details came later, in 0010).
SYNCED_VIEWS = ("account_details", "holding_details", "public_holding_details")
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
READ_AT = "2026-03-02T12:00:05+00:00"


# The column and the views, up and down (revision 0007).


def _columns(engine: sa.Engine, name: str) -> list[str]:
    inspector = sa.inspect(engine)
    return [column["name"] for column in inspector.get_columns(name)]


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'sync.sqlite'}"


@pytest.mark.parametrize(
    "url_fixture", ["sqlite_url", pytest.param("pg_url", marks=pytest.mark.postgres)]
)
def test_the_column_comes_and_goes_with_the_views_intact(
    request: pytest.FixtureRequest, url_fixture: str
) -> None:
    engine = create_store_engine(request.getfixturevalue(url_fixture))
    try:
        upgrade_database(engine)
        before = {view: _columns(engine, view) for view in SYNCED_VIEWS}
        assert all(columns[-1] == "synced_at" for columns in before.values())
        assert all("synced_at" in _columns(engine, table) for table in SYNCED_TABLES)
        assert "synced_at" not in _columns(engine, "manual_accounts")

        assert downgrade_database(engine, "0006") == "0006"
        after = {view: _columns(engine, view) for view in SYNCED_VIEWS}
        assert after == {view: columns[:-1] for view, columns in before.items()}
        assert not any("synced_at" in _columns(engine, table) for table in SYNCED_TABLES)
        if engine.dialect.name == "postgresql":
            _assert_views_secured(engine)

        assert upgrade_database(engine) == head_revision()
        assert {view: _columns(engine, view) for view in SYNCED_VIEWS} == before
        if engine.dialect.name == "postgresql":
            _assert_views_secured(engine)
    finally:
        engine.dispose()


def _assert_views_secured(engine: sa.Engine) -> None:
    """The views belong to the role row-level security binds; the query role may read them."""
    with engine.connect() as connection:
        for view in SYNCED_VIEWS:
            owner = connection.execute(
                sa.text("SELECT viewowner FROM pg_views WHERE viewname = :v"), {"v": view}
            ).scalar_one()
            assert owner == VIEW_OWNER_ROLE
            readable = connection.execute(
                sa.text("SELECT has_table_privilege(:r, :v, 'SELECT')"),
                {"r": QUERY_ROLE, "v": view},
            ).scalar_one()
            assert readable is True


def test_a_downgrade_keeps_every_row(sqlite_url: str) -> None:
    engine = create_store_engine(sqlite_url)
    try:
        upgrade_database(engine)
        users = seed_demo(engine, "demo", now=NOW)
        counted = "SELECT count(*) FROM holdings"
        with engine.connect() as connection:
            holdings = connection.execute(sa.text(counted)).scalar_one()
        assert holdings == 3
        downgrade_database(engine, "0006")
        with engine.connect() as connection:
            assert connection.execute(sa.text(counted)).scalar_one() == holdings
        upgrade_database(engine)
        assert seed_demo(engine, "demo", now=NOW) == users
    finally:
        engine.dispose()


# The query service reads it, for one's own rows only.


def _when(text: object) -> datetime:
    assert isinstance(text, str)
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


@pytest.fixture
def synced_at_noon(sql_backend: SqlBackend) -> SqlBackend:
    """The shared database, seeded again with its sync times counted back from NOW."""
    seed_demo(sql_backend.engine, "demo", now=NOW)
    return sql_backend


def test_the_model_reads_its_users_sync_times(synced_at_noon: SqlBackend) -> None:
    backend = synced_at_noon
    result = run_sql(
        backend.engine,
        backend.users["demo"].id,
        "SELECT institution_name, account_name, synced_at FROM account_details",
    )
    assert result.error is None, result.error
    seen = {(row["institution_name"], row["account_name"]): row["synced_at"] for row in result.rows}
    assert _when(seen[("Chase", "Checking")]) == NOW - timedelta(hours=2)
    assert _when(seen[("American Express", "Credit card")]) == NOW - timedelta(days=1, hours=3)
    assert _when(seen[("Robinhood", "Individual")]) == NOW - timedelta(minutes=25)
    assert seen[(None, "Home")] is None  # a manual account is never synced
    for view in ("holding_details", "public_holding_details"):
        held = run_sql(backend.engine, backend.users["demo"].id, f"SELECT synced_at FROM {view}")
        assert held.error is None and held.rows, held.error
        assert all(row["synced_at"] is not None for row in held.rows)


def test_no_user_reads_anothers_sync_times(synced_at_noon: SqlBackend) -> None:
    backend = synced_at_noon
    query = "SELECT institution_name, synced_at FROM account_details WHERE synced_at IS NOT NULL"
    alex = run_sql(backend.engine, backend.users["alex"].id, query)
    assert alex.error is None, alex.error
    assert {row["institution_name"] for row in alex.rows} == {"Bank of America"}
    assert {_when(row["synced_at"]) for row in alex.rows} == {NOW - timedelta(hours=3)}
    nothing = run_sql(backend.engine, backend.users["alex"].id, "SELECT * FROM holding_details")
    assert nothing.error is None and nothing.rows == ()


@pytest.mark.postgres
def test_row_level_security_hides_other_users_sync_times(postgres_backend: SqlBackend) -> None:
    """Beneath the service: the query role, scoped to alex, sees only his rows' sync times."""
    seed_demo(postgres_backend.engine, "demo", now=NOW)
    url = postgres_backend.engine.url.set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False)) as connection:
        connection.execute(
            "SELECT set_config('webapp.user_id', %s, true)",
            (str(postgres_backend.users["alex"].id),),
        )
        connection.execute(f"SET LOCAL ROLE {QUERY_ROLE}")
        rows = connection.execute("SELECT synced_at FROM account_details").fetchall()
        connection.rollback()
    assert rows and {row[0] for row in rows} == {NOW - timedelta(hours=3)}


# A source is as fresh as its stalest row.


@dataclass(frozen=True)
class Rows:
    rows: tuple[dict[str, object], ...]
    columns: tuple[str, ...] = ()
    truncated: bool = False


def _card(name: str, institution: str, synced: object) -> dict[str, object]:
    return {
        "account_name": name,
        "institution_name": institution,
        "account_type": "credit",
        "current_balance": 10.0,
        "currency": "USD",
        "synced_at": synced,
    }


def test_a_source_takes_the_oldest_sync_time_of_its_rows() -> None:
    rows = (
        _card("Credit card", "Citi", "2026-03-02 11:20:00.000000"),  # SQLite's spelling
        _card("Credit card", "American Express", "2026-03-01 08:00:00+00"),  # PostgreSQL's
        _card("Credit card", "Discover", None),  # never synced: no time to weigh
        _card("Sapphire Preferred", "Chase", "2026-03-02T10:00:00+00:00"),
    )
    cards, sapphire = from_sql(Rows(rows), READ_AT)
    assert cards.title == "Credit card" and sapphire.title == "Sapphire Preferred"
    assert cards.updated_at == "2026-03-01T08:00:00+00:00"
    assert sapphire.updated_at == "2026-03-02T10:00:00+00:00"


def test_rows_without_the_column_keep_the_time_they_were_read() -> None:
    row = {k: v for k, v in _card("Checking", "Chase", None).items() if k != "synced_at"}
    assert synced_at([row], READ_AT) == READ_AT
    (citable,) = from_sql(Rows((row,)), READ_AT)
    assert citable.updated_at == READ_AT


def test_rows_that_never_synced_claim_no_time() -> None:
    assert synced_at([_card("Home", "", None)], READ_AT) is None
    assert synced_at([_card("Home", "", "not a time")], READ_AT) is None


# The sheet says so.


def test_account_rows_say_synced_and_other_rows_say_updated() -> None:
    text = "account_name: Checking\ncurrent_balance: 4820.33\nsynced_at: 2026-03-02 10:00:00"
    two_hours = (NOW - timedelta(hours=2)).isoformat()
    assert freshness(two_hours, text, NOW) == "Synced 2 hours ago"
    assert freshness(None, "account_name: Home\nsynced_at: null", NOW) == "Entered by hand"
    assert freshness(two_hours, "The limit is $2,000.", NOW) == "Updated 2 hours ago"
    assert freshness(None, "The limit is $2,000.", NOW) is None


@pytest.mark.parametrize("seconds", [0, 1, 2, 30, 59, -20])
def test_times_within_a_minute_all_read_just_now(seconds: int) -> None:
    assert relative_time((NOW - timedelta(seconds=seconds)).isoformat(), NOW) == "just now"


def test_times_past_a_minute_read_as_before() -> None:
    assert relative_time((NOW - timedelta(minutes=2)).isoformat(), NOW) == "2 minutes ago"
    assert relative_time("2100-01-01", NOW) == "on 2100-01-01"
    assert relative_time("not a time", NOW) is None


def _sign_in(app: Flask, client: FlaskClient) -> int:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    with client.session_transaction() as session:
        session["user_id"] = user.id
    return user.id


def test_the_sources_page_says_when_each_account_synced(app: Flask, client: FlaskClient) -> None:
    # Sync times count back from the moment of seeding; seed them now, as `dev.py run` does.
    seed_demo(get_engine(app), "demo")
    user = _sign_in(app, client)
    chat = f"/chat/{create_session(get_engine(app), user).id}"
    page = BeautifulSoup(client.get(chat).get_data(as_text=True), "html.parser")
    token = page.select_one('input[name="csrf_token"]')
    assert token is not None
    with idle_after(app):
        asked = client.post(
            f"{chat}/messages",
            data={"message": "What do I owe on my credit cards?", "csrf_token": token["value"]},
        )
    assert asked.status_code == 302
    answer = BeautifulSoup(client.get(asked.location).get_data(as_text=True), "html.parser")
    bar = answer.select_one("article.message.assistant a.sources-bar")
    assert bar is not None
    sheet = BeautifulSoup(client.get(str(bar["href"])).get_data(as_text=True), "html.parser")
    rows = {
        row.select_one(".source-title").get_text(): " ".join(
            row.select_one(".source-meta").get_text().split()
        )
        for row in sheet.select(".source-row")
    }
    # Amex (a day ago) and Citi (40 minutes ago) pool under one label: the older time wins.
    assert rows == {
        "Credit card": "2 accounts · Synced a day ago",
        "Sapphire Preferred": "Your account · Synced 2 hours ago",
    }
    assert not re.search(r"\bUpdated\b|seconds? ago", sheet.get_text())
