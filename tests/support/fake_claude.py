"""A fake Claude API: a real HTTP server on loopback speaking the streaming wire format.

Each POST /v1/messages takes the next scripted reply: a list of stream events (sent as
`event:`/`data:` frames, in chunks that split lines, as a real network does), or an HTTP
error. Every request body is kept for the test to inspect.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class HttpError:
    status: int
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Paced:
    """A reply sent one event at a time, `seconds` apart, as a slow model writes."""

    events: list[dict[str, Any]]
    seconds: float


Reply = list[dict[str, Any]] | HttpError | Paced


def text_reply(
    *blocks: tuple[str, list[dict[str, Any]]], stop: str = "end_turn", citations_first: bool = False
) -> list[dict[str, Any]]:
    """Return the events of a message whose text blocks carry the given citations."""
    events: list[dict[str, Any]] = [_message_start()]
    for index, (text, citations) in enumerate(blocks):
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
        )
        deltas = [{"type": "text_delta", "text": text[i : i + 7]} for i in range(0, len(text), 7)]
        cites = [{"type": "citations_delta", "citation": c} for c in citations]
        ordered = cites + deltas if citations_first else deltas + cites
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in ordered]
        events.append({"type": "ping"})
        events.append({"type": "content_block_stop", "index": index})
    return events + _message_end(stop)


def tool_reply(*calls: tuple[str, str, dict[str, Any]], preface: str = "") -> list[dict[str, Any]]:
    """Return the events of a message that calls tools (id, name, input)."""
    events: list[dict[str, Any]] = [_message_start()]
    index = 0
    if preface:
        events += [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": preface},
            },
            {"type": "content_block_stop", "index": 0},
        ]
        index = 1
    for tool_id, name, tool_input in calls:
        raw = json.dumps(tool_input)
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
            }
        )
        for i in range(0, len(raw), 5):
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": raw[i : i + 5]},
                }
            )
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    return events + _message_end("tool_use")


def _message_start() -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }


def _message_end(stop: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    ]


def _frames(events: list[dict[str, Any]]) -> Iterator[bytes]:
    wire = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    wire = ": a comment the client must ignore\n\n" + wire
    data = wire.encode()
    # Uneven chunks split lines, frames and multi-byte characters.
    step = 37
    for i in range(0, len(data), step):
        yield data[i : i + step]


class FakeClaude:
    """Serve scripted replies on 127.0.0.1; use as a context manager."""

    def __init__(self, replies: Sequence[Reply] | None = None) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        # Replies whose client hung up before they were sent whole (a turn stopped mid-round).
        self.abandoned = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeClaude:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self.replies:
                return HttpError(
                    500,
                    {
                        "type": "error",
                        "error": {"type": "api_error", "message": "script exhausted"},
                    },
                )
            return self.replies.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                reply = fake._next(body, {k.lower(): v for k, v in self.headers.items()})
                if isinstance(reply, HttpError):
                    payload = json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                # Chunked, as the real API streams: a client sees each chunk as it is sent.
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    if isinstance(reply, Paced):
                        for event in reply.events:
                            self._chunk(
                                f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                            )
                            time.sleep(reply.seconds)
                    else:
                        for chunk in _frames(reply):
                            self._chunk(chunk)
                    self._chunk(b"")
                except OSError:  # the client went away (a killed worker): nothing to send it
                    with fake._lock:
                        fake.abandoned += 1

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler
