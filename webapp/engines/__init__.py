"""Model engines: Claude over HTTP, and the deterministic offline engine."""

from __future__ import annotations

from ._base import UNAVAILABLE, Engine, EngineError, ModelRequest
from ._claude import DEFAULT_BASE_URL, DEFAULT_MODEL, ClaudeEngine
from ._offline import OfflineEngine
from ._stream import BlockStop, MessageAccumulator, StreamProtocolError

__all__ = [
    "UNAVAILABLE",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "BlockStop",
    "ClaudeEngine",
    "Engine",
    "EngineError",
    "MessageAccumulator",
    "ModelRequest",
    "OfflineEngine",
    "StreamProtocolError",
]
