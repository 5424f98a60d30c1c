"""A worker's upkeep of its turns: its sweeper, its exit, and dead runners' turns taken over.

Each worker's sweeper says the worker is alive, ends answers past the turn deadline, and
takes a turn whose runner died (its lease expired) over from its last checkpoint under a new
owner; a reader or a new question that finds a lease expired takes it over too. A worker told
to stop hands its turns over and ends its streams at once (`stop_serving`), and takes nothing
over from then on.

One `Upkeep` per `ChatService` (`service.py`), which starts the turns it takes over.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, cast

from ..store.writes import WRITE_RETRY_SECONDS
from ..turn.runner import failed_turn
from . import event_log, leases, open_streams, records
from .event_log import SEQ_SKIP, LeaseLost
from .sink import DatabaseSink

if TYPE_CHECKING:
    from .service import ChatService

log = logging.getLogger(__name__)

SWEEP_SECONDS = 5.0
UNRESUMABLE = "This answer was interrupted and cannot be resumed. Please ask again."
TIMED_OUT = "This answer took too long and was stopped. Please ask again."


class Upkeep:
    """Keeps one worker's turns going: sweeps, hand-overs on exit, take-overs."""

    def __init__(self, service: ChatService) -> None:
        self.service = service
        self.stop = threading.Event()  # the sweeper and the listener end
        self.stopping = threading.Event()  # a deploy's SIGTERM: see `stop_serving`
        # The server's own word that this worker still serves (gunicorn's `worker.alive`,
        # `start_background`): a SIGTERM can come before `stop_serving` may be called.
        self.serving: Callable[[], bool] = lambda: True
        self._handed_over = threading.Event()  # ... and its hand-overs are written
        self._lock = threading.Lock()
        self._swept = False
        self._background: list[threading.Thread] = []

    def start_background(self, serving: Callable[[], bool] | None = None) -> None:
        """Start this worker's sweeper and its listener for other processes' writes.

        Called once per worker process (gunicorn's `post_worker_init`, see gunicorn.conf.py):
        turns a dead worker left running are taken over within a lease and a sweep, whether
        or not anyone is reading them. `serving` is False once the server has told this
        worker to stop, even before `stop_serving` runs: a worker told to stop as it booted
        takes nothing over (it would start a turn's model call only to hand it over).
        """
        if serving is not None:
            self.serving = serving
        with self._lock:
            if self._background:
                return
            jobs: list[Callable[[], None]] = [self._sweep_forever]
            listener, wakeups = self.service.listener, self.service.wakeups
            if listener is not None:
                jobs.append(lambda: listener.run(wakeups, self.stop))
            live = self.service.live
            if live is not None and live is not cast(object, listener):  # Redis is both
                jobs.append(lambda: live.run(wakeups, self.stop))
            self._background = [
                threading.Thread(target=job, daemon=True, name=f"chat-{i}")
                for i, job in enumerate(jobs)
            ]
        for thread in self._background:
            thread.start()

    def stop_background(self) -> None:
        """Stop the sweeper and the listener, and hand this process's running turns over.

        A worker that exits (a deploy's `SIGHUP`, `SIGTERM`) releases each lease it holds
        instead of letting it run out, so a live worker's next sweep resumes the turn from
        its checkpoint within seconds; the runner here is refused its next write.
        """
        self.stop.set()
        if self.stopping.is_set():
            # The streams may have ended (and let the worker exit) before `stop_serving` has
            # written every hand-over: a lease left held would keep its turn waiting.
            self._handed_over.wait(WRITE_RETRY_SECONDS)
        for sink in self.service.running_sinks():
            sink.hand_over()
        for thread in self._background:
            thread.join(5)
        try:
            open_streams.worker_gone(self.service.engine, self.service.worker_id)
        except Exception:
            log.exception("could not forget this worker's streams; they lapse in a minute")

    def stop_serving(self) -> None:
        """Begin this worker's exit: hand its turns over and end its streams, at once.

        Called as a deploy's `SIGTERM` (or a `SIGHUP` reload's) reaches the worker
        (gunicorn.conf.py). gunicorn then waits up to its graceful timeout for open requests:
        open answer streams would hold the worker there, and its turns would run on here only
        to be resumed elsewhere from an older checkpoint. Instead each turn is handed over
        now, from its latest checkpoint, to a live worker's next sweep, and each stream ends
        without `done`, so that its client reconnects to a live worker and resumes
        (`Last-Event-ID`; the browser's stream starts over). This worker takes nothing over
        from then on.
        """
        self.stopping.set()
        try:
            for sink in self.service.running_sinks():
                sink.hand_over()
        finally:
            self._handed_over.set()
            self.service.wakeups.wake_all()

    def told_to_stop(self) -> bool:
        """Tell whether this worker is on its way out: it starts and takes over no turn."""
        return self.stopping.is_set() or not self.serving()

    def _sweep_forever(self) -> None:
        # This worker's lease, renewed twice a lease: its streams count against their users
        # while it holds, and stop counting once it lapses (the worker died). The sweep, a
        # read, comes every SWEEP_SECONDS.
        engine, worker_id, lease = self.service.engine, self.service.worker_id, self.service.lease
        beat = min(SWEEP_SECONDS, lease.total_seconds() / 3)
        seen_every = lease.total_seconds() / 2
        seen_at = float("-inf")
        sweep_at = time.monotonic() + SWEEP_SECONDS
        while True:
            if time.monotonic() >= seen_at + seen_every:
                try:
                    open_streams.worker_seen(engine, worker_id)
                    seen_at = time.monotonic()
                except Exception:
                    log.exception("could not say this worker is alive")
            if self.stop.wait(beat):
                return
            if time.monotonic() < sweep_at or self.told_to_stop():
                continue
            sweep_at = time.monotonic() + SWEEP_SECONDS
            try:
                self.end_overdue()
                self.resume_stale()
            except Exception:
                log.exception("could not look for interrupted or overdue turns")

    def end_overdue(self) -> int:
        """End every answer running past the turn deadline, whatever its model is doing."""
        service = self.service
        return sum(
            service.end_answer(message_id, status="error", error=TIMED_OUT, stop_reason=None)
            for message_id in leases.overdue_messages(service.engine, service.deadline)
        )

    def resume_stale_once(self) -> None:
        """On this process's first use, take over the turns a dead worker left running."""
        with self._lock:
            if self._swept:
                return
            self._swept = True
        try:
            self.resume_stale()
        except Exception:
            log.exception("could not look for interrupted turns")

    def resume_stale(self) -> int:
        """Take over every turn whose runner died (a worker restarted); return how many."""
        return sum(
            self.resume_if_stale(user_id, message_id)
            for user_id, message_id in leases.stale_messages(self.service.engine)
        )

    def resume_if_stale(self, user_id: int, message_id: str) -> bool:
        """Take over an answer whose lease expired, from its last checkpoint."""
        if self.told_to_stop():  # a stopping worker hands turns over, it takes none
            return False
        engine = self.service.engine
        owner = leases.claim_stale(engine, message_id, self.service.lease)
        if owner is None:
            return False
        high_water = event_log.last_seq(engine, message_id)
        saved = event_log.load_checkpoint(engine, message_id)
        checkpoint, after = saved if saved is not None else ({}, 0)
        # Ids are never reused: what the dead runner wrote after its checkpoint is withdrawn,
        # and readers that saw it are told so by a `reset` event.
        event_log.truncate_events(engine, message_id, after)
        # Past any id the dead runner handed out live and did not store (`SEQ_SKIP`).
        live = self.service.store_spacing > 0
        sink = DatabaseSink(
            self.service, message_id, owner, high_water + (SEQ_SKIP - 1 if live else 0)
        )
        try:
            if high_water > after or live:
                sink.emit("reset", {"after": after})
            if not isinstance(checkpoint, dict) or "messages" not in checkpoint:
                sink.finish(failed_turn(sink, UNRESUMABLE))
                return True
        except LeaseLost:
            return True
        log.info("resuming an interrupted turn from its checkpoint")
        self.service.start_turn(user_id, message_id, sink, checkpoint)
        return True

    def resume_if_expired(
        self, user_id: int, message_id: str, lease_until: datetime | None
    ) -> None:
        """Take the answer over if its lease has expired (or it has none)."""
        # Only an expired lease is worth a write: claiming takes the database's write lock.
        if lease_until is None or lease_until < records.now():
            self.resume_if_stale(user_id, message_id)
