"""`search_web`: the local index by default, or Exa's search API when `EXA_API_KEY` is set.

Exa's request shape (POST /search with `x-api-key`, `numResults`, `contents.text`) is
implemented here; `EXA_BASE_URL` points it elsewhere, as the tests do with a loopback server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol

import requests

from ..settings import EXA_BASE_URL
from .web_index import (
    WebResult,
    WebSearchError,
    check_limit,
    check_query,
    default_index,
)

SNIPPET_CHARS = 240
MAX_TEXT_CHARS = 8000
MAX_TITLE_CHARS = 300
# Twenty results of MAX_TEXT_CHARS each, escaped as JSON, fit many times over; an answer
# larger than this is refused before it is parsed (a tool result is bounded: docs/architecture.md).
MAX_RESPONSE_BYTES = 2 * 1024 * 1024


class WebSearchProvider(Protocol):
    """Anything that can answer `search(query, limit=...)` with WebResults."""

    def search(self, query: str, *, limit: int = 5) -> list[WebResult]: ...


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    return flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"


def _http_url(value: object) -> str | None:
    if isinstance(value, str) and value.startswith(("https://", "http://")) and len(value) < 2048:
        return value
    return None


def _result(item: Mapping[str, object]) -> WebResult | None:
    url = _http_url(item.get("url"))
    if url is None:
        return None
    title = item.get("title")
    text = item.get("text")
    date = item.get("publishedDate")
    body = text[:MAX_TEXT_CHARS] if isinstance(text, str) else ""
    return WebResult(
        url=url,
        title=title.strip()[:MAX_TITLE_CHARS] if isinstance(title, str) and title.strip() else url,
        snippet=_snippet(body),
        text=body,
        published_date=date if isinstance(date, str) and date else None,
    )


def _read_at_most(response: requests.Response, limit: int) -> bytes | None:
    """Return the body, or None as soon as it is longer than `limit` bytes."""
    body = bytearray()
    for chunk in response.iter_content(64 * 1024):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


class ExaSearch:
    """Exa's /search endpoint with page text, turned into WebResults."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = EXA_BASE_URL,
        timeout_s: float = 10.0,
        session: requests.Session | None = None,
    ) -> None:
        self._api_key = api_key
        self._url = base_url.rstrip("/") + "/search"
        self._timeout = timeout_s
        self._session = session or requests.Session()

    def search(self, query: str, *, limit: int = 5) -> list[WebResult]:
        """POST the query to Exa and return its results that have an http(s) URL."""
        body = {
            "query": check_query(query),
            "numResults": check_limit(limit),
            "contents": {"text": {"maxCharacters": MAX_TEXT_CHARS}},
        }
        try:
            with self._session.post(
                self._url,
                json=body,
                headers={"x-api-key": self._api_key, "accept": "application/json"},
                timeout=self._timeout,
                stream=True,
            ) as response:
                if response.status_code != 200:
                    raise WebSearchError(
                        f"The web search service answered with HTTP {response.status_code}."
                    )
                raw = _read_at_most(response, MAX_RESPONSE_BYTES)
        except requests.RequestException:
            raise WebSearchError("The web search service could not be reached.") from None
        if raw is None:
            raise WebSearchError("The web search service sent too large an answer.")
        try:
            payload = json.loads(raw)
        except ValueError:
            raise WebSearchError("The web search service sent an unreadable answer.") from None
        items = payload.get("results") if isinstance(payload, dict) else None
        if not isinstance(items, list):
            raise WebSearchError("The web search service sent an unreadable answer.")
        results = [_result(item) for item in items if isinstance(item, dict)]
        return [result for result in results if result is not None][:limit]


def default_provider(config: Mapping[str, object] | None = None) -> WebSearchProvider:
    """Return Exa when the app's config (`webapp.settings`) sets `EXA_API_KEY`, else the
    bundled local index (also with no config at all)."""
    given = config or {}
    key = str(given.get("EXA_API_KEY") or "").strip()
    if key:
        base = str(given.get("EXA_BASE_URL") or "").strip() or EXA_BASE_URL
        return ExaSearch(key, base_url=base)
    return default_index()


def search_web(
    query: str, *, limit: int = 5, provider: WebSearchProvider | None = None
) -> list[WebResult]:
    """Search the web (the local index offline) and return up to `limit` results, best first."""
    return (provider or default_provider()).search(query, limit=limit)
