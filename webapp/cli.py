"""Commands for whoever runs the service that are not the store's (`flask --app webapp ...`)."""

from __future__ import annotations

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

from .llm.base import ModelError, ModelRequest, OperatorError
from .llm.claude import ClaudeModel

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


def init_app(app: Flask) -> None:
    """Register the commands on `app`."""
    app.cli.add_command(check_model_command)
