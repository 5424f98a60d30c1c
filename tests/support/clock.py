"""A clock a test moves by hand, for what takes a `timer` (caches, throttles)."""

from __future__ import annotations


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
