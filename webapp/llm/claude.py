"""The Claude engine: `POST $ANTHROPIC_BASE_URL/v1/messages` with `"stream": true`.

Errors are sorted by whose they are (https://docs.claude.com/en/api/errors):
- passing trouble (408, 409, 429, every 5xx, an `overloaded_error` event, a refused or dropped
  connection before any content) is retried, with exponential waits and jitter that honour
  `retry-after-ms` / `retry-after`, within a total budget; an `x-should-retry` header
  overrides the status, as the SDK obeys it;
- the operator's (401 key, 402 billing, 403 permission, 404 model name) says the assistant is
  unavailable, and logs once per cause which setting to fix;
- the product's own (400 for a request it built) is logged with what is needed to fix it;
- a request too long for the context window is `ContextTooLong`, so the turn can send less;
- a reply that breaks off after content is `StreamCut`, so the turn can continue it.

After `close()` (the turn is over: stopped, past its deadline, taken over) nothing is retried
and no wait goes on: the round ends at once. One round is bounded as a whole
(`round_seconds`), pings included. Prompt caching marks the tools, the system prompt and the
conversation's last block (https://docs.claude.com/en/docs/build-with-claude/prompt-caching).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import logging
import math
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

from ..settings import DEFAULT_BASE_URL, DEFAULT_MODEL
from ..sse import SSEDecoder
from .base import (
    OUR_FAULT,
    STOPPED,
    UNAVAILABLE,
    ContextTooLong,
    ModelError,
    ModelRequest,
    OperatorError,
    StreamCut,
)

log = logging.getLogger(__name__)

# DEFAULT_MODEL (webapp/settings.py): a current model (the models overview: "the best
# combination of speed and intelligence"), not in the SDK's deprecated-models table
# (tests/test_llm_claude_contract.py checks).
API_VERSION = "2026-10-21"  # the current one (the versions page; the SDK sends it too)
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every status from 500 on
RETRYABLE_ERRORS = frozenset({"overloaded_error", "rate_limit_error", "api_error"})
MAX_RETRY_AFTER = 60.0  # A server asking for longer is treated as asking for a minute.
TOO_SLOW = "This answer took too long, so it was stopped. Please ask again."
RETRY_BUDGET = 90.0  # the most all of one round's waits may add up to
ROUND_SECONDS = 300.0  # the most one model round may take, whatever the server sends
EPHEMERAL = {"type": "ephemeral"}

# What the operator must fix, by status: the setting and what is wrong with it.
_OPERATOR_CAUSES = {
    401: ("ANTHROPIC_API_KEY", "the key was refused (authentication_error)"),
    402: ("ANTHROPIC_API_KEY", "the key's account cannot pay for requests (billing_error)"),
    403: ("ANTHROPIC_API_KEY", "the key may not use this model or feature (permission_error)"),
    404: ("ANTHROPIC_MODEL", "the model {model!r} was not found: retired or misspelt"),
}
_TOLD: set[tuple[int, str, str]] = set()  # operator causes already logged by this process
_TOLD_LOCK = threading.Lock()


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


def _should_retry(response: requests.Response) -> bool:
    """Whether to try again: the server's `x-should-retry` first, then the status."""
    said = response.headers.get("x-should-retry", "").strip().lower()
    if said in ("true", "false"):
        return said == "true"
    return response.status_code in RETRYABLE_STATUS or response.status_code >= 500


