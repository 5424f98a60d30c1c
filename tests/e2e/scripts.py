"""Model scripts the browser tests share."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

TIMEOUT = 20_000


class Held(list[dict[str, Any]]):
    """A model's events that wait for the test before the first words of the answer."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        super().__init__(events)
        self.go = threading.Event()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for event in super().__iter__():
            if event["type"] == "content_block_delta":
                self.go.wait(TIMEOUT / 1000)
            yield event
