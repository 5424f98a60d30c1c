"""Server-sent events with no I/O: a decoder (feed it chunks, take out events) and the framing
this app sends. The decoder follows the WHATWG "event stream interpretation" rules:
https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event: its type (`message` when unnamed), data, and last event id."""

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None


class SSEDecoder:
    """Turn a stream of text chunks into events; chunks may split lines and CRLF pairs anywhere."""

    def __init__(self) -> None:
        self._buffer = ""
        self._pending_cr = False
        self._event = ""
        self._data: list[str] = []
        self._last_id = ""
        self._retry: int | None = None
        self._started = False

    def decode(self, chunk: str) -> list[ServerSentEvent]:
        """Feed one chunk; return the events it completes."""
        if not self._started:
            self._started = True
            chunk = chunk.removeprefix("\ufeff")  # A leading BOM is ignored once.
        if self._pending_cr and chunk.startswith("\n"):
            chunk = chunk[1:]  # The LF of a CRLF split across chunks.
        self._pending_cr = chunk.endswith("\r")
        self._buffer += chunk
        events: list[ServerSentEvent] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                break
            end, width = cut
            line, self._buffer = self._buffer[:end], self._buffer[end + width :]
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def flush(self) -> list[ServerSentEvent]:
        """End the stream: an event without its closing blank line is discarded, per the spec."""
        self._buffer = ""
        self._event, self._data, self._retry = "", [], None
        return []

    def _line(self, line: str) -> ServerSentEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # A comment: keep-alives and heartbeats.
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        event, data, retry = self._event, self._data, self._retry
        self._event, self._data, self._retry = "", [], None
        if not data:
            return None
        return ServerSentEvent(event or "message", "\n".join(data), self._last_id, retry)


def _line_end(buffer: str) -> tuple[int, int] | None:
    """Return where the first complete line ends and how wide its terminator is."""
    for index, char in enumerate(buffer):
        if char == "\n":
            return index, 1
        if char == "\r":
            if index + 1 < len(buffer):
                return index, 2 if buffer[index + 1] == "\n" else 1
            return index, 1  # A lone CR at the end; a following LF is dropped by decode().
    return None


# Framing: every line of data gets its own `data:` field.

_LINES = re.compile(r"\r\n|\r|\n")


def format_event(data: str, *, event: str | None = None, id: str | int | None = None) -> str:
    """Return one SSE event; a newline in `data` becomes another `data:` line, never a break."""
    head = ""
    if event is not None:
        if _LINES.search(event):
            raise ValueError("an event name cannot contain a line break")
        head += f"event: {event}\n"
    if id is not None:
        text = str(id)
        # An int's digits hold neither (a stream's events carry their seq).
        if type(id) is not int and (_LINES.search(text) or "\0" in text):
            raise ValueError("an event id cannot contain a line break or NUL")
        head += f"id: {text}\n"
    if "\n" in data or "\r" in data:
        body = "".join(f"data: {line}\n" for line in _LINES.split(data))
    else:  # one line, as a packet's JSON always is
        body = f"data: {data}\n"
    return head + body + "\n"


def format_comment(text: str = "") -> str:
    """Return a comment line, which clients ignore: a heartbeat for idle streams."""
    return "".join(f": {line}\n" for line in _LINES.split(text)) + "\n"
