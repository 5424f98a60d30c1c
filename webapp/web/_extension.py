"""The app's chat service: one per app, with the engine the configuration names."""

from __future__ import annotations

from flask import Flask, current_app

from ..chat import ChatService, LocalTools
from ..engines import DEFAULT_BASE_URL, DEFAULT_MODEL, ClaudeEngine, Engine, OfflineEngine
from ..store import get_engine

_EXTENSION = "webapp.chat"


def model_engine(app: Flask) -> Engine:
    """Return Claude when `ANTHROPIC_API_KEY` is set, else the offline engine."""
    key = app.config.get("ANTHROPIC_API_KEY")
    if not key:
        return OfflineEngine()
    return ClaudeEngine(
        str(key),
        base_url=str(app.config.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL),
        model=str(app.config.get("ANTHROPIC_MODEL") or DEFAULT_MODEL),
    )


def init_chat(app: Flask) -> ChatService:
    """Create the app's chat service."""
    engine = get_engine(app)
    hide = (app.instance_path,)
    service = ChatService(engine, lambda: model_engine(app),
                          lambda uid: LocalTools(engine, uid, hide=hide))
    app.extensions[_EXTENSION] = service
    return service


def chat_service() -> ChatService:
    """Return the current app's chat service."""
    service = current_app.extensions.get(_EXTENSION)
    if not isinstance(service, ChatService):
        service = init_chat(current_app._get_current_object())  # type: ignore[attr-defined]
    return service
