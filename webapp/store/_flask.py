"""The store as a Flask extension: one engine per app, and the `init-db`, `seed-demo` and
`create-token` commands (`flask --app webapp ...`)."""

from __future__ import annotations

import os
import threading

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from sqlalchemy.engine import Engine

from ._demo import seed_demo
from ._engine import DatabaseURLError, create_store_engine
from ._migrate import upgrade_database
from ._users import UnknownUserError, create_api_token

_EXTENSION = "webapp.store"
_lock = threading.Lock()


def get_engine(app: Flask | None = None) -> Engine:
    """Return the app's engine, made on first use from `DATABASE_URL` and kept on the app."""
    flask_app: Flask = app if app is not None else current_app._get_current_object()  # type: ignore[attr-defined]
    engine = flask_app.extensions.get(_EXTENSION)
    if engine is None:
        with _lock:
            engine = flask_app.extensions.get(_EXTENSION)
            if engine is None:
                engine = create_store_engine(str(flask_app.config["DATABASE_URL"]))
                flask_app.extensions[_EXTENSION] = engine
    assert isinstance(engine, Engine)
    return engine


def close_engine(app: Flask) -> None:
    """Close the app's engine and its pooled connections, if one was made."""
    engine = app.extensions.pop(_EXTENSION, None)
    if isinstance(engine, Engine):
        engine.dispose()


def _engine_or_fail() -> Engine:
    try:
        return get_engine()
    except DatabaseURLError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("init-db")
@with_appcontext
def init_db_command() -> None:
    """Create the database schema, or migrate it to the latest revision."""
    revision = upgrade_database(_engine_or_fail())
    click.echo(f"Database schema is at revision {revision}.")


@click.command("seed-demo")
@with_appcontext
def seed_demo_command() -> None:
    """Create or refresh the demo users and their accounts (password: $DEMO_PASSWORD or demo)."""
    engine = _engine_or_fail()
    upgrade_database(engine)
    seeded = seed_demo(engine, os.environ.get("DEMO_PASSWORD") or "demo")
    click.echo(f"Demo users ready: {', '.join(seeded)}.")


@click.command("create-token")
@click.argument("username")
@with_appcontext
def create_token_command(username: str) -> None:
    """Print a new API token for USERNAME (only its hash is stored)."""
    try:
        token = create_api_token(_engine_or_fail(), username)
    except UnknownUserError:
        raise click.ClickException(f"No user is named {username!r}.") from None
    click.echo(token)


def init_app(app: Flask) -> None:
    """Register the store's CLI commands on `app`; the engine is made lazily on first use."""
    app.cli.add_command(init_db_command)
    app.cli.add_command(seed_demo_command)
    app.cli.add_command(create_token_command)
