"""The CLI: `flask --app webapp init-db | seed-demo | create-token | create-user`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskCliRunner

from webapp import create_app
from webapp.store.accounts import list_accounts
from webapp.store.app_db import close_engine, get_engine
from webapp.store.engine import create_store_engine
from webapp.store.migrate import current_revision, head_revision
from webapp.store.users import authenticate, user_for_token


@pytest.fixture
def empty_app(tmp_path: Path) -> Iterator[Flask]:
    """An app on a database file that does not exist yet."""
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{tmp_path / 'new.db'}"}
    )
    yield app
    close_engine(app)


def _counts(app: Flask) -> dict[str, int]:
    with get_engine(app).connect() as connection:
        return {
            table: connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in (
                "users",
                "plaid_items",
                "plaid_accounts",
                "snaptrade_accounts",
                "manual_accounts",
                "crypto_wallets",
                "holdings",
            )
        }


def test_init_db_creates_the_schema_and_is_idempotent(empty_app: Flask) -> None:
    runner = empty_app.test_cli_runner()
    for _ in range(2):
        result = runner.invoke(args=["init-db"])
        assert result.exit_code == 0, result.output
        assert f"revision {head_revision()}" in result.output
    assert current_revision(get_engine(empty_app)) == head_revision()


def test_seed_demo_twice_leaves_the_same_data(
    empty_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    runner = empty_app.test_cli_runner()
    first = runner.invoke(args=["seed-demo"])
    assert first.exit_code == 0, first.output
    counts = _counts(empty_app)
    second = runner.invoke(args=["seed-demo"])
    assert second.exit_code == 0, second.output
    assert _counts(empty_app) == counts
    assert counts["users"] == 2 and counts["holdings"] == 3
    engine = get_engine(empty_app)
    demo = authenticate(engine, "demo", "demo")
    assert demo is not None and len(list_accounts(engine, demo.id)) == 9


def test_seed_demo_honours_demo_password(runner: FlaskCliRunner, app: Flask) -> None:
    app.config["DEMO_PASSWORD"] = "correct horse"  # webapp.settings reads it from the environment
    result = runner.invoke(args=["seed-demo"])
    assert result.exit_code == 0, result.output
    engine = get_engine(app)
    assert authenticate(engine, "demo", "correct horse") is not None
    assert authenticate(engine, "demo", "demo") is None


@pytest.mark.parametrize("username", ["demo", "alex"])
def test_create_token_prints_a_token_that_signs_in(
    runner: FlaskCliRunner, app: Flask, username: str
) -> None:
    result = runner.invoke(args=["create-token", username])
    assert result.exit_code == 0, result.output
    token = result.output.strip()
    assert re.fullmatch(r"wat_[A-Za-z0-9_-]{43}", token)
    user = user_for_token(get_engine(app), token)
    assert user is not None and user.username == username


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["create-token", "nobody"], "No user is named 'nobody'"),
        (["create-token"], "Missing argument"),
    ],
    ids=["unknown-user", "no-username"],
)
def test_create_token_errors_are_clear(
    runner: FlaskCliRunner, args: list[str], message: str
) -> None:
    result = runner.invoke(args=args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_bad_database_url_is_a_clear_cli_error(tmp_path: Path) -> None:
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": "mysql://h/db"})
    result = app.test_cli_runner().invoke(args=["init-db"])
    assert result.exit_code != 0
    assert "DATABASE_URL must be a sqlite:// or postgresql:// URL" in result.output


def test_the_real_flask_command_line_works(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}",
        "DEMO_PASSWORD": "from-env",
    }
    flask = [sys.executable, "-m", "flask", "--app", "webapp"]
    for args in (["init-db"], ["seed-demo"], ["create-token", "alex"]):
        done = subprocess.run(
            [*flask, *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    engine = create_store_engine(env["DATABASE_URL"])
    try:
        user = user_for_token(engine, token)
        assert user is not None and user.username == "alex"
        assert authenticate(engine, "alex", "from-env") == user
    finally:
        engine.dispose()


def test_create_user_makes_a_user_who_signs_in_and_has_no_accounts(
    runner: FlaskCliRunner, app: Flask
) -> None:
    result = runner.invoke(args=["create-user", "casey", "--password", "correct horse"])
    assert result.exit_code == 0, result.output
    assert "casey" in result.output and "correct horse" not in result.output
    engine = get_engine(app)
    user = authenticate(engine, "casey", "correct horse")
    assert user is not None and user.username == "casey"
    assert authenticate(engine, "casey", "wrong horse") is None
    assert list_accounts(engine, user.id) == []
    demo = authenticate(engine, "demo", "demo")
    assert demo is not None and len(list_accounts(engine, demo.id)) == 9  # Others keep theirs.


def test_create_user_asks_for_the_password_twice_without_showing_it(
    runner: FlaskCliRunner, app: Flask
) -> None:
    typed = "first try\nmistyped\nin secret\nin secret\n"
    result = runner.invoke(args=["create-user", "robin"], input=typed)
    assert result.exit_code == 0, result.output
    assert result.output.count("Password") >= 2 and "do not match" in result.output
    assert "secret" not in result.output and "try" not in result.output
    engine = get_engine(app)
    assert authenticate(engine, "robin", "in secret") is not None
    assert authenticate(engine, "robin", "first try") is None


def test_create_user_refuses_a_taken_username(runner: FlaskCliRunner, app: Flask) -> None:
    result = runner.invoke(args=["create-user", "demo", "--password", "another"])
    assert result.exit_code != 0
    assert "A user named 'demo' already exists." in result.output
    assert "Traceback" not in result.output
    engine = get_engine(app)
    assert authenticate(engine, "demo", "demo") is not None  # Untouched.
    assert authenticate(engine, "demo", "another") is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["create-user", ""], "'' is not a username"),
        (["create-user", "has space"], "'has space' is not a username"),
        (["create-user", "x" * 65], "is not a username"),
        (["create-user", "ünïcode", "--password", "pw"], "is not a username"),
        (["create-user"], "Missing argument"),
        (["create-user", "casey", "--password", ""], "The password must not be empty."),
        (["create-user", "casey", "--password", "p" * 1025], "The password was refused"),
    ],
    ids=[
        "empty",
        "space",
        "too-long",
        "non-ascii",
        "no-username",
        "empty-password",
        "long-password",
    ],
)
def test_create_user_errors_are_clear_and_come_before_the_prompt(
    runner: FlaskCliRunner, app: Flask, args: list[str], message: str
) -> None:
    result = runner.invoke(args=args, input="")
    assert result.exit_code != 0
    assert message in result.output
    assert "Password" not in result.output and "Traceback" not in result.output
    with get_engine(app).connect() as connection:
        count = connection.execute(sa.text("SELECT count(*) FROM users")).scalar_one()
    assert count == 2


def test_create_user_on_a_new_database_creates_the_schema(empty_app: Flask) -> None:
    result = empty_app.test_cli_runner().invoke(args=["create-user", "casey", "--password", "pw"])
    assert result.exit_code == 0, result.output
    assert authenticate(get_engine(empty_app), "casey", "pw") is not None
