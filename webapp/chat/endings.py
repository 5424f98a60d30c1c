"""Ends from outside a turn's runner (a cancel, the turn deadline), and readers' requests
that a runner store what it handed out live.

A running turn hands its batches to readers before it stores them (`sink.py`, `live.py`).
An end from outside must keep what those readers saw: the runner, told first (in its own
process at once, in another over the live channel), stores what it handed out and stores
every batch from then on, so the end's events follow on from the last one stored. Only when
the runner can't be told (it is gone, or on another host without Redis) are the end's
events numbered past any id it handed out (`event_log.SEQ_SKIP`), withdrawing those.

One `Endings` per `ChatService` (`service.py`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from . import leases
from .live import ASKED, ending_key, store_key

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
        for sink in here:  # the answer keeps what its readers were handed
            sink.end_live()
        # Where the runner could not be told (gone, or on a host without Redis), the end's
        # events are numbered past any it handed out live, and withdraw those.
        unsure = service.store_spacing > 0 and not here and not self._stored_elsewhere(message_id)
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
        True once its store shows (the lease it renews), within STORED_ELSEWHERE_SECONDS."""
        service = self.service
        before = leases.lease_of(service.engine, message_id)
        if before is None:
            return True  # not running: nothing is handed out live
        deadline = time.monotonic() + STORED_ELSEWHERE_SECONDS
        service.wakeups.wake(ending_key(message_id), ASKED)
        if service.live is not None:
            service.live.send(ending_key(message_id), ASKED)
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.02))  # a few cheap reads, for a cancel
            if leases.lease_of(service.engine, message_id) != before:
                return True
        return False
