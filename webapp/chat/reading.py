"""Reading an answer as it is written: a stream's events from the wake-ups that carry them,
the database read only when they don't, and a quiet stream's heartbeats.

One `AnswerReader` per `ChatService`; each stream of an answer, in any worker, reads through
it until `done`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from . import event_log, leases
from .flights import Flights
from .notes import StoredEvent, following
from .wakeups import Wakeups

HEARTBEAT_SECONDS = 15.0


class WorkerStopping(Exception):
    """This worker is stopping: its streams end, for their clients to resume on a live one."""


class AnswerReader:
    """Reads answers' events for their streams (see `event_batches`)."""

    def __init__(
        self,
        engine: Engine,
        wakeups: Wakeups,
        stopping: threading.Event,
        resume_if_expired: Callable[[int, str, datetime | None], object],
        ask_to_store: Callable[[str], object] | None = None,
    ) -> None:
        self.engine, self.wakeups = engine, wakeups
        self._ask_to_store = ask_to_store  # a gap: its runner stores what it sent live
        self._stopping = stopping  # set as the worker begins to stop (`stop_serving`)
        self._resume_if_expired = resume_if_expired  # a dead runner's turn taken over
        # The streams of an answer opened together, or one after another, read it once
        # (`flights`); what was kept of an answer is dropped on its news.
        self.flights: Flights[Any] = Flights()
        wakeups.on_news(self._news)

    def _news(self, message_id: str | None) -> None:
        if message_id is None:
            self.flights.forget_all()
        else:
            self.flights.forget(message_id)

    def events(
        self, user_id: int, session_id: str, message_id: str, after: int = 0
    ) -> Iterator[StoredEvent | None]:
        """Yield the answer's events one by one (see `event_batches`); None is a heartbeat."""
        for batch in self.event_batches(user_id, session_id, message_id, after):
            if not batch:
                yield None
            yield from batch

    def event_batches(
        self, user_id: int, session_id: str, message_id: str, after: int = 0
    ) -> Iterator[list[StoredEvent]]:
        """Yield the answer's events after `after` until `done`, as stored together.

        An empty list is a heartbeat. WorkerStopping when this worker begins to stop
        (`stop_serving`): the stream ends without `done`, for its client to resume elsewhere.

        The reader sleeps until a write to this message wakes it (see `Wakeups`): an idle
        stream costs no query at all, heartbeats included. A wake-up hands the reader the
        events written (`notes`), so it reads the database only for its first look, after a
        gap in the event ids it was handed, or after news that did not say what.
        """
        read, asked = True, False
        held: dict[int, StoredEvent] = {}  # handed over past a gap, until the gap is filled
        with self.wakeups.inbox(message_id) as inbox:
            while True:
                if self._stopping.is_set():
                    raise WorkerStopping
                inbox.flag.clear()
                handed, stale = inbox.take()
                # A read begun after the message's latest news holds every write whose news
                # came before (a write's news follows its commit); what any later news says
                # reaches this inbox. So such a read may be shared (`Wakeups.news_since`).
                since = self.wakeups.news_since(message_id)
                for event in handed:
                    if event.seq > after:
                        held.setdefault(event.seq, event)
                # The first look, news that did not say what, or news while a gap is open (a
                # lost note's events, or those its runner stored when asked, may be stored):
                # the database is the truth, its events taken as they are (an end from outside
                # and a takeover number theirs past the gap: `event_log.SEQ_SKIP`).
                read = read or stale or (bool(held) and min(held) > after + 1)
                batch = [*self._events_after(message_id, after, since)] if read else []
                batch.extend(following(held, batch[-1].seq if batch else after))
                # What the news handed on followed on, yet more of it lies past a gap, and the
                # database was not read for it: read now, not at the next news. There may be
                # none: an end from outside numbers its events past the gap (SEQ_SKIP) when
                # its runner did not say in time that it stored, and nothing follows an end.
                again = bool(held) and not read
                if held and not asked and self._ask_to_store is not None:
                    # A gap (this reader came after some events were handed out live, or a
                    # note was lost): the runner stores them, and the store's news fills it.
                    self._ask_to_store(message_id)
                asked = bool(held)
                if batch:
                    done = next((i for i, e in enumerate(batch) if e.event == "done"), None)
                    yield batch if done is None else batch[: done + 1]
                    if done is not None:
                        return
                    after = batch[-1].seq
                # Look when the stream first goes quiet, and after a read that brought nothing
                # (the answer was deleted, or a listener reconnected): every end writes `done`
                # and every takeover a `reset`, and both wake the reader.
                if (
                    not batch
                    and read
                    and not held
                    and not self._still_running(user_id, session_id, message_id, after, since)
                ):
                    return
                read = again
                while not again and not inbox.flag.wait(HEARTBEAT_SECONDS):
                    yield []  # a heartbeat costs no query

    def _events_after(self, message_id: str, after: int, since: float) -> list[StoredEvent]:
        def read() -> list[StoredEvent]:
            return event_log.events_after(self.engine, message_id, after)

        found: list[StoredEvent] = self.flights.read(
            ("events", message_id, after), read, since, group=message_id
        )
        return found

    def _still_running(
        self, user_id: int, session_id: str, message_id: str, after: int, since: float
    ) -> bool:
        """Tell whether a quiet answer may still write; take it over if its runner died."""
        found = self.flights.read(
            ("state", user_id, session_id, message_id),
            lambda: leases.message_state(self.engine, user_id, session_id, message_id),
            since,
            group=message_id,
        )
        if found is None:
            return False  # deleted
        status, lease_until = found
        if status != "running":
            return bool(self._events_after(message_id, after, since))
        self._resume_if_expired(user_id, message_id, lease_until)
        return True
