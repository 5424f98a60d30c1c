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


UNAVAILABLE = (
    "The assistant could not answer just now: its model service did not respond "
    "properly. Please try again in a minute."
)


class ModelError(Exception):
    """The model could not answer.

    `str(error)` is the detail for the logs (it may name the vendor, a status, an exception);
    `public` is what a person is shown and what is stored: plain words, what to do.
    """

    def __init__(self, detail: str, public: str = UNAVAILABLE) -> None:
        super().__init__(detail)
        self.public = public


class Model(Protocol):
    """A model that answers in the Claude Messages API's streaming events."""

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        """Yield the stream's events (`message_start` ... `message_stop`) as JSON objects."""
        ...

    def close(self) -> None:
        """Release what the engine holds (connections) when its turn ends."""
        ...
