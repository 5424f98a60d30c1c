"""Reads in flight shared: the streams of one answer opened together read it once.

Twenty streams of one answer opened at once in a worker each look at the answer's row and
its events; the same read, twenty times. Here a read asked while the same one is already
running waits for that one's result instead (a "single flight"), so the database sees one.

A caller may share only a read that started after `not_before` (a `time.monotonic()`): a
stream reader passes the moment it began to hear of new events, so that whatever was
written before then is in the read it gets, and whatever after reaches it as a wake-up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Flight(Generic[T]):
    __slots__ = ("done", "error", "joined", "result", "started")

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.joined = 0
        self.done = threading.Event()
        self.result: T | None = None
        self.error: BaseException | None = None


class Flights(Generic[T]):
    """Reads keyed by what they read; a read asked while its twin runs shares its result."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._running: dict[Hashable, _Flight[T]] = {}

    def read(self, key: Hashable, run: Callable[[], T], not_before: float = 0.0) -> T:
        """Return `run()`, or the result of the same read already running since `not_before`.

        The result is shared: callers must not change it.
        """
        with self._guard:
            flight = self._running.get(key)
            joined = flight is not None and flight.started > not_before
            if not joined:
                flight = _Flight()
                self._running[key] = flight
            assert flight is not None
            flight.joined += joined
        if joined:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.result  # type: ignore[return-value]
        try:
            flight.result = run()
            return flight.result
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._guard:
                if self._running.get(key) is flight:
                    del self._running[key]
            flight.done.set()

    def sharing(self, key: Hashable) -> int:
        """How many callers wait on the read of `key` running now (for tests)."""
        with self._guard:
            flight = self._running.get(key)
            return flight.joined if flight is not None else 0
