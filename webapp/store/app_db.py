"""The app's database engine, for the web layer and the commands: `get_engine`, `close_engine`.

The engine is one of the app's services (`webapp/services.py`), which says how to reach it
(`install_engine`) when the app is made, so the store never imports the layers above it.
The commands that drive the store (`init-db`, `seed-demo`, ...) are in `webapp/cli.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, current_app
from sqlalchemy.engine import Engine

EXTENSION = "webapp.store"


@dataclass(frozen=True, slots=True)
class EngineHooks:
    """How the app's engine is reached, and closed (its services install these)."""

    get: Callable[[], Engine]
    close: Callable[[], None]


def install_engine(app: Flask, get: Callable[[], Engine], close: Callable[[], None]) -> None:
    """Tell the store how `app` makes and closes its engine."""
    app.extensions[EXTENSION] = EngineHooks(get, close)


def _hooks(app: Flask | None) -> EngineHooks:
    flask_app: Flask = app if app is not None else current_app._get_current_object()  # type: ignore[attr-defined]
    hooks = flask_app.extensions.get(EXTENSION)
    if not isinstance(hooks, EngineHooks):
        raise RuntimeError("This app was not made by webapp.create_app: it has no engine.")
    return hooks


def get_engine(app: Flask | None = None) -> Engine:
    """Return the app's engine (the current app's by default), made on first use."""
    return _hooks(app).get()


def close_engine(app: Flask) -> None:
    """Close the app's engine and its pooled connections; the next use makes new ones."""
    _hooks(app).close()
