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
from collections.abc import Iterator
from contextlib import contextmanager


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
