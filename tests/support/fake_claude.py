"""A fake Claude API: a real HTTP server on loopback speaking the streaming wire format.

Each POST /v1/messages takes the next scripted reply: a list of stream events (sent as
`event:`/`data:` frames, in chunks that split lines, as a real network does), or an HTTP
error. Every request body is kept for the test to inspect.

The fake is as strict as the API (`claude_contract.py`, from the `anthropic` SDK's own types
and parser): a request the API would refuse is answered 400 `invalid_request_error`, a
retired model 404 `not_found_error`, and either fails the test when the fake closes unless
the test says it expects it (`expect_refusals`). Every scripted stream must read back through
the SDK's parser (`Unchecked` marks the few that are broken on purpose). Each `message_start`
reports the request's model and its usage the way the API counts prompt caching
(`CacheLedger`); every answer carries a `request-id` header.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.claude_contract import is_retired, read_back, request_problems


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


@dataclass
class Unchecked:
    """Events sent as they are, not read back through the SDK: a stream broken on purpose."""

    events: list[dict[str, Any]]


@dataclass
class Dropped:
    """Events sent, then the connection closed mid-stream (no end of the chunked body)."""

    events: list[dict[str, Any]]


Reply = list[dict[str, Any]] | HttpError | Paced | Unchecked | Dropped

MIN_CACHEABLE_TOKENS = 1024  # a shorter prefix is not cached (prompt-caching guide)
LOOKBACK_BLOCKS = 20  # a breakpoint also finds a cached prefix this many blocks before it


class CacheLedger:
    """Count a request's input tokens as the API bills them with prompt caching.

    The prompt is read as blocks in the API's order (tools, system, messages). Each block
    marked `cache_control` is a breakpoint: a prefix ending there, or up to 20 blocks before
    it, that an earlier request cached is read from the cache; the rest up to the last
    breakpoint is written to it; what follows is plain input. Tokens are estimated at one per
    four characters of JSON, a stand-in for the tokenizer that keeps the accounting honest.
    """

    def __init__(self) -> None:
        self._cached: set[str] = set()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        blocks = _prompt_blocks(body)
        sizes = [len(json.dumps(_plain(b), sort_keys=True)) // 4 + 1 for b in blocks]
        totals = list(itertools.accumulate(sizes))
        keys = _prefix_keys(blocks)
        marks = [i for i, b in enumerate(blocks) if isinstance(b, dict) and "cache_control" in b]
        read = 0
        for mark in marks:
            for end in range(mark, max(-1, mark - LOOKBACK_BLOCKS), -1):
                if keys[end] in self._cached:
                    read = max(read, totals[end])
                    break
        written = 0
        for mark in marks:
            if totals[mark] >= MIN_CACHEABLE_TOKENS:
                self._cached.add(keys[mark])
                written = max(written, totals[mark] - read)
        total = totals[-1] if totals else 0
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }


def _prompt_blocks(body: dict[str, Any]) -> list[Any]:
    system = body.get("system", [])
    blocks: list[Any] = list(body.get("tools") or [])
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            blocks.append({"role": message.get("role"), "type": "text", "text": content})
        else:
            blocks += [{"role": message.get("role"), **b} for b in content or []]
    return blocks


def _plain(block: dict[str, Any]) -> dict[str, Any]:
    """The block as the model reads it: a breakpoint is no part of the prompt."""
    return {k: v for k, v in block.items() if k != "cache_control"}


def _prefix_keys(blocks: list[Any]) -> list[str]:
    digest, keys = hashlib.sha256(), []
    for block in blocks:
        digest.update(json.dumps(_plain(block), sort_keys=True).encode())
        keys.append(digest.copy().hexdigest())
    return keys


def text_reply(
    *blocks: tuple[str, list[dict[str, Any]]], stop: str = "end_turn", citations_first: bool = False
) -> list[dict[str, Any]]:
    """Return the events of a message whose text blocks carry the given citations."""
    events: list[dict[str, Any]] = [message_start()]
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
    return events + message_end(stop)


def tool_reply(*calls: tuple[str, str, dict[str, Any]], preface: str = "") -> list[dict[str, Any]]:
    """Return the events of a message that calls tools (id, name, input)."""
    events: list[dict[str, Any]] = [message_start()]
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
    return events + message_end("tool_use")


def message_start() -> dict[str, Any]:
    """Return a `message_start` as the API sends it (the fake fills in model and usage)."""
    return {
        "type": "message_start",
        "message": {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
            },
        },
    }


def message_end(stop: str) -> list[dict[str, Any]]:
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
    """Serve scripted replies on 127.0.0.1; use as a context manager.

    `problems` lists each refused request's reasons (a request the API would refuse, a
    retired model, a script the SDK cannot read); closing the fake fails the test when there
    are any, unless it was made with `expect_refusals=True`. `usages` has the usage each
    `message_start` reported, in order.
    """

    def __init__(
        self, replies: Sequence[Reply] | None = None, *, expect_refusals: bool = False
    ) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.problems: list[str] = []
        self.usages: list[dict[str, int]] = []
        self.expect_refusals = expect_refusals
        self.ledger = CacheLedger()
        self._ids = itertools.count(1)
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

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self.problems and not self.expect_refusals and exc_type is None:
            raise AssertionError("the API would refuse: " + "; ".join(self.problems))

    def _next(self, body: Any, headers: dict[str, str]) -> tuple[Reply, str]:
        with self._lock:
            request_id = f"req_fake{next(self._ids):04d}"
            self.requests.append(body)
            self.headers.append(headers)
            problems = request_problems(body, headers)
            if problems:
                self.problems += problems
                return _api_error(400, "invalid_request_error", "; ".join(problems)), request_id
            if is_retired(str(body["model"])):
                self.problems.append(f"model {body['model']} is retired")
                return _api_error(404, "not_found_error", f"model: {body['model']}"), request_id
            if not self.replies:
                return _api_error(500, "api_error", "script exhausted"), request_id
            reply = self.replies.pop(0)
            events = reply if isinstance(reply, list) else getattr(reply, "events", None)
            if events is not None:
                self._fill(events, body)
                if not isinstance(reply, Unchecked | Dropped):
                    try:
                        read_back(events[:])  # a plain copy: a script's own iterator may wait
                    except ValueError as exc:
                        self.problems.append(f"a scripted stream the SDK cannot read: {exc}")
            return reply, request_id

    def _fill(self, events: list[dict[str, Any]], body: dict[str, Any]) -> None:
        """Give each `message_start` the request's model and its usage, as the API does.

        The event is replaced, not changed: a script may be sent more than once.
        """
        for i in range(len(events)):
            event = events[i]
            message = event.get("message") if event.get("type") == "message_start" else None
            if isinstance(message, dict):
                usage = {**self.ledger.usage(body), "output_tokens": 1}
                events[i] = {
                    **event,
                    "message": {**message, "model": body["model"], "usage": usage},
                }
                self.usages.append(usage)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                try:
                    body: Any = json.loads(self.rfile.read(length))
                except ValueError:
                    body = None
                reply, request_id = fake._next(
                    body, {k.lower(): v for k, v in self.headers.items()}
                )
                if isinstance(reply, HttpError):
                    payload = json.dumps({**reply.body, "request_id": request_id}).encode()
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("request-id", request_id)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                # Chunked, as the real API streams: a client sees each chunk as it is sent.
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("request-id", request_id)
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
                        events = reply if isinstance(reply, list) else reply.events
                        for chunk in _frames(events):
                            self._chunk(chunk)
                        if isinstance(reply, Dropped):
                            return  # no last chunk: the line broke mid-answer
                    self._chunk(b"")
                except OSError:  # the client went away (a killed worker): nothing to send it
                    with fake._lock:
                        fake.abandoned += 1

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler


def _api_error(status: int, kind: str, message: str) -> HttpError:
    return HttpError(status, {"type": "error", "error": {"type": kind, "message": message}})


def stopped(events: list[dict[str, Any]], reason: str, **delta: Any) -> list[dict[str, Any]]:
    """Return a scripted reply with another stop reason (and `stop_details` and the like)."""
    end = message_end(reason)
    end[0]["delta"].update(delta)
    return [*events[:-2], *end]


def cut_mid_tool_input(preface: str, name: str, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a reply whose tool call is cut by `max_tokens` halfway through its input JSON."""
    events = tool_reply(("tu_cut", name, tool_input), preface=preface)
    deltas = [
        i for i, e in enumerate(events) if e.get("delta", {}).get("type") == "input_json_delta"
    ]
    kept = events[: deltas[len(deltas) // 2]]
    return [*kept, {"type": "content_block_stop", "index": 1}, *message_end("max_tokens")]


def thinking_block(index: int, thought: str, signature: str = "sig-abc") -> list[dict[str, Any]]:
    """Return the events of one thinking block, signed, as extended thinking streams it."""
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "thinking_delta", "thinking": thought},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "signature_delta", "signature": signature},
        },
        {"type": "content_block_stop", "index": index},
    ]


def with_blocks_first(
    blocks: list[dict[str, Any]], reply: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Return `reply` with the events of other blocks before its own (indexes shifted)."""
    count = len({e["index"] for e in blocks if "index" in e})
    shifted = copy.deepcopy(reply[1:])
    for event in shifted:
        if "index" in event:
            event["index"] += count
    return [reply[0], *blocks, *shifted]
