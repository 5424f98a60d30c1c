"""The one way this app answers with server-sent events."""

from __future__ import annotations

from collections.abc import Iterable

from flask import Response
from werkzeug.exceptions import TooManyRequests

from ..chat import ChatService

# Never stored (a user's answer), and not buffered by a proxy in front (nginx honours
# X-Accel-Buffering).
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def sse_response(body: Iterable[str]) -> Response:
    """Return a streaming `text/event-stream` response for already-framed events."""
    return Response(body, mimetype="text/event-stream", headers=SSE_HEADERS)


TOO_MANY_STREAMS = (
    "You have as many answers open as one person may; close a tab or wait for an answer to finish."
)
STREAM_RETRY_SECONDS = 5


def counted_sse_response(service: ChatService, user_id: int, body: Iterable[str]) -> Response:
    """`sse_response`, counted among the user's open streams until it closes (429 past cap)."""
    slot = service.open_stream(user_id)
    if slot is None:
        raise TooManyRequests(TOO_MANY_STREAMS, retry_after=STREAM_RETRY_SECONDS)
    response = sse_response(body)
    # Called when the server closes the response: finished, or its client went away.
    response.call_on_close(lambda: service.close_stream(slot))
    return response
