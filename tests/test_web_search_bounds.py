"""Exa's answer is read within bounds: a huge answer is refused before it is parsed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from webapp.tools.web_index import WebSearchError
from webapp.tools.web_search import MAX_RESPONSE_BYTES, MAX_TITLE_CHARS, ExaSearch


@pytest.fixture
def answer() -> Iterator[tuple[list[bytes], str]]:
    """A loopback server that answers each POST with the body in the list (chunked)."""
    bodies: list[bytes] = [b""]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.end_headers()
            body = bodies[0]
            try:
                for start in range(0, len(body), 256 * 1024):
                    piece = body[start : start + 256 * 1024]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass  # the client stopped reading: what the test wants

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield bodies, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _results(text: str, title: str = "A page") -> bytes:
    return json.dumps(
        {"results": [{"url": "https://example.com/a", "title": title, "text": text}]}
    ).encode()


def test_an_answer_past_the_bound_is_refused(answer: tuple[list[bytes], str]) -> None:
    bodies, url = answer
    bodies[0] = _results("x" * (MAX_RESPONSE_BYTES + 1))
    with pytest.raises(WebSearchError, match="too large"):
        ExaSearch("k", base_url=url).search("q")


def test_an_answer_within_the_bound_is_read(answer: tuple[list[bytes], str]) -> None:
    bodies, url = answer
    bodies[0] = _results("y" * 100_000, title="T" * 5000)
    (result,) = ExaSearch("k", base_url=url).search("q")
    assert result.url == "https://example.com/a"
    assert len(result.text) == 8000 and len(result.title) == MAX_TITLE_CHARS
