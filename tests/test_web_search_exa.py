"""Exa as the search provider: the request shape, the answer mapping and failures, on loopback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from flask import Flask

from webapp import create_app
from webapp.services import close_services, services
from webapp.tools.web_index import LocalWebIndex, WebSearchError
from webapp.tools.web_search import ExaSearch, default_provider, search_web


@dataclass
class FakeExa:
    """What the fake server answers and what it was asked."""

    status: int = 200
    body: bytes = b'{"results": []}'
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def exa() -> Iterator[FakeExa]:
    fake = FakeExa()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            fake.requests.append(
                {
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "json": json.loads(self.rfile.read(length)),
                }
            )
            self.send_response(fake.status)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(fake.body)

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield fake
    server.shutdown()
    server.server_close()


RESULTS = {
    "requestId": "r1",
    "results": [
        {
            "id": "https://www.example.gov/roth",
            "url": "https://www.example.gov/roth",
            "title": "Roth IRA basics",
            "publishedDate": "2024-11-01T00:00:00.000Z",
            "author": None,
            "text": "A Roth IRA is funded with after-tax money. " * 20,
        },
        {"url": "javascript:alert(1)", "title": "bad", "text": "dropped"},
        {"url": "https://www.example.gov/no-title", "text": None},
        "not an object",
    ],
}


def test_the_request_has_exas_shape(exa: FakeExa) -> None:
    exa.body = json.dumps(RESULTS).encode()
    ExaSearch("k-123", base_url=exa.url + "/").search("roth ira", limit=3)
    (request,) = exa.requests
    assert request["path"] == "/search"
    assert request["headers"]["x-api-key"] == "k-123"
    assert request["json"]["query"] == "roth ira"
    assert request["json"]["numResults"] == 3
    assert request["json"]["contents"]["text"]["maxCharacters"] > 0


def test_results_are_mapped_and_bad_ones_dropped(exa: FakeExa) -> None:
    exa.body = json.dumps(RESULTS).encode()
    results = ExaSearch("k", base_url=exa.url).search("roth", limit=5)
    assert [r.url for r in results] == [
        "https://www.example.gov/roth",
        "https://www.example.gov/no-title",
    ]
    first, second = results
    assert first.title == "Roth IRA basics"
    assert first.published_date == "2024-11-01T00:00:00.000Z"
    assert first.text.startswith("A Roth IRA")
    assert first.snippet.endswith("…") and len(first.snippet) <= 241
    assert (second.title, second.text, second.snippet) == (second.url, "", "")


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (500, b"{}", "HTTP 500"),
        (401, b'{"error": "bad key k-123"}', "HTTP 401"),
        (200, b"not json", "unreadable"),
        (200, b'{"results": "nope"}', "unreadable"),
        (200, b"[1, 2]", "unreadable"),
    ],
    ids=["500", "401", "not-json", "results-not-list", "not-object"],
)
def test_service_failures_become_clear_errors(
    exa: FakeExa, status: int, body: bytes, message: str
) -> None:
    exa.status, exa.body = status, body
    with pytest.raises(WebSearchError, match=message) as info:
        ExaSearch("k-123", base_url=exa.url).search("roth")
    assert "k-123" not in str(info.value)


def test_an_unreachable_service_is_a_clear_error() -> None:
    with socket.socket() as s:  # a loopback port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(WebSearchError, match="could not be reached"):
        ExaSearch("k", base_url=f"http://127.0.0.1:{port}", timeout_s=2).search("roth")


@pytest.mark.parametrize(
    ("query", "limit"), [("", 5), ("roth", 0), ("roth", 21)], ids=["empty", "zero", "big"]
)
def test_bad_input_is_refused_before_any_request(exa: FakeExa, query: str, limit: int) -> None:
    with pytest.raises(WebSearchError):
        ExaSearch("k", base_url=exa.url).search(query, limit=limit)
    assert exa.requests == []


def test_search_web_uses_exa_when_the_key_is_set(exa: FakeExa, app: Flask) -> None:
    exa.body = json.dumps(RESULTS).encode()
    configured = create_app({**app.config, "EXA_API_KEY": "env-key", "EXA_BASE_URL": exa.url})
    results = search_web("roth", limit=2, provider=services(configured).web)
    close_services(configured)
    assert [r.url for r in results][0] == "https://www.example.gov/roth"
    assert exa.requests[0]["headers"]["x-api-key"] == "env-key"


@pytest.mark.parametrize(
    ("environ", "kind"),
    [
        ({}, LocalWebIndex),
        ({"EXA_API_KEY": "  "}, LocalWebIndex),
        ({"EXA_API_KEY": "k"}, ExaSearch),
    ],
    ids=["unset", "blank", "set"],
)
def test_the_default_provider_follows_the_environment(environ: dict[str, str], kind: type) -> None:
    assert isinstance(default_provider(environ), kind)
