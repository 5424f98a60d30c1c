"""PostgreSQL's own walls, tested beneath the query service: roles, grants, row-level security.

The test server's login is a superuser, which bypasses RLS; these tests switch to the
roles the service uses, so what they see is what the model's SQL would see.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from webapp.store.accounts import list_accounts
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import head_revision, upgrade_database
from webapp.store.schema import (
    FINANCIAL_TABLES,
    QUERY_ROLE,
    QUERY_VIEWS,
    USER_SETTING,
    VIEW_OWNER_ROLE,
)
from webapp.tools.sql.service import run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

pytestmark = pytest.mark.postgres

BASE_TABLES = ["users", "api_tokens", *(t.name for t in FINANCIAL_TABLES)]


@pytest.fixture
def raw(postgres_backend: SqlBackend) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A plain psycopg connection to the seeded database, rolled back after the test."""
    url = postgres_backend.engine.url.set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False)) as connection:
        yield connection
        connection.rollback()


def _as(
    connection: psycopg.Connection[tuple[object, ...]], role: str, user_id: int | None
) -> psycopg.Cursor[tuple[object, ...]]:
    cursor = connection.cursor()
    if user_id is not None:
        cursor.execute("SELECT set_config(%s, %s, true)", (USER_SETTING, str(user_id)))
    cursor.execute(f"SET LOCAL ROLE {role}")
    return cursor


def _ids(backend: SqlBackend, username: str) -> set[str]:
    accounts = list_accounts(backend.engine, backend.users[username].id)
    return {str(a["source_account_id"]) for a in accounts if a["source_account_id"]}


@pytest.mark.parametrize("role", [VIEW_OWNER_ROLE, QUERY_ROLE])
def test_the_roles_have_no_power_of_their_own(
    raw: psycopg.Connection[tuple[object, ...]], role: str
) -> None:
    row = raw.execute(
        "SELECT rolsuper, rolbypassrls, rolcanlogin, rolcreaterole, rolcreatedb "
        "FROM pg_roles WHERE rolname = %s",
        (role,),
    ).fetchone()
    assert row == (False, False, False, False, False)


def test_the_views_belong_to_a_role_that_owns_no_table(
    raw: psycopg.Connection[tuple[object, ...]],
) -> None:
    rows = raw.execute(
        "SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c "
        "WHERE c.relname = ANY(%s) AND c.relnamespace = 'public'::regnamespace",
        ([*QUERY_VIEWS, *BASE_TABLES],),
    ).fetchall()
    owners = {str(name): str(owner) for name, owner in rows}
    assert {owners[view] for view in QUERY_VIEWS} == {VIEW_OWNER_ROLE}
    assert VIEW_OWNER_ROLE not in {owners[table] for table in BASE_TABLES}


@pytest.mark.parametrize("table", BASE_TABLES)
def test_every_base_table_has_row_level_security(
    raw: psycopg.Connection[tuple[object, ...]], table: str
) -> None:
    enabled = raw.execute(
        "SELECT relrowsecurity FROM pg_class WHERE oid = %s::regclass", (table,)
    ).fetchone()
    assert enabled == (True,)


@pytest.mark.parametrize("table", BASE_TABLES)
def test_the_query_role_is_denied_every_base_table(
    raw: psycopg.Connection[tuple[object, ...]], postgres_backend: SqlBackend, table: str
) -> None:
    cursor = _as(raw, QUERY_ROLE, postgres_backend.users["alex"].id)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
        cursor.execute(f"SELECT * FROM {table}")


@pytest.mark.parametrize("viewer", ["alex", "demo"])
def test_the_query_role_sees_only_its_users_rows_through_the_views(
    raw: psycopg.Connection[tuple[object, ...]], postgres_backend: SqlBackend, viewer: str
) -> None:
    other = "demo" if viewer == "alex" else "alex"
    cursor = _as(raw, QUERY_ROLE, postgres_backend.users[viewer].id)
    seen = {
        row[0]
        for row in cursor.execute(
            "SELECT source_account_id FROM account_details WHERE source_account_id IS NOT NULL"
        )
    }
    assert seen == _ids(postgres_backend, viewer)
    assert not seen & _ids(postgres_backend, other)
    holdings = cursor.execute("SELECT count(*) FROM holding_details").fetchone()
    assert holdings == ((3,) if viewer == "demo" else (0,))


