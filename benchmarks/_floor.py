"""The floor: a bare Flask SSE app with the chat API's URLs, served by gunicorn exactly as the
Procfile serves the real app, so that app ÷ floor is what the app itself costs.

`BENCH_FLOOR_MODE=replay` streams the frames in the JSON list at `BENCH_FLOOR_FRAMES` (the
frames a real answer sent, as received); `idle` sends the headers, then holds the stream open
waiting on a condition that nothing notifies, with a heartbeat comment every 15 s. Neither
touches a database. `GET /login` answers a small fixed page.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator

from flask import Flask, Response, jsonify

HEARTBEAT = 15.0
MAX_STREAM_SECONDS = float(os.environ.get("BENCH_FLOOR_MAX_SECONDS", "1800"))
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
LOGIN_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title>
</head><body><main><h1>Sign in</h1><form method="post" action="/login">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password"></label>
<button>Sign in</button></form></main></body></html>"""


def _frames() -> list[str]:
    path = os.environ.get("BENCH_FLOOR_FRAMES")
    if not path:
        return []
    with open(path) as f:
        return [str(frame) for frame in json.load(f)]


def _idle() -> Iterator[str]:
    condition = threading.Condition()  # made per stream, after gevent (if any) has patched
    yield ""  # gunicorn sends the headers with the first write, even an empty one
    end = time.monotonic() + MAX_STREAM_SECONDS
    while time.monotonic() < end:
        with condition:
            condition.wait(HEARTBEAT)
        yield ": heartbeat\n\n"


def create_app() -> Flask:
    """Build the floor app."""
    app = Flask(__name__)
    mode = os.environ.get("BENCH_FLOOR_MODE", "replay")
    frames = _frames()

    @app.get("/login")
    def login() -> Response:
        return Response(LOGIN_PAGE, mimetype="text/html", headers={"Cache-Control": "no-store"})

    @app.post("/api/chat/sessions")
    def create() -> tuple[Response, int]:
        return jsonify(id=uuid.uuid4().hex), 201

    @app.post("/api/chat/sessions/<session_id>/messages")
    def ask(session_id: str) -> tuple[Response, int]:
        message_id = uuid.uuid4().hex
        url = f"/api/chat/sessions/{session_id}/messages/{message_id}/stream"
        return jsonify(message_id=message_id, stream_url=url), 202

    @app.get("/api/chat/sessions/<session_id>/messages/<message_id>/stream")
    def stream(session_id: str, message_id: str) -> Response:
        body = _idle() if mode == "idle" else iter(frames)
        return Response(body, mimetype="text/event-stream", headers=SSE_HEADERS)

    return app
