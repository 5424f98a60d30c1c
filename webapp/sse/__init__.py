"""Server-sent events framing: a pure decoder and encoder (no I/O)."""

from __future__ import annotations

from ._decode import ServerSentEvent, SSEDecoder
from ._encode import format_comment, format_event

__all__ = ["SSEDecoder", "ServerSentEvent", "format_comment", "format_event"]
