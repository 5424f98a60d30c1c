"""The Flask application factory: configuration, extensions, blueprints."""

from __future__ import annotations

import gc
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from . import cli, settings
from .services import chat_service, installed, services
from .services import install as install_services
from .tools.python.claim import sweep_leftovers
from .web import (
    accounts,
    api,
    auth,
    chat,
    chats,
    favicon,
    files,
    health,
    inputs,
    library,
    proxy,
    responses,
    spending,
    versions,
)
from .web.snapshots import snapshot_answer


def _folder(name: str) -> str:
    """Return where `templates` or `static` is: beside the package in a checkout (the product's
    layout), inside it where a wheel installed it (pyproject's package-dir)."""
    package = Path(__file__).resolve().parent
    inside = package / name
    return str(inside if inside.is_dir() else package.parent / name)


def _secret_key(instance: Path) -> str:
    """Return the key kept in the instance folder, making it once, so every worker shares it."""
    path = instance / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    key = secrets.token_hex(32)
    # O_EXCL: when two workers start at once, the first one's key wins for both.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(key)
    return key


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the application: each setting's default, then the environment, then
    `test_config` (`webapp.settings`); its services are made on first use."""
    app = Flask(
        __name__,
        instance_relative_config=True,
        template_folder=_folder("templates"),
        static_folder=_folder("static"),
    )
    instance = Path(app.instance_path)
    instance.mkdir(parents=True, exist_ok=True)
    if test_config is not None:
        app.config.from_mapping(test_config)  # Flask's own keys (TESTING, ...) as given
    app.config.from_mapping(settings.load(test_config))
    if not app.config["DATABASE_URL"]:
        app.config["DATABASE_URL"] = f"sqlite:///{instance / 'webapp.sqlite'}"
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = _secret_key(instance)

    install_services(app, on_answer_ended=snapshot_answer)
    cli.init_app(app)
    proxy.init_app(app)
    inputs.init_app(app)
    responses.init_app(app)
    auth.init_app(app)
    app.register_blueprint(api.bp)
    app.register_blueprint(auth.bp)
    app.register_blueprint(chat.bp)
    app.register_blueprint(chats.bp)
    app.register_blueprint(accounts.bp)
    app.register_blueprint(favicon.bp)
    app.register_blueprint(library.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(files.bp)
    app.register_blueprint(files.api_bp)
    app.register_blueprint(spending.bp)
    app.register_blueprint(versions.bp)
    return app


def start_worker(app: object, serving: Callable[[], bool] | None = None) -> None:
    """Start a serving process's background jobs (gunicorn.conf.py calls this per worker).

    `serving` is the server's word that the worker still serves (False once it was told
    to stop): checked before any turn a dead worker left is taken over.
    """
    # First, what sandboxed runs of a process that died (a killed worker) left behind.
    sweep_leftovers()
    if isinstance(app, Flask) and installed(app):
        services(app).chat.start_background(serving)
        chat_service(app)  # takes those turns over, unless told to stop meanwhile
    # All the worker holds once it is loaded (the app, its modules, the engine's lexicon and
    # library) stays for its life: the collector's full passes leave it out from now on. Each
    # walked some 150,000 objects (0.13-0.21 s of CPU here), once every 30-40 turns; what is
    # made later is collected as before (the `gc.freeze` documentation's advice for servers).
    gc.freeze()


def worker_stopping(app: object) -> None:
    """Begin a serving process's exit (its `SIGTERM`): hand turns over, end open streams."""
    if isinstance(app, Flask) and installed(app):
        services(app).chat.stop_serving()


def stop_worker(app: object) -> None:
    """Stop what `start_worker` started."""
    if isinstance(app, Flask) and installed(app):
        services(app).chat.stop_background()
