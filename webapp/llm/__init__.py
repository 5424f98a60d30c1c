"""Model engines: Claude over HTTP, and the deterministic offline engine."""

from __future__ import annotations

from .base import UNAVAILABLE, Engine, EngineError, ModelRequest
from .claude import DEFAULT_BASE_URL, DEFAULT_MODEL, ClaudeEngine
from .offline.engine import OfflineEngine
from .stream import BlockStop, MessageAccumulator, StreamProtocolError

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
