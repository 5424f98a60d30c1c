"""The Claude engine: `POST $ANTHROPIC_BASE_URL/v1/messages` with `"stream": true`.

Retries 429, 529 and an `overloaded_error` that arrives before any content, with backoff
that honours `retry-after`; any other failure is a clear `EngineError`.
"""

from __future__ import annotations

import codecs
import json
import logging
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

from ..sse import SSEDecoder
from ._base import EngineError, ModelRequest

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
API_VERSION = "2023-06-01"
RETRYABLE_STATUS = frozenset({429, 529})
RETRYABLE_ERRORS = frozenset({"overloaded_error", "rate_limit_error"})
MAX_RETRY_AFTER = 60.0  # A server asking for longer is treated as asking for a minute.


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None) -> None:
        super().__init__(reason)
        self.wait = wait


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    if seconds is None or not math.isfinite(seconds):
        return None
    return min(max(0.0, seconds), MAX_RETRY_AFTER)


def _error_message(response: requests.Response) -> str:
    try:
        body = response.json()
        return str(body["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.reason or "no details"


class ClaudeEngine:
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
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._api_key = api_key
        self._url = base_url.rstrip("/") + "/v1/messages"
        self._model = model
        self._max_retries = max_retries
        self._backoff = backoff
        self._timeout = timeout
        self._sleep = sleep
        self._session = requests.Session()

    def close(self) -> None:
        """Close the connection pool."""
        self._session.close()

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        """Yield the stream's events, retrying overload and rate limits before any content."""
        attempt = 0
        while True:
            try:
                yield from self._attempt(request)
                return
            except _Retry as retry:
                attempt += 1
                if attempt > self._max_retries:
                    message = f"Claude is unavailable ({retry}); try again shortly."
                    raise EngineError(message) from None
                wait = retry.wait if retry.wait is not None else self._backoff * 2 ** (attempt - 1)
                log.warning("Claude %s; retry %d in %.1f s", retry, attempt, wait)
                self._sleep(wait)

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
            raise EngineError(f"Could not reach Claude: {type(exc).__name__}") from None
        with response:
            if response.status_code in RETRYABLE_STATUS:
                raise _Retry(f"HTTP {response.status_code}", _retry_after(response))
            if response.status_code != 200:
                raise EngineError(
                    f"Claude refused the request (HTTP {response.status_code}): "
                    f"{_error_message(response)}"
                )
            yield from self._events(response)

    def _events(self, response: requests.Response) -> Iterator[dict[str, Any]]:
        decoder = SSEDecoder()
        # A character may be split across two network chunks.
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        started = False
        try:
            for chunk in response.iter_content(chunk_size=None):
                for event in decoder.decode(text.decode(chunk)):
                    data = _load(event.data)
                    kind = data.get("type", event.event)
                    if kind == "error":
                        raw = data.get("error")
                        error: dict[str, Any] = raw if isinstance(raw, dict) else {}
                        error_type = str(error.get("type", "error"))
                        if error_type in RETRYABLE_ERRORS and not started:
                            raise _Retry(error_type, None)
                        raise EngineError(f"Claude stopped with {error_type}: "
                                          f"{error.get('message', 'no details')}")
                    if kind == "ping":
                        continue
                    started = started or kind == "content_block_start"
                    yield data
                    if kind == "message_stop":
                        return
        except requests.RequestException as exc:
            raise EngineError(f"The connection to Claude broke: {type(exc).__name__}") from None
        raise EngineError("Claude's stream ended before message_stop.")


def _load(data: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except json.JSONDecodeError:
        raise EngineError("Claude sent an event that is not JSON.") from None
    if not isinstance(value, dict):
        raise EngineError("Claude sent an event that is not a JSON object.")
    return value
