"""The parts one app is served by, made once per app from its settings, in one place.

`services(app)` returns the app's `Services`: the database engine, the chat service, market
data, web search, the icon fetcher and the sign-in failure log. They are made together on
first use, under one lock per app (gevent's under gunicorn's patched workers), from the
app's parsed settings (`webapp.settings`); nothing is made at import or in `create_app`, so a
test may still change `app.config` before the first request.

Tests replace a part with `override_services(app, market=...)`, the one override point: it
holds for parts made later and replaces the part in what is already made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from flask import Flask, current_app
from sqlalchemy.engine import Engine

from .chat.live import socket_channel
from .chat.service import ChatService
from .chat.wakeups import RedisListener, listener_for
from .favicons.fetch import FaviconService
from .llm.base import Model
from .llm.claude import ClaudeModel
from .llm.offline.model import OfflineModel
from .store.app_db import install_engine
from .store.engine import create_store_engine
from .store.throttle import DatabaseFailureLog, FailureLog, RedisFailureLog
from .tools.python.market import MarketData, default_market
from .tools.runner import LocalTools
from .tools.web_search import WebSearchProvider, default_provider

EXTENSION = "webapp"


@dataclass(frozen=True, slots=True)
class Services:
    """What one app is served by; each made from the app's settings."""

    engine: Engine
    chat: ChatService
    market: MarketData
    web: WebSearchProvider
    # None when FAVICON_FETCH is off: every web source shows the generic icon.
    favicons: FaviconService | None
    sign_in_failures: FailureLog


# Told each answer whose turn ended (`Flask`, its engine, the message id): the web layer's
# snapshot writer, handed down by `create_app` so that no import here points up at it.
AnswerEnded = Callable[[Flask, Engine, str], object]


@dataclass
class _Slot:
    """The app's services, made on first use; `overrides` are a test's replacement parts."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    made: Services | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    on_answer_ended: AnswerEnded | None = None


def install(app: Flask, *, on_answer_ended: AnswerEnded | None = None) -> None:
    """Give `app` its (still unmade) services; `create_app` calls this once."""
    app.extensions[EXTENSION] = _Slot(on_answer_ended=on_answer_ended)
    install_engine(app, lambda: services(app).engine, lambda: close_services(app))


def installed(app: Flask) -> bool:
    """Tell whether `app` was made by `create_app` (it has a services slot)."""
    return isinstance(app.extensions.get(EXTENSION), _Slot)


def chat_service(app: Flask | None = None) -> ChatService:
    """Return the app's chat service, taking over turns a dead worker left behind."""
    service = services(app).chat
    service.resume_stale_once()
    return service


def _slot(app: Flask | None) -> _Slot:
    flask_app: Flask = app if app is not None else current_app._get_current_object()  # type: ignore[attr-defined]
    slot = flask_app.extensions.get(EXTENSION)
    if not isinstance(slot, _Slot):
        raise RuntimeError("This app was not made by webapp.create_app: it has no services.")
    return slot


def services(app: Flask | None = None) -> Services:
    """Return the app's services (the current app's by default), making them on first use."""
    flask_app: Flask = app if app is not None else current_app._get_current_object()  # type: ignore[attr-defined]
    slot = _slot(flask_app)
    with slot.lock:
        if slot.made is None:
            slot.made = _make(flask_app, slot.overrides, slot.on_answer_ended)
        return slot.made


def override_services(app: Flask, **parts: Any) -> None:
    """Serve `app` with these parts instead of its own (tests: `market=FrozenLive(...)`).

    Parts made from others keep what they were made with: a replaced `engine` reaches the
    chat service only when it is set before the first use.
    """
    unknown = set(parts) - set(Services.__dataclass_fields__)
    if unknown:
        raise TypeError(f"Services has no part named {', '.join(sorted(unknown))}.")
    slot = _slot(app)
    with slot.lock:
        slot.overrides.update(parts)
        if slot.made is not None:
            slot.made = replace(slot.made, **parts)


def close_services(app: Flask) -> None:
    """Close the app's engine and forget its services; the next use makes them again."""
    slot = _slot(app)
    with slot.lock:
        made, slot.made = slot.made, None
    if made is not None:
        made.engine.dispose()


def language_model(app: Flask) -> Model:
    """Return Claude when `ANTHROPIC_API_KEY` is set, else the offline engine."""
    key = app.config["ANTHROPIC_API_KEY"]
    if not key:
        return OfflineModel(services(app).market)
    return ClaudeModel(
        str(key),
        base_url=str(app.config["ANTHROPIC_BASE_URL"]),
        model=str(app.config["ANTHROPIC_MODEL"]),
    )


def _make(app: Flask, overrides: dict[str, Any], ended: AnswerEnded | None) -> Services:
    """Make every part not overridden, from the app's settings."""
    config = app.config

    def part(name: str, make: Callable[[], Any]) -> Any:
        return overrides[name] if name in overrides else make()

    engine: Engine = part("engine", lambda: create_store_engine(str(config["DATABASE_URL"])))
    redis_url = str(config["REDIS_URL"] or "") or None
    hide = (app.instance_path,)
    max_bytes = LocalTools.max_bytes_from(config)

    def tools(user_id: int) -> LocalTools:
        # Looked up per turn, so that a part a test replaces later is the one used.
        now = services(app)
        return LocalTools(
            now.engine, user_id, hide=hide, web=now.web, market=now.market, max_bytes=max_bytes
        )

    def chat() -> ChatService:
        listener = listener_for(engine, redis_url)
        live = listener if isinstance(listener, RedisListener) else socket_channel(str(engine.url))
        return ChatService(
            engine,
            lambda: language_model(app),
            tools,
            lease=timedelta(seconds=float(config["TURN_LEASE_SECONDS"])),
            deadline=timedelta(seconds=float(config["TURN_DEADLINE_SECONDS"])),
            max_turns_per_user=int(config["MAX_TURNS_PER_USER"]),
            max_streams_per_user=int(config["MAX_STREAMS_PER_USER"]),
            listener=listener,
            max_tokens=int(config["MODEL_MAX_TOKENS"]),
            on_ended=(lambda message_id: ended(app, engine, message_id)) if ended else None,
            live=live,
            store_spacing=float(config["STREAM_STORE_SECONDS"]),
        )

    def failures() -> FailureLog:
        return RedisFailureLog(redis_url) if redis_url else DatabaseFailureLog(engine)

    return Services(
        engine=engine,
        chat=part("chat", chat),
        market=part("market", lambda: default_market(config)),
        web=part("web", lambda: default_provider(config)),
        favicons=part("favicons", lambda: FaviconService() if config["FAVICON_FETCH"] else None),
        sign_in_failures=part("sign_in_failures", failures),
    )
