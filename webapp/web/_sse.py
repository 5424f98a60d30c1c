"""The one way this app answers with server-sent events."""

from __future__ import annotations

from collections.abc import Iterable

from flask import Response

# Never stored (a user's answer), and not buffered by a proxy in front (nginx honours
# X-Accel-Buffering).
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def sse_response(body: Iterable[str]) -> Response:
    """Return a streaming `text/event-stream` response for already-framed events."""
    return Response(body, mimetype="text/event-stream", headers=SSE_HEADERS)
