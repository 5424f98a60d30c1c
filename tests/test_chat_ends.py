"""A turn ended in one process stops its runner in another at once, over each wake-up channel.

Two `ChatService`s on one database stand for two hosts: each has its own wake-ups and
listener. One runs a turn whose model never ends its round by itself; the other cancels it.
The runner's model must be closed (its stream abandoned) by the news alone: its lease is far
too long for the runner to find out at its next renewal.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from tests.support.waiting import PATIENCE, wait_for
from tests.test_chat_wakeups import redis_reachable
from webapp.chat import conversations
from webapp.chat.service import ChatService
from webapp.chat.wakeups import Listener, PostgresListener, RedisListener, SqlitePoller
from webapp.citations.citable import ToolOutcome
from webapp.llm.base import ModelError, ModelRequest
from webapp.store.app_db import get_engine
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import authenticate

REDIS_URL = "redis://127.0.0.1:6379/0"


class SilentUntilClosed:
    """A model whose round never ends by itself: it waits until its turn abandons it."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.closed = threading.Event()

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.asked.set()
        self.closed.wait(PATIENCE * 2)
        raise ModelError("The answer was stopped.")
        yield {}  # a generator, as every model's stream is

    def close(self) -> None:
        self.closed.set()


class NoTools:
    def run(self, name: str, tool_input: dict[str, Any]) -> ToolOutcome:
        raise AssertionError("no tool is asked for")


def _host(engine: Engine, model: SilentUntilClosed, listener: Listener) -> ChatService:
    return ChatService(
        engine,
        lambda: model,
        lambda user_id: NoTools(),
        lease=timedelta(minutes=10),  # renewed every 200 s: only the news can stop it sooner
        listener=listener,
    )


def _listeners(kind: str, engine: Engine) -> tuple[Listener, Listener]:
    if kind == "redis":
        return RedisListener(REDIS_URL), RedisListener(REDIS_URL)
    if kind == "postgres":
        return PostgresListener(engine), PostgresListener(engine)
    return SqlitePoller(engine), SqlitePoller(engine)


def _cancel_from_another_host(engine: Engine, kind: str, end: str) -> None:
    other_engine = create_store_engine(engine.url.render_as_string(hide_password=False))
    model = SilentUntilClosed()
    mine, theirs = _listeners(kind, engine)
    runner_host = _host(engine, model, mine)
    other_host = _host(other_engine, SilentUntilClosed(), theirs)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    runner_host.start_background()
    try:
        session_id = conversations.create_session(engine, user.id).id
        message_id = runner_host.ask(user.id, session_id, "What do I owe on my cards?")
        wait_for(model.asked.is_set, "the model was never asked")
        if end == "cancel":
            assert other_host.cancel(user.id, session_id, message_id)
        else:
            other_host.deadline = timedelta(0)
            assert other_host.end_overdue() == 1
        wait_for(model.closed.is_set, "the runner's model call outlived its ended turn")
        runner_host.wait_idle()
        assert conversations.get_message(engine, user.id, session_id, message_id) is not None
    finally:
        runner_host.stop_background()
        other_engine.dispose()


@pytest.mark.parametrize("end", ["cancel", "deadline"])
def test_sqlite_an_end_elsewhere_stops_the_runner(app: Flask, end: str) -> None:
    _cancel_from_another_host(get_engine(app), "sqlite", end)


@pytest.mark.skipif(not redis_reachable(), reason="no Redis at 127.0.0.1:6379")
def test_redis_carries_a_cancel_to_the_runner(app: Flask) -> None:
    _cancel_from_another_host(get_engine(app), "redis", "cancel")


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Engine]:
    engine = create_store_engine(pg_url)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    yield engine
    engine.dispose()


@pytest.mark.postgres
def test_postgresql_carries_a_cancel_to_the_runner(pg_engine: Engine) -> None:
    _cancel_from_another_host(pg_engine, "postgres", "cancel")
