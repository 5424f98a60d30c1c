"""What every engine takes and gives: a Messages API request in, stream events out."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from ..settings import DEFAULT_MAX_TOKENS


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to the model: the system prompt, the conversation so far, and the tools."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int = DEFAULT_MAX_TOKENS


UNAVAILABLE = (
    "The assistant could not answer just now: its model service did not respond "
    "properly. Please try again in a minute."
)
OPERATOR_TOLD = (
    "The assistant is unavailable right now. This is not something you did: the service's "
    "operator has been told. Please try again later."
)
OUR_FAULT = (
    "Something went wrong on our side while asking the assistant. It has been logged so that "
    "it can be fixed; please try again later."
)
STOPPED = "The answer was stopped."


class ModelError(Exception):
    """The model could not answer.

    `str(error)` is the detail for the logs (it may name the vendor, a status, an exception);
    `public` is what a person is shown and what is stored: plain words, what to do.
    """

    def __init__(self, detail: str, public: str = UNAVAILABLE) -> None:
        super().__init__(detail)
        self.public = public


class OperatorError(ModelError):
    """The model cannot be used until whoever runs the service fixes a setting."""

    def __init__(self, detail: str, setting: str, what: str) -> None:
        super().__init__(detail, OPERATOR_TOLD)
        self.setting, self.what = setting, what


class ContextTooLong(ModelError):
    """The request does not fit the model's context window: send less history."""


class StreamCut(ModelError):
    """The reply broke off after content had streamed; what came before it was yielded.

    The turn continues the answer from there, as after a `max_tokens` stop.
    """


class Model(Protocol):
    """A model that answers in the Claude Messages API's streaming events."""

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        """Yield the stream's events (`message_start` ... `message_stop`) as JSON objects."""
        ...

    def close(self) -> None:
        """Release what the engine holds (connections) when its turn ends."""
        ...
