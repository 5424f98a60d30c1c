"""The app's chat service: one per app, with the engine the configuration names."""

from __future__ import annotations

import threading
from datetime import timedelta

from flask import Flask, current_app

from ..chat.service import ChatService
from ..chat.wakeups import listener_for
from ..llm.base import Model
from ..llm.claude import DEFAULT_BASE_URL, DEFAULT_MODEL, ClaudeModel
from ..llm.offline.model import OfflineModel
from ..store.app_db import get_engine
from ..tools.runner import LocalTools

_EXTENSION = "webapp.chat"
LEASE_SECONDS = 30
DEADLINE_SECONDS = 600
MAX_TURNS_PER_USER = 3
MAX_STREAMS_PER_USER = 20
_lock = threading.Lock()


def language_model(app: Flask) -> Model:
    """Return Claude when `ANTHROPIC_API_KEY` is set, else the offline engine."""
    key = app.config.get("ANTHROPIC_API_KEY")
    if not key:
        return OfflineModel()
    return ClaudeModel(
        str(key),
        base_url=str(app.config.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL),
        model=str(app.config.get("ANTHROPIC_MODEL") or DEFAULT_MODEL),
    )


def _make_service(app: Flask) -> ChatService:
    engine = get_engine(app)
    hide = (app.instance_path,)
    lease = timedelta(seconds=float(app.config.get("TURN_LEASE_SECONDS") or LEASE_SECONDS))
    deadline = timedelta(seconds=float(app.config.get("TURN_DEADLINE_SECONDS") or DEADLINE_SECONDS))
    return ChatService(
        engine,
        lambda: language_model(app),
        lambda uid: LocalTools(
            engine, uid, hide=hide, max_bytes=LocalTools.max_bytes_from(app.config)
        ),
        lease=lease,
        deadline=deadline,
        max_turns_per_user=int(app.config.get("MAX_TURNS_PER_USER") or MAX_TURNS_PER_USER),
        max_streams_per_user=int(app.config.get("MAX_STREAMS_PER_USER") or MAX_STREAMS_PER_USER),
        listener=listener_for(engine, app.config.get("REDIS_URL")),
    )


def init_app(app: Flask) -> None:
    """Prepare the app's chat service; it is made, with its engine, on first use."""
    app.extensions[_EXTENSION] = None


def owns(app: Flask) -> bool:
    """Tell whether `app` is one of this package's apps (it has a chat service slot)."""
    return _EXTENSION in app.extensions


def chat_service(app: Flask | None = None) -> ChatService:
    """Return the app's chat service, taking over turns a dead worker left behind."""
    if app is None:
        app = current_app._get_current_object()  # type: ignore[attr-defined]
    with _lock:
        service = app.extensions.get(_EXTENSION)
        if not isinstance(service, ChatService):
            service = app.extensions[_EXTENSION] = _make_service(app)
    service.resume_stale_once()
    return service
