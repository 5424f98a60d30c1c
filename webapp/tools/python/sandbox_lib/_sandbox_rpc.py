"""The child's end of the data pipe: one JSON line out, one JSON line back.

The parent serves every request (market data, article search) and records it, so the
code never holds a network connection or a key.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import Any

_lock = threading.Lock()
_fds: tuple[int, int] | None = None
_MAX_REPLY = 8 * 1024 * 1024


class DataError(Exception):
    """A data request that was refused or could not be served."""


def connect(requests_fd: int, replies_fd: int) -> None:
    """Remember the two pipe ends (set up by the launcher before the code runs)."""
    global _fds
    _fds = (requests_fd, replies_fd)


def _read_line(fd: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            raise DataError("the data service closed the connection")
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)
        if size > _MAX_REPLY:
            raise DataError("the data service sent too much")


def call(request: dict[str, Any], error: type[DataError] = DataError) -> Any:
    """Send one request to the parent and return its `data`, or raise `error`."""
    if _fds is None:
        raise error("market data and article search are only available in the sandbox")
    line = json.dumps(request, separators=(",", ":")).encode() + b"\n"
    with _lock:
        try:
            os.write(_fds[0], line)
            reply = json.loads(_read_line(_fds[1]))
        except (OSError, ValueError) as exc:
            raise error(f"the data service failed: {exc}") from None
    if not isinstance(reply, dict) or not reply.get("ok"):
        message = reply.get("error") if isinstance(reply, dict) else None
        raise error(str(message or "the request was refused"))
    return reply.get("data")


def report_exit(error: str | None) -> None:
    """Tell the parent how the code ended (its error line, or None)."""
    if _fds is None:
        return
    line = json.dumps({"op": "exit", "error": error}).encode() + b"\n"
    # If the code closed the pipe, the parent falls back to the exit status.
    with contextlib.suppress(OSError):
        os.write(_fds[0], line)


class AttrDict(dict[str, Any]):
    """A dict whose keys also read as attributes, for clients written either way."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None
