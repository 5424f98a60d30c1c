"""One user's writes that take the user's row lock, queued in this process first.

Counting a user's open streams and running answers takes a lock on the user's row
(`SELECT ... FOR UPDATE`), so that two at once can't both pass the cap. A request that waits
for that lock holds one of the pool's few connections meanwhile: 2,000 streams opened at once
on 100 answers (20 streams of each user) would fill the pool with waiters on a handful of
users' rows while every other request waited for a connection. Queued here first, per user,
at most one request of a user per process waits on the database's lock; the rest wait
without a connection (a greenlet under gevent).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class UserQueues:
    """A lock per user, made while someone holds or waits for it, dropped after."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[int, tuple[threading.Lock, int]] = {}

    @contextmanager
    def turn(self, user_id: int) -> Iterator[None]:
        """Hold the user's lock for the block, after any of that user's requests before it."""
        with self._guard:
            lock, users = self._locks.get(user_id) or (threading.Lock(), 0)
            self._locks[user_id] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[user_id]
                if users == 1:
                    del self._locks[user_id]
                else:
                    self._locks[user_id] = (lock, users - 1)

    def waiting(self) -> int:
        """How many users have a request in their queue (for tests)."""
        with self._guard:
            return len(self._locks)


class _Wanted(Generic[T]):
    __slots__ = ("done", "result")

    def __init__(self) -> None:
        self.done = False
        self.result: T | None = None


# How long the first of a user's queued requests waits for others before its write: a
# burst's streams (a page's reconnects after a deploy) arrive over a few milliseconds.
GATHER_SECONDS = 0.003


class Batched(Generic[T]):
    """A user's requests of one kind that queued together, served by one write.

    `serve(user_id, wanted)` returns a result for each of `wanted` requests, in order. The
    request first through the user's queue serves every one of that user's that queued
    meanwhile; they find theirs done when their own turn comes.
    """

    def __init__(
        self,
        queues: UserQueues,
        serve: Callable[[int, int], list[T | None]],
        gather: Callable[[], object] = lambda: time.sleep(GATHER_SECONDS),
    ) -> None:
        # `gather` runs before a request takes its batch: a short wait, under gevent a yield
        # to the requests being accepted meanwhile, which then join the same write.
        self._queues, self._serve, self._gather = queues, serve, gather
        self._guard = threading.Lock()
        self._waiting: dict[int, list[_Wanted[T]]] = {}

    def get(self, user_id: int) -> T | None:
        wanted: _Wanted[T] = _Wanted()
        with self._guard:
            self._waiting.setdefault(user_id, []).append(wanted)
        with self._queues.turn(user_id):
            if not wanted.done:
                self._gather()
                with self._guard:
                    batch = self._waiting.pop(user_id, [])
                try:
                    results = self._serve(user_id, len(batch))
                except BaseException:
                    with self._guard:  # the others try again, each in its own turn
                        others = [each for each in batch if each is not wanted]
                        self._waiting.setdefault(user_id, []).extend(others)
                    raise
                for each, result in zip(batch, results, strict=True):
                    each.result, each.done = result, True
        return wanted.result

    def waiting(self, user_id: int) -> int:
        """How many of the user's requests wait to be served (for tests)."""
        with self._guard:
            return len(self._waiting.get(user_id, ()))