def _error_body(response: requests.Response) -> tuple[str, str]:
    """Return the error's type and message from its JSON body, as far as it has them."""
    try:
        error = response.json()["error"]
        return str(error.get("type", "error")), str(error.get("message", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        return "error", response.reason or "no details"


def _request_id(response: requests.Response) -> str:
    return response.headers.get("request-id", "none")


def _too_long(status: int, message: str) -> bool:
    return status == 413 or (status == 400 and "too long" in message.lower())


def _shape(body: dict[str, Any]) -> str:
    """Describe a request for the log without its words: roles and block types only."""
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        kinds = (
            ["text"] if isinstance(content, str) else [str(b.get("type")) for b in content or []]
        )
        parts.append(f"{message.get('role')}[{','.join(kinds)}]")
    return f"{len(body.get('tools', []))} tools; " + " ".join(parts)


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
        prompt_cache: bool = True,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        self._api_key = api_key
        self._url = base_url.rstrip("/") + "/v1/messages"
        self._model = model
        self._max_retries = max_retries
        self._backoff = backoff
        self._timeout = timeout
        self._round_seconds = round_seconds
        self._retry_budget = retry_budget
        self._prompt_cache = prompt_cache
        self._stopped = threading.Event()
        # A wait between retries ends early when the turn is over.
        self._sleep = sleep if sleep is not None else self._stopped.wait
        self._session = requests.Session()
        self._response: requests.Response | None = None

    def close(self) -> None:
        """Close the connection pool, and abandon a response being read (a cancelled turn).

        A stop comes from another greenlet or thread than the one reading, so the response is
        not closed here (its reader holds the buffer: closing it under the reader is a
        reentrant call); its socket is shut down instead, and the reader, woken with nothing
        more to read, closes the response itself and reports the stop. From now on nothing
        is retried: a wait between retries ends, and no request is sent.
        """
        self._stopped.set()
        response = self._response
        if response is not None:
            _shut_down(response)
        self._session.close()

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        """Yield the stream's events, retrying passing trouble before any content."""
        attempt, waited = 0, 0.0
        while True:
            if self._stopped.is_set():
                raise ModelError("the turn is over; no request sent", STOPPED)
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
                    raise ModelError(f"Claude is unavailable ({retry}); gave up") from None
                if self._stopped.is_set():
                    raise ModelError("the turn is over; not retried", STOPPED) from None
                log.warning("Claude %s; retry %d in %.1f s", retry, attempt, wait)
                self._sleep(wait)
                waited += wait

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """Return the JSON body of one streaming request."""
        system: str | list[dict[str, Any]] = request.system
        tools, messages = request.tools, request.messages
        if self._prompt_cache:
            system = [{"type": "text", "text": request.system, "cache_control": EPHEMERAL}]
            if tools:
                tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
            messages = _cache_last_block(messages)
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_tokens,
            "messages": messages,
            "tools": tools,
            "stream": True,
        }
        if request.system:  # the API refuses an empty text block
            body["system"] = system
        return body

    def _attempt(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        body = self.body(request)
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
            if self._stopped.is_set():
                raise ModelError("the turn is over", STOPPED) from None
            raise _Retry(f"could not be reached: {type(exc).__name__}", None) from None
        self._response = response
        with response:
            if response.status_code != 200:
                self._refused(response, body)
            yield from self._events(response)

    def _refused(self, response: requests.Response, body: dict[str, Any]) -> None:
        """Raise what a non-200 answer means: retry, the operator's, ours, or too long."""
        status, request_id = response.status_code, _request_id(response)
        kind, message = _error_body(response)
        if _should_retry(response):
            raise _Retry(
                f"answered HTTP {status} {kind} (request {request_id})", _retry_after(response)
            )
        detail = f"Claude answered HTTP {status} {kind} (request {request_id}): {message}"
        if _too_long(status, message):
            raise ContextTooLong(detail)
        if status in _OPERATOR_CAUSES:
            setting, said = _OPERATOR_CAUSES[status]
            what = said.format(model=self._model)
            cause = (status, setting, self._model)
            with _TOLD_LOCK:
                first = cause not in _TOLD
                _TOLD.add(cause)
            if first:  # once per cause: every question after it would say the same
                log.error("Claude cannot be used until %s is fixed: %s. %s", setting, what, detail)
            raise OperatorError(detail, setting, what)
        if 400 <= status < 500:
            # A request this product built and the API refused: a bug here, not the person's.
            log.error("Claude refused a request this service built (%s). %s", _shape(body), detail)
            raise ModelError(detail, OUR_FAULT)
        raise ModelError(detail, UNAVAILABLE)

    def _events(self, response: requests.Response) -> Iterator[dict[str, Any]]:
        decoder = SSEDecoder()
        # A character may be split across two network chunks.
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        started = False
        request_id = _request_id(response)
        deadline = time.monotonic() + self._round_seconds
        try:
            for chunk in response.iter_content(chunk_size=None):
                if time.monotonic() > deadline:
                    raise ModelError("The model took too long to answer.", TOO_SLOW)
                for event in decoder.decode(text.decode(chunk)):
                    data = _load(event.data)
                    kind = data.get("type", event.event)
                    if kind == "error":
                        self._stream_error(data, started, request_id)
                    if kind == "ping":
                        continue
                    started = started or kind == "content_block_start"
                    if kind == "message_delta":
                        _log_usage(data, request_id)
                    yield data
                    if kind == "message_stop":
                        return
        except (ModelError, _Retry):
            raise
        except Exception as exc:
            if self._stopped.is_set():  # abandoned on purpose: the turn was stopped
                raise ModelError("The answer was stopped.", STOPPED) from None
            if not isinstance(exc, requests.RequestException):
                raise
            reason = f"the connection broke: {type(exc).__name__} (request {request_id})"
            if not started:
                raise _Retry(reason, None) from None
            raise StreamCut(f"Claude's reply broke off: {reason}") from None
        if self._stopped.is_set():
            raise ModelError("The answer was stopped.", STOPPED)
        if not started:
            raise _Retry(f"the stream ended before any content (request {request_id})", None)
        raise StreamCut(f"Claude's stream ended before message_stop (request {request_id})")

    def _stream_error(self, data: dict[str, Any], started: bool, request_id: str) -> None:
        raw = data.get("error")
        error: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = str(error.get("type", "error"))
        detail = f"Claude stopped with {kind} (request {request_id}): {error.get('message', '')}"
        if kind in RETRYABLE_ERRORS:
            if not started:
                raise _Retry(f"sent {kind} (request {request_id})", None)
            raise StreamCut(detail)  # continue what was written, as after a dropped line
        raise ModelError(detail)


def _cache_last_block(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the messages with a cache breakpoint on the last block (a copy; none changed).

    The next round of the same turn resends all of it and adds to the end, so it reads the
    whole conversation so far from the cache.
    """
    if not messages:
        return messages
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, str):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        blocks = list(content)
    else:
        return messages
    if blocks[-1].get("type") in ("thinking", "redacted_thinking") or not _cacheable(blocks[-1]):
        return messages
    blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
    return [*messages[:-1], {**last, "content": blocks}]


def _cacheable(block: dict[str, Any]) -> bool:
    # An empty text block cannot carry a breakpoint (the API refuses empty text blocks).
    return not (block.get("type") == "text" and not block.get("text"))


_USAGE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def _log_usage(data: dict[str, Any], request_id: str) -> None:
    """Log how a round ended and what it cost (token counts only: no words, no ids of users)."""
    usage, delta = data.get("usage"), data.get("delta")
    if isinstance(usage, dict) and isinstance(delta, dict):
        counts = ", ".join(f"{k} {usage[k]}" for k in _USAGE if isinstance(usage.get(k), int))
        log.info(
            "Claude round ended: %s (request %s; %s)", delta.get("stop_reason"), request_id, counts
        )


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
