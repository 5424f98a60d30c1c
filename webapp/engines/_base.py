"""What every engine takes and gives: a Messages API request in, stream events out."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to the model: the system prompt, the conversation so far, and the tools."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int = 4096


class EngineError(Exception):
    """The model could not answer; the message is safe to show and to store."""


class Engine(Protocol):
    """A model that answers in the Claude Messages API's streaming events."""

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        """Yield the stream's events (`message_start` ... `message_stop`) as JSON objects."""
        ...

    def close(self) -> None:
        """Release what the engine holds (connections) when its turn ends."""
        ...
