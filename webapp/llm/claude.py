"""The Claude engine: `POST $ANTHROPIC_BASE_URL/v1/messages` with `"stream": true`.

Retries what may pass before any content has streamed: 408, 409, 429, 5xx and 529, an
`overloaded_error` event, a refused or dropped connection. Waits grow exponentially with
jitter, honour `retry-after` and `retry-after-ms`, and stop at a total budget. One round is
bounded as a whole (`round_seconds`), pings included. Any other failure is an `ModelError`.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import logging
import math
import random
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

from ..sse import SSEDecoder
from .base import UNAVAILABLE, ModelError, ModelRequest

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
API_VERSION = "2023-06-01"
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
RETRYABLE_ERRORS = frozenset({"overloaded_error", "rate_limit_error"})
MAX_RETRY_AFTER = 60.0  # A server asking for longer is treated as asking for a minute.
TOO_SLOW = "This answer took too long, so it was stopped. Please ask again."
REFUSED = (
    "The assistant could not take this question as it stands. Try asking it in other "
    "words, or start a new chat if this one is long."
)
RETRY_BUDGET = 90.0  # the most all of one round's waits may add up to
ROUND_SECONDS = 300.0  # the most one model round may take, whatever the server sends


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None) -> None:
        super().__init__(reason)
        self.wait = wait


def _retry_after(response: requests.Response) -> float | None:
    """The server's own wait: `retry-after-ms` (milliseconds) first, then `retry-after`."""
    for header, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            seconds = float(response.headers[header]) / scale
        except (KeyError, ValueError):
            continue
        if math.isfinite(seconds):
            return min(max(0.0, seconds), MAX_RETRY_AFTER)
    return None


def _error_message(response: requests.Response) -> str:
    try:
        body = response.json()
        return str(body["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.reason or "no details"


class ClaudeModel:
    """Stream answers from the Claude Messages API."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        model: str = DEFAULT_MODEL,
        max_retries: int = 4,
        backoff: float = 1.0,
        timeout: float = 120.0,
        round_seconds: float = ROUND_SECONDS,
        retry_budget: float = RETRY_BUDGET,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._api_key = api_key
        self._url = base_url.rstrip("/") + "/v1/messages"
        self._model = model
        self._max_retries = max_retries
        self._backoff = backoff
        self._timeout = timeout
        self._round_seconds = round_seconds
        self._retry_budget = retry_budget
        self._sleep = sleep
        self._session = requests.Session()
        self._response: requests.Response | None = None
        self._closed = False

    def close(self) -> None:
        """Close the connection pool, and abandon a response being read (a cancelled turn).

        A stop comes from another greenlet or thread than the one reading, so the response is
        not closed here (its reader holds the buffer: closing it under the reader is a
        reentrant call); its socket is shut down instead, and the reader, woken with nothing
        more to read, closes the response itself and reports the stop.
        """
        self._closed = True
        response = self._response
        if response is not None:
            _shut_down(response)
        self._session.close()

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        """Yield the stream's events, retrying overload and rate limits before any content."""
        attempt, waited = 0, 0.0
        while True:
            try:
                yield from self._attempt(request)
                return
            except _Retry as retry:
                attempt += 1
                wait = (
                    retry.wait
                    if retry.wait is not None
                    else (self._backoff * 2 ** (attempt - 1) * (0.5 + random.random()))
                )
                if attempt > self._max_retries or waited + wait > self._retry_budget:
                    message = f"Claude is unavailable ({retry}); try again shortly."
                    raise ModelError(message) from None
                log.warning("Claude %s; retry %d in %.1f s", retry, attempt, wait)
                self._sleep(wait)
                waited += wait

    def _attempt(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        body = {
            "model": self._model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": request.messages,
            "tools": request.tools,
            "stream": True,
        }
        headers = {
            "x-api-key": self._api_key,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        try:
            response = self._session.post(
                self._url, json=body, headers=headers, stream=True, timeout=self._timeout
            )
        except requests.RequestException as exc:
            raise _Retry(f"Could not reach Claude: {type(exc).__name__}", None) from None
        self._response = response
        with response:
            if response.status_code in RETRYABLE_STATUS:
                raise _Retry(f"HTTP {response.status_code}", _retry_after(response))
            if response.status_code != 200:
                raise ModelError(
                    f"Claude refused the request (HTTP {response.status_code}): "
                    f"{_error_message(response)}",
                    REFUSED if 400 <= response.status_code < 500 else UNAVAILABLE,
                )
            yield from self._events(response)

    def _events(self, response: requests.Response) -> Iterator[dict[str, Any]]:
        decoder = SSEDecoder()
        # A character may be split across two network chunks.
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        started = False
        deadline = time.monotonic() + self._round_seconds
        try:
            for chunk in response.iter_content(chunk_size=None):
                if time.monotonic() > deadline:
                    raise ModelError("The model took too long to answer.", TOO_SLOW)
                for event in decoder.decode(text.decode(chunk)):
                    data = _load(event.data)
                    kind = data.get("type", event.event)
                    if kind == "error":
                        raw = data.get("error")
                        error: dict[str, Any] = raw if isinstance(raw, dict) else {}
                        error_type = str(error.get("type", "error"))
                        if error_type in RETRYABLE_ERRORS and not started:
                            raise _Retry(error_type, None)
                        raise ModelError(
                            f"Claude stopped with {error_type}: "
                            f"{error.get('message', 'no details')}"
                        )
                    if kind == "ping":
                        continue
                    started = started or kind == "content_block_start"
                    yield data
                    if kind == "message_stop":
                        return
        except Exception as exc:
            if self._closed:  # abandoned on purpose: the turn was stopped
                raise ModelError("The answer was stopped.", "The answer was stopped.") from None
            if not isinstance(exc, requests.RequestException):
                raise
            reason = f"The connection to Claude broke: {type(exc).__name__}"
            if not started:
                raise _Retry(reason, None) from None
            raise ModelError(reason) from None
        raise ModelError("Claude's stream ended before message_stop.")


def _shut_down(response: requests.Response) -> None:
    """Shut down the connection under `response` while it is open; else there is no reader."""
    try:
        fd = response.raw.fileno()
    except (OSError, ValueError, AttributeError):  # read to its end, closed, or no file under it
        return
    # A duplicate of the descriptor: shutting it down ends the connection for the reader too,
    # and closing the duplicate leaves the reader's own descriptor to the reader.
    with (
        contextlib.suppress(OSError),
        socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as sock,
    ):
        sock.shutdown(socket.SHUT_RDWR)


def _load(data: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except json.JSONDecodeError:
        raise ModelError("Claude sent an event that is not JSON.") from None
    if not isinstance(value, dict):
        raise ModelError("Claude sent an event that is not a JSON object.")
    return value
