"""A small asyncio HTTP/1.1 client for the service benchmarks: requests, SSE streams, stats.

Raw asyncio streams rather than a full client library, so that thousands of idle streams
cost the client almost nothing and every wait has its own deadline. Each request uses its
own connection (`Connection: close`), as a new visitor's would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

HOST = "127.0.0.1"
MAX_HEADER_BYTES = 64 * 1024


class HttpError(Exception):
    """A request that did not get the answer it needed; the message says what came instead."""


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One event as received; `at` is the wall-clock time its last byte arrived."""

    event: str
    data: str
    id: str | None
    raw: str
    at: float
    comment: bool = False


def _request_bytes(
    method: str, path: str, port: int, headers: dict[str, str] | None, body: bytes | None
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        raise HttpError("the server closed the connection before answering") from exc
    except asyncio.LimitOverrunError as exc:
        raise HttpError("the response headers are too long") from exc
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise HttpError(f"not an HTTP status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def _body_chunks(
    reader: asyncio.StreamReader, headers: dict[str, str]
) -> AsyncIterator[bytes]:
    """Yield the body as it arrives: chunked, sized, or up to the connection's end."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            line = await reader.readline()
            if not line:
                raise HttpError("the server closed the connection inside a chunked body")
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()).strip():
                    pass  # trailers
                return
            yield await reader.readexactly(size)
            await reader.readexactly(2)
    elif "content-length" in headers:
        remaining = int(headers["content-length"])
        while remaining > 0:
            data = await reader.read(min(remaining, 65536))
            if not data:
                raise HttpError("the server closed the connection inside the body")
            remaining -= len(data)
            yield data
    else:
        while data := await reader.read(65536):
            yield data


async def _connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        return await asyncio.open_connection(HOST, port, limit=MAX_HEADER_BYTES)
    except OSError as exc:
        raise HttpError(f"could not connect: {exc.strerror or exc}") from exc


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, RuntimeError):
        writer.close()


async def request(
    port: int,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    json_body: Any = None,
    timeout: float = 10.0,
) -> HttpResponse:
    """Send one request on a new connection and return the whole answer, within `timeout`."""
    body = None if json_body is None else json.dumps(json_body).encode()
    all_headers = dict(headers or {})
    if body is not None:
        all_headers["Content-Type"] = "application/json"

    async def go() -> HttpResponse:
        reader, writer = await _connect(port)
        try:
            writer.write(_request_bytes(method, path, port, all_headers, body))
            await writer.drain()
            status, response_headers = await _read_head(reader)
            data = b"".join([chunk async for chunk in _body_chunks(reader, response_headers)])
            return HttpResponse(status, response_headers, data)
        finally:
            _close(writer)

    try:
        return await asyncio.wait_for(go(), timeout)
    except TimeoutError:
        raise HttpError(f"no answer within {timeout:g} s") from None
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        raise HttpError(f"the connection broke: {type(exc).__name__}") from None


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass(slots=True)
class SseStream:
    """An SSE request: connect and send it, then wait for the answer and read its events."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    client_port: int
    requested_at: float  # wall clock when the request had been sent
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    opened_at: float | None = None  # wall clock when the status line arrived
    _chunks: AsyncIterator[bytes] | None = None
    _buffer: str = ""
    _pending: list[SseEvent] = field(default_factory=list)

    @classmethod
    async def connect(
        cls, port: int, path: str, *, headers: dict[str, str] | None = None
    ) -> SseStream:
        """Connect and send the GET; the answer is read by `response`."""
        reader, writer = await _connect(port)
        try:
            writer.write(
                _request_bytes(
                    "GET", path, port, {"Accept": "text/event-stream", **(headers or {})}, None
                )
            )
            await writer.drain()
        except BaseException:
            _close(writer)
            raise
        sockname = writer.get_extra_info("sockname")
        return cls(reader, writer, int(sockname[1]) if sockname else 0, time.time())

    async def response(self, timeout: float) -> None:
        """Wait up to `timeout` for the status line; HttpError (and closed) unless it is 200."""
        try:
            self.status, self.headers = await asyncio.wait_for(_read_head(self.reader), timeout)
        except TimeoutError:
            self.close()
            raise HttpError(f"no response headers within {timeout:g} s") from None
        except BaseException:
            self.close()
            raise
        self.opened_at = time.time()
        if self.status != 200:
            body = b""
            with contextlib.suppress(TimeoutError, ConnectionError):
                body = await asyncio.wait_for(self.reader.read(300), 2.0)
            self.close()
            raise HttpError(f"HTTP {self.status}: {body.decode('utf-8', 'replace')[:120]}")
        self._chunks = _body_chunks(self.reader, self.headers)

    @classmethod
    async def open(
        cls, port: int, path: str, *, headers: dict[str, str] | None = None, timeout: float = 10.0
    ) -> SseStream:
        """Connect, send the GET and wait up to `timeout` for a 200."""
        stream = await cls.connect(port, path, headers=headers)
        await stream.response(timeout)
        return stream

    async def next_event(self) -> SseEvent | None:
        """Return the next event or comment, or None when the response ends."""
        assert self._chunks is not None
        while not self._pending:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                return None
            self._feed(chunk.decode("utf-8", "replace"), time.time())
        return self._pending.pop(0)

    def _feed(self, text: str, at: float) -> None:
        self._buffer += text.replace("\r\n", "\n")
        while "\n\n" in self._buffer:
            frame, self._buffer = self._buffer.split("\n\n", 1)
            if frame:
                self._pending.append(parse_frame(frame, at))

    def close(self) -> None:
        _close(self.writer)


def parse_frame(frame: str, at: float) -> SseEvent:
    """Parse one SSE frame (without its blank line); a frame of comments only is a comment."""
    event, data, event_id, fields = "message", [], None, 0
    for line in frame.split("\n"):
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        fields += 1
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id":
            event_id = value
    return SseEvent(event, "\n".join(data), event_id, frame + "\n\n", at, comment=fields == 0)


# The chat API, as a client uses it.


async def limited(count: int, limit: int, make: Callable[[int], Awaitable[T]]) -> list[T]:
    """Run `make(0..count-1)` with at most `limit` running at once; results in order."""
    gate = asyncio.Semaphore(limit)

    async def one(i: int) -> T:
        async with gate:
            return await make(i)

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def create_session(port: int, token: str) -> str:
    """Create a chat session; HttpError unless the answer is 201 with an id."""
    response = await request(
        port, "POST", "/api/chat/sessions", headers=bearer(token), json_body={}, timeout=30.0
    )
    if response.status != 201:
        raise HttpError(f"creating a session: HTTP {response.status} {response.body[:120]!r}")
    return str(response.json()["id"])


async def ask(port: int, token: str, session_id: str, question: str, timeout: float = 30.0) -> str:
    """Ask a question; return the stream URL, or HttpError unless the answer is 202."""
    response = await request(
        port,
        "POST",
        f"/api/chat/sessions/{session_id}/messages",
        headers=bearer(token),
        json_body={"message": question},
        timeout=timeout,
    )
    if response.status != 202:
        raise HttpError(f"asking: HTTP {response.status} {response.body[:120]!r}")
    return str(response.json()["stream_url"])


# Statistics and tables.


def percentile(values: Sequence[float], q: float) -> float | None:
    """Return the `q`-th percentile (nearest rank), or None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    value = seconds * 1000
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def secs(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def ratio(app: float | None, floor: float | None) -> str:
    """Format app ÷ floor; '-' when either is unknown or the floor is zero."""
    if app is None or floor is None or floor <= 0:
        return "-"
    return f"{app / floor:.1f}x"


def median_ratio(pairs: Sequence[tuple[float | None, float | None]]) -> str:
    """Format the median over rounds of each round's app ÷ floor; '-' when no round has both."""
    ratios = [a / f for a, f in pairs if a is not None and f is not None and f > 0]
    return "-" if not ratios else f"{statistics.median(ratios):.1f}x"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Return a plain-text table: the title, then right-aligned columns."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = [title]
    for row in [headers, *rows]:
        cells = [
            str(c).rjust(w) if i else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
