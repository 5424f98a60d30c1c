"""The one way this app answers with server-sent events."""

from __future__ import annotations

from collections.abc import Iterable

from flask import Response

# No caching, and no buffering in a proxy in front (nginx honours X-Accel-Buffering).
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def sse_response(body: Iterable[str]) -> Response:
    """Return a streaming `text/event-stream` response for already-framed events."""
    return Response(body, mimetype="text/event-stream", headers=SSE_HEADERS)
