"""Whose each message is, as this worker last saw: the check a stream's open needs, without
a query each time.

A message never moves to another user, chat or role, so once this worker has read it, or
written it, the fact holds until its chat is deleted. Twenty streams of one answer opened
together, and a client's reconnects, then cost no read of its row. A chat deleted through
this worker is forgotten at once; one deleted through another worker is remembered here
for at most `KNOWN_SECONDS`, and a stream opened on one of its answers meanwhile finds no
events and no answer, and ends (`AnswerReader.event_batches`); within two seconds of this
worker's look at a finished answer, the stream is shown that look again (`flights.py`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from cachetools import TTLCache

KNOWN_SECONDS = 30.0
KNOWN_KEPT = 20_000

Key = tuple[int, str, str]  # user id, chat id, message id


class KnownMessages:
    """The role of each message of a user's chat this worker saw lately, by its ids."""

    def __init__(
        self,
        seconds: float = KNOWN_SECONDS,
        kept: int = KNOWN_KEPT,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self._roles: TTLCache[Key, str] = TTLCache(kept, seconds, timer)

    def remember(self, user_id: int, session_id: str, message_id: str, role: str) -> None:
        """Note that the user's chat holds `message_id`, with `role`."""
        with self._lock:
            self._roles[(user_id, session_id, message_id)] = role

    def role(self, user_id: int, session_id: str, message_id: str) -> str | None:
        """Return the message's role if this worker saw it lately in the user's chat."""
        with self._lock:
            return self._roles.get((user_id, session_id, message_id))

    def forget_session(self, session_id: str) -> None:
        """Forget every message of a chat (it is being deleted)."""
        with self._lock:
            for key in [key for key in self._roles if key[1] == session_id]:
                self._roles.pop(key, None)  # it may expire meanwhile
