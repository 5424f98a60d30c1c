"""The store for Flask: the app's engine (one of its services), and the `init-db`,
`seed-demo`, `create-token` and `create-user` commands (`flask --app webapp ...`)."""

from __future__ import annotations

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from ..services import close_services, services
from .demo import seed_demo
from .engine import DatabaseURLError
from .migrate import upgrade_database
from .users import (
    InvalidUsernameError,
    UnknownUserError,
    create_api_token,
    create_user,
    is_valid_username,
)


def get_engine(app: Flask | None = None) -> Engine:
    """Return the app's engine (the current app's by default), made on first use."""
    return services(app).engine


def close_engine(app: Flask) -> None:
    """Close the app's engine and its pooled connections; the next use makes new ones."""
    close_services(app)


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
    """Create or refresh the demo users and their accounts (password: DEMO_PASSWORD)."""
    engine = _engine_or_fail()
    upgrade_database(engine)
    seeded = seed_demo(engine, str(current_app.config["DEMO_PASSWORD"]))
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


def _username(ctx: click.Context, param: click.Parameter, username: str) -> str:
    # Checked as the argument is read, so a bad name fails before the password prompt.
    if not is_valid_username(username):
        raise click.BadParameter(
            f"{username!r} is not a username: use 1-64 letters, digits, '_', '.' or '-'."
        )
    return username


@click.command("create-user")
@click.argument("username", callback=_username)
@click.option(
    "--password",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    help="The new user's password; asked for (twice, hidden) when not given.",
)
@with_appcontext
def create_user_command(username: str, password: str) -> None:
    """Create USERNAME, an ordinary user with no accounts, who signs in with the password."""
    if not password:
        raise click.ClickException("The password must not be empty.")
    engine = _engine_or_fail()
    upgrade_database(engine)
    try:
        user = create_user(engine, username, password)
    except InvalidUsernameError:
        raise click.ClickException(f"{username!r} is not a username.") from None
    except IntegrityError:
        # The only unique value given here is the username (the clerk id is 112 random bits).
        raise click.ClickException(f"A user named {username!r} already exists.") from None
    except ValueError as exc:  # A password over 1024 characters, or one UTF-8 cannot encode.
        raise click.ClickException(f"The password was refused: {exc}.") from None
    click.echo(f"Created user {user.username!r}; sign in with the password given.")


def init_app(app: Flask) -> None:
    """Register the store's CLI commands on `app`; the engine is made lazily on first use."""
    app.cli.add_command(init_db_command)
    app.cli.add_command(seed_demo_command)
    app.cli.add_command(create_token_command)
    app.cli.add_command(create_user_command)
