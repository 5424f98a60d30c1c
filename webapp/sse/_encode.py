"""Frame server-sent events: every line of data gets its own `data:` field."""

from __future__ import annotations

import re

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
        if _LINES.search(text) or "\0" in text:
            raise ValueError("an event id cannot contain a line break or NUL")
        head += f"id: {text}\n"
    body = "".join(f"data: {line}\n" for line in _LINES.split(data))
    return head + body + "\n"


def format_comment(text: str = "") -> str:
    """Return a comment line, which clients ignore: a heartbeat for idle streams."""
    return "".join(f": {line}\n" for line in _LINES.split(text)) + "\n"
