"""The commands for whoever runs the service (`flask --app webapp ...`): the store's
(`init-db`, `seed-demo`, `create-token`, `create-user`) and the model's (`check-model`)."""

from __future__ import annotations

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from .llm.base import ModelError, ModelRequest, OperatorError
from .llm.claude import ClaudeModel
from .store.app_db import get_engine
from .store.demo import seed_demo
from .store.engine import DatabaseURLError
from .store.migrate import upgrade_database
from .store.users import (
    InvalidUsernameError,
    UnknownUserError,
    create_api_token,
    create_user,
    is_valid_username,
)

PROBE = ModelRequest(
    "Answer with the one word OK.", [{"role": "user", "content": "Are you there?"}], [], 16
)


@click.command("check-model")
@with_appcontext
def check_model_command() -> None:
    """Ask the API whether the configured key and model answer, and say what to fix."""
    config = current_app.config
    key, model_name = config["ANTHROPIC_API_KEY"], str(config["ANTHROPIC_MODEL"])
    if not key:
        click.echo("ANTHROPIC_API_KEY is not set, so the offline engine answers: no model to ask.")
        return
    model = ClaudeModel(
        str(key), base_url=str(config["ANTHROPIC_BASE_URL"]), model=model_name, max_retries=1
    )
    try:
        events = list(model.stream(PROBE))
    except OperatorError as exc:
        raise click.ClickException(f"Fix {exc.setting}: {exc.what}. ({exc})") from None
    except ModelError as exc:
        raise click.ClickException(f"The model did not answer properly: {exc}") from None
    finally:
        model.close()
    started = next((e.get("message") for e in events if e.get("type") == "message_start"), None)
    answered = started.get("model", model_name) if isinstance(started, dict) else model_name
    click.echo(f"{answered} answers with this key at {config['ANTHROPIC_BASE_URL']}.")


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
    """Register the commands on `app`; the engine is made lazily on first use."""
    app.cli.add_command(init_db_command)
    app.cli.add_command(seed_demo_command)
    app.cli.add_command(create_token_command)
    app.cli.add_command(create_user_command)
    app.cli.add_command(check_model_command)
