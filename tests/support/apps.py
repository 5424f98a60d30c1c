"""Build a real app on a fresh SQLite database seeded with the demo users, and talk to it."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from flask import Flask
from httpx_sse import ServerSentEvent, connect_sse

from tests.support.waiting import wait_for
from webapp import create_app
from webapp.services import chat_service
from webapp.store.app_db import get_engine
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import create_api_token


def seed_template(path: Path) -> Path:
    """Migrate and seed a SQLite file at `path` once, for tests to copy: a copy costs far
    less than running every migration again."""
    engine = create_store_engine(f"sqlite:///{path}")
    upgrade_database(engine)
    seed_demo(engine, "demo")
    engine.dispose()  # the last connection to close folds the WAL back into the file
    return path


_template: Path | None = None


def shared_template() -> Path:
    """Return this process's seeded template, made the first time it is asked for."""
    global _template
    if _template is None:
        folder = Path(tempfile.mkdtemp(prefix="webapp-template-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _template = seed_template(folder / "webapp.sqlite")
    return _template


def app_on_copy(template: Path, database: Path, **config: Any) -> Flask:
    """Return an app on `database`, a fresh copy of the seeded `template`."""
    shutil.copyfile(template, database)
    return create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test",
            "DATABASE_URL": f"sqlite:///{database}",
            "ANTHROPIC_API_KEY": None,
            **config,
        }
    )


def make_app(tmp_path: Path, **config: Any) -> Flask:
    """Return an app on a seeded database of its own in `tmp_path` (a copy of the template),
    or on `DATABASE_URL` when given, migrated and seeded there."""
    if "DATABASE_URL" not in config:
        return app_on_copy(shared_template(), tmp_path / "db.sqlite", **config)
    app = create_app({"TESTING": True, "SECRET_KEY": "test", "ANTHROPIC_API_KEY": None, **config})
    engine = get_engine(app)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    return app


@dataclass
class ApiClient:
    """An API client for one user, over the app's WSGI interface (no network)."""

    app: Flask
    token: str

    @property
    def http(self) -> httpx.Client:
        return httpx.Client(
            transport=httpx.WSGITransport(app=self.app),
            base_url="http://app",
            headers={"Authorization": f"Bearer {self.token}"},
        )

    def new_session(self) -> str:
        response = self.http.post("/api/chat/sessions", json={})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def ask(self, session_id: str, question: str) -> dict[str, Any]:
        response = self.http.post(
            f"/api/chat/sessions/{session_id}/messages", json={"message": question}
        )
        assert response.status_code == 202, response.text
        return dict(response.json())

    def stream(self, url: str, last_event_id: str | None = None) -> list[ServerSentEvent]:
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        with self.http as client, connect_sse(client, "GET", url, headers=headers) as source:
            assert source.response.status_code == 200
            return list(source.iter_sse())

    def session(self, session_id: str) -> dict[str, Any]:
        response = self.http.get(f"/api/chat/sessions/{session_id}")
        assert response.status_code == 200, response.text
        return dict(response.json())

    def wait_done(self, session_id: str) -> dict[str, Any]:
        def done() -> dict[str, Any] | None:
            data = self.session(session_id)
            return data if all(m["status"] != "running" for m in data["messages"]) else None

        return wait_for(done, "the turn did not finish")


def api_client(app: Flask, username: str = "demo") -> ApiClient:
    """Return an API client authorised as `username`."""
    return ApiClient(app, create_api_token(get_engine(app), username))


@contextmanager
def idle_after(app: Flask) -> Iterator[None]:
    """Wait for the app's background turns when the block ends."""
    try:
        yield
    finally:
        with app.app_context():
            chat_service().wait_idle()


def answer_in_new_chat(
    app: Flask, client: ApiClient, *questions: str
) -> tuple[str, list[dict[str, Any]]]:
    """Ask in a new chat, in order, each answer's stream read to the end: the last answer's
    text and the citations its `citations_summary` packet lists."""
    events: list[ServerSentEvent] = []
    with idle_after(app):
        session_id = client.new_session()
        for question in questions:
            events = client.stream(client.ask(session_id, question)["stream_url"])
    parsed = [(e.event, json.loads(e.data)) for e in events]
    (message,) = [data for name, data in parsed if name == "message"]
    text = "".join(block.get("text", "") for block in message["message"]["content"])
    (summary,) = [data for name, data in parsed if name == "citations_summary"]
    return text, list(summary["citations"])