def test_row_level_security_filters_the_base_tables_themselves(
    raw: psycopg.Connection[tuple[object, ...]], postgres_backend: SqlBackend
) -> None:
    alex = postgres_backend.users["alex"].id
    cursor = _as(raw, VIEW_OWNER_ROLE, alex)
    owners = cursor.execute("SELECT user_id FROM plaid_accounts").fetchall()
    assert owners == [(alex,), (alex,)]
    for table in ("snaptrade_accounts", "manual_accounts", "crypto_wallets", "holdings"):
        assert cursor.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        cursor.execute("SELECT access_token FROM plaid_items")


def test_with_no_user_set_the_views_show_nothing(
    raw: psycopg.Connection[tuple[object, ...]],
) -> None:
    cursor = _as(raw, QUERY_ROLE, None)
    for view in QUERY_VIEWS:
        assert cursor.execute(f"SELECT count(*) FROM {view}").fetchone() == (0,)


def test_the_service_leaves_no_role_or_user_behind(postgres_backend: SqlBackend) -> None:
    engine = postgres_backend.engine
    assert run_sql(engine, postgres_backend.users["demo"].id, "SELECT * FROM account_details").rows
    with engine.connect() as connection:
        row = connection.execute(
            sa.text("SELECT current_user, session_user, current_setting(:name, true)"),
            {"name": USER_SETTING},
        ).one()
    assert row[0] == row[1] != QUERY_ROLE
    assert row[2] in (None, "")


def test_the_service_runs_as_the_query_role_read_only(postgres_backend: SqlBackend) -> None:
    # The query itself cannot ask (current_setting is not allowed), so look from the server side.
    engine = postgres_backend.engine
    result = run_sql(
        engine, postgres_backend.users["alex"].id, "SELECT count(*) AS n FROM account_details"
    )
    assert result.rows == ({"n": 2},)
    with engine.connect() as connection:
        granted = connection.execute(
            sa.text(
                "SELECT has_table_privilege(:role, 'account_details', 'SELECT'),"
                " has_table_privilege(:role, 'account_details', 'INSERT'),"
                " has_table_privilege(:role, 'plaid_accounts', 'SELECT')"
            ),
            {"role": QUERY_ROLE},
        ).one()
    assert tuple(granted) == (True, False, False)


def test_an_owner_who_is_not_a_superuser_gets_the_same_walls(pg_admin_url: str) -> None:
    # Production logins are rarely superusers: the migration must not need one, and the
    # walls must hold when the app's own login owns the tables.
    name = f"webapp_owner_{secrets.token_hex(4)}"
    admin_info = make_url(pg_admin_url).set(drivername="postgresql")
    with psycopg.connect(
        admin_info.render_as_string(hide_password=False), autocommit=True
    ) as admin:
        admin.execute(f"CREATE ROLE {name} LOGIN CREATEROLE")
        admin.execute(f"CREATE DATABASE {name} OWNER {name}")
        try:
            url = admin_info.set(username=name, password=None, database=name)
            engine = create_store_engine(url.render_as_string(hide_password=False))
            try:
                upgrade_database(engine)
                assert upgrade_database(engine) == head_revision()
                users = seed_demo(engine, "demo")
                alex = users["alex"].id
                assert len(list_accounts(engine, alex)) == 2
                seen = run_sql(engine, alex, "SELECT count(*) AS n FROM account_details")
                assert seen.rows == ({"n": 2},)
                assert run_sql(engine, alex, "SELECT * FROM plaid_items").error
            finally:
                engine.dispose()
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {name}")


def test_the_app_logs_in_as_an_owner_that_is_no_superuser(postgres_backend: SqlBackend) -> None:
    with postgres_backend.engine.connect() as conn:
        flags = conn.execute(
            sa.text(
                "SELECT rolsuper, rolbypassrls, rolcreaterole FROM pg_roles"
                " WHERE rolname = current_user"
            )
        ).one()
        owner = conn.execute(
            sa.text(
                "SELECT pg_get_userbyid(datdba) = current_user FROM pg_database"
                " WHERE datname = current_database()"
            )
        ).scalar()
    assert tuple(flags) == (False, False, False) and owner is True
