"""Reads shared: the streams of one answer opened together, or one after another, read it once.

Twenty streams of one answer opened at once in a worker each look at the answer's row and
its events; the same read, twenty times. Here a read asked while the same one is already
running waits for that one's result instead (a "single flight"), so the database sees one.

A caller may share only a read that started after `not_before` (a `time.monotonic()`): a
stream reader passes the moment its answer last had news (`Wakeups.news_since`), so that
whatever was written before then is in the read it gets, and whatever after reaches it as a
wake-up.

A read that found something is kept for `KEPT_SECONDS` after it ends, under the same rule,
for the streams of a quiet answer opened one after another. Such a read names the group it
reads (the answer), and news of the group (`forget`) drops its kept reads and keeps those
then running from being kept: a kept read holds every write of its group there was news of.
A read with no group is shared only while it runs.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

KEPT_SECONDS = 2.0


class _Flight(Generic[T]):
    __slots__ = ("done", "ended", "error", "group", "joined", "result", "started", "stale")

    def __init__(self, group: Hashable) -> None:
        self.started = time.monotonic()
        self.group = group
        self.joined = 0
        self.done = threading.Event()
        self.result: T | None = None
        self.error: BaseException | None = None
        self.stale = False  # news of its group came while it ran: not to be kept
        self.ended = 0.0  # by the timer, once kept


class Flights(Generic[T]):
    """Reads keyed by what they read; a read asked while its twin runs, or a moment after it
    found something, shares its result."""

    def __init__(
        self, kept_seconds: float = KEPT_SECONDS, timer: Callable[[], float] = time.monotonic
    ) -> None:
        self._guard = threading.Lock()
        self._kept_seconds, self._timer = kept_seconds, timer
        self._running: dict[Hashable, _Flight[T]] = {}
        self._kept: dict[Hashable, _Flight[T]] = {}
        self._kept_order: deque[tuple[Hashable, _Flight[T]]] = deque()
        self._groups: dict[Hashable, set[Hashable]] = {}  # keys running or kept, by group

    def read(
        self,
        key: Hashable,
        run: Callable[[], T],
        not_before: float = 0.0,
        group: Hashable = None,
    ) -> T:
        """Return `run()`, or the result of the same read begun since `not_before`, running
        or kept.

        The result is shared: callers must not change it.
        """
        with self._guard:
            self._drop_expired()
            flight = self._running.get(key) or self._kept.get(key)
            joined = flight is not None and flight.started > not_before
            if not joined:
                flight = _Flight(group)
                self._running[key] = flight
                self._groups.setdefault(group, set()).add(key)
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
                    if (
                        flight.group is not None
                        and flight.error is None
                        and flight.result is not None
                        and not flight.stale
                    ):
                        flight.ended = self._timer()
                        self._kept[key] = flight
                        self._kept_order.append((key, flight))
                    elif key not in self._kept:
                        self._ungroup(group, key)
            flight.done.set()

    def forget(self, group: Hashable) -> None:
        """News of `group`: drop its kept reads, and keep none of those running now."""
        with self._guard:
            for key in self._groups.pop(group, ()):
                self._kept.pop(key, None)
                running = self._running.get(key)
                if running is not None:
                    running.stale = True

    def forget_all(self) -> None:
        """News that may concern any group (a listener's gap)."""
        with self._guard:
            self._kept.clear()
            self._kept_order.clear()
            self._groups.clear()
            for flight in self._running.values():
                flight.stale = True

    def _drop_expired(self) -> None:
        cutoff = self._timer() - self._kept_seconds
        while self._kept_order and self._kept_order[0][1].ended <= cutoff:
            key, flight = self._kept_order.popleft()
            if self._kept.get(key) is flight:
                del self._kept[key]
                if key not in self._running:
                    self._ungroup(flight.group, key)

    def _ungroup(self, group: Hashable, key: Hashable) -> None:
        keys = self._groups.get(group)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._groups[group]

    def sharing(self, key: Hashable) -> int:
        """How many callers wait on the read of `key` running now (for tests)."""
        with self._guard:
            flight = self._running.get(key)
            return flight.joined if flight is not None else 0
