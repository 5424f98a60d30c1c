"""Ends from outside a turn's runner (a cancel, the turn deadline), and readers' requests
that a runner store what it handed out live.

A running turn hands its batches to readers before it stores them (`sink.py`, `live.py`).
An end from outside must keep what those readers saw: the runner, told first (in its own
process at once, in another over the live channel), stores what it handed out and stores
every batch from then on, so the end's events follow on from the last one stored; a runner
in another process says so on the same channel. Only when the runner can't be told (it is
gone, or on another host without Redis), could not store, or does not say so in time, are
the end's events numbered past any id it handed out (`event_log.SEQ_SKIP`), withdrawing
those.

One `Endings` per `ChatService` (`service.py`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from . import leases
from .live import ASKED, asked, ending_key, store_key, storing_key

if TYPE_CHECKING:
    from .service import ChatService

# How long an end from outside waits for the runner in another process to store what it
# handed out live (a runner that is gone, or on another host without Redis, never answers).
STORED_ELSEWHERE_SECONDS = 0.5


class Endings:
    """Ends a service's answers from outside their runners, wherever those run."""

    def __init__(self, service: ChatService) -> None:
        self.service = service

    def ask_to_store(self, message_id: str) -> None:
        """Ask the answer's runner, wherever it runs, to store what it handed out live."""
        self.service.wakeups.wake(store_key(message_id), ASKED)
        if self.service.live is not None:
            self.service.live.send(store_key(message_id), ASKED)

    def end_answer(
        self, message_id: str, *, status: str, error: str | None, stop_reason: str | None
    ) -> bool:
        """End a running answer from outside its runner, wherever it runs; False if not running."""
        service = self.service
        here = [sink for sink in service.running_sinks() if sink.message_id == message_id]
        # The answer keeps what its readers were handed: its runner stores it first.
        stored = [sink.end_live() for sink in here]
        # Where the runner could not be told (gone, or on a host without Redis) or could not
        # store, the end's events are numbered past any it handed out live, and withdraw those.
        unsure = service.store_spacing > 0 and not (
            any(stored) if here else self._stored_elsewhere(message_id)
        )
        ended = leases.end_running(
            service.engine,
            message_id,
            status=status,
            error=error,
            stop_reason=stop_reason,
            live=unsure,
            withdraw=unsure,
        )
        for sink in here:
            sink.abort()
        if ended:
            service.announce(message_id)
            # A runner in another process hears it through the wake-up channel (PostgreSQL's
            # notification rides in `end_running`'s transaction; SQLite's poller sees the row).
            if service.listener is not None:
                service.listener.publish(leases.stop_key(message_id))
            service.ended(message_id)
        return ended

    def _stored_elsewhere(self, message_id: str) -> bool:
        """Tell another process's runner that its answer ends: it stores what it handed out
        live, and every batch from then on before handing it out (`DatabaseSink.end_live`).
        True once it says it did (`storing_key`), within STORED_ELSEWHERE_SECONDS.

        Only that word will do. Any other store of the runner's (one a reader asked for, or
        one come due) may be followed by batches handed out live before the runner hears of
        the end: numbered after such a store, the end would take ids its readers already
        have, and they would drop it as a copy (the answer would never end for them).
        """
        service = self.service
        if leases.lease_of(service.engine, message_id) is None:
            return True  # not running: nothing is handed out live
        with service.wakeups.inbox(storing_key(message_id)) as word:
            service.wakeups.wake(ending_key(message_id), ASKED)
            if service.live is not None:
                service.live.send(ending_key(message_id), ASKED)
            deadline = time.monotonic() + STORED_ELSEWHERE_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                if word.flag.wait(left):
                    word.flag.clear()
                    if asked(word.take()):
                        return True
        return False
