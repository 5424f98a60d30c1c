"""The engine: URL normalisation, one engine per app, and the per-connection SQLite set-up."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import sqlalchemy as sa
from flask import Flask

from webapp import create_app
from webapp.store.accounts import list_accounts
from webapp.store.app_db import close_engine, get_engine
from webapp.store.engine import (
    DatabaseURLError,
    create_store_engine,
    normalize_url,
    sqlite_file,
    user_scope,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p@h:5432/db", "postgresql+psycopg://u:p@h:5432/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg2://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:////tmp/x.sqlite", "sqlite:////tmp/x.sqlite"),
        ("sqlite://", "sqlite://"),
    ],
    ids=["postgresql", "postgres-alias", "already-psycopg", "psycopg2-swapped", "sqlite", "memory"],
)
def test_urls_are_normalised(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    "url",
    ["mysql://u@h/db", "not a url", "", "oracle://x"],
    ids=["mysql", "garbage", "empty", "oracle"],
)
def test_other_backends_are_refused(url: str) -> None:
    with pytest.raises(DatabaseURLError):
        normalize_url(url)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:////tmp/a.sqlite", "/tmp/a.sqlite"),
        ("sqlite://", None),
        ("sqlite:///:memory:", None),
    ],
    ids=["file", "memory", "memory-named"],
)
def test_sqlite_file_names_only_real_files(url: str, expected: str | None) -> None:
    engine = create_store_engine(url)
    try:
        assert sqlite_file(engine) == expected
    finally:
        engine.dispose()


def test_the_engine_is_made_once_per_app(app: Flask) -> None:
    first = get_engine(app)
    with app.app_context():
        assert get_engine() is first
    close_engine(app)
    assert get_engine(app) is not first


def test_create_app_alone_touches_no_database() -> None:
    # A bad URL goes unnoticed until the engine is first needed: building the app is enough.
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "DATABASE_URL": "mysql://nowhere/db"})
    assert {"init-db", "seed-demo", "create-token"} <= set(app.cli.commands)
    with pytest.raises(DatabaseURLError):
        get_engine(app)


def test_sqlite_connections_enforce_foreign_keys_and_use_wal(app: Flask) -> None:
    with get_engine(app).connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_views_show_nothing_outside_a_user_scope(app: Flask) -> None:
    engine = get_engine(app)
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM account_details")).scalar() == 0
        with user_scope(connection, 1):
            inside = connection.execute(sa.text("SELECT count(*) FROM account_details")).scalar()
        after = connection.execute(sa.text("SELECT count(*) FROM account_details")).scalar()
    assert inside == len(list_accounts(engine, 1)) > 0
    assert after == 0


def test_one_connection_switches_users_between_runs_of_the_same_statement(app: Flask) -> None:
    query = sa.text("SELECT group_concat(source_account_id) FROM account_details")
    with get_engine(app).connect() as connection:
        seen = []
        for user_id in (1, 2, 1, 2):
            with user_scope(connection, user_id):
                seen.append(connection.execute(query).scalar())
    assert seen[0] == seen[2] and seen[1] == seen[3]
    assert seen[0] and seen[1] and not set(seen[0].split(",")) & set(seen[1].split(","))


SECRET_ID = "ChaseSapphire0000000000000000"


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_database_errors_never_quote_bound_values(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}" if backend == "sqlite" else None
    engine = create_store_engine(url or request.getfixturevalue("pg_url"))
    # Like an event insert that clashes on (message_id, seq): the target rides in `data`.
    data = json.dumps({"target": {"kind": "account", "accountId": SECRET_ID, "provider": "plaid"}})
    insert = sa.text("INSERT INTO leak_probe (seq, data) VALUES (:seq, :data)")
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text("CREATE TABLE leak_probe (seq INTEGER PRIMARY KEY, data TEXT)")
            )
            connection.execute(insert, {"seq": 1, "data": data})
        with pytest.raises(sa.exc.IntegrityError) as caught, engine.begin() as connection:
            connection.execute(insert, {"seq": 1, "data": data})
        logging.getLogger("test.leak").error("write failed", exc_info=caught.value)
    finally:
        with engine.begin() as connection:
            connection.execute(sa.text("DROP TABLE IF EXISTS leak_probe"))
        engine.dispose()
    assert "INSERT INTO leak_probe" in str(caught.value)  # The error still names its statement.
    assert SECRET_ID not in str(caught.value)
    assert caplog.records and SECRET_ID not in caplog.text
