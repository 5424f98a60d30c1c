"""The sink a background turn writes through: its events stored in short batches as the
answer's lease holder, its checkpoints, and how it ends (done, failed, handed over).

`ChatService` (`service.py`) makes one per turn it runs; readers in any process are woken
by the writes (`wakeups.py`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..turn.runner import TurnResult
from . import event_log, leases
from .event_log import LeaseLost
from .notes import StoredEvent

if TYPE_CHECKING:
    from .service import ChatService

log = logging.getLogger(__name__)

FLUSH_SECONDS = 0.03
FLUSH_SPACING = 0.1  # as often as the browser's stream renders
# A quiet turn renews its lease itself once this share of it has passed since its last write
# (30 s leases: after 21 s, so 0.048 transactions a second), leaving the rest of the lease
# for that write's own retries (`webapp.store.writes.WRITE_RETRY_SECONDS`).
RENEW_AFTER = 0.7


class DatabaseSink:
    """A TurnSink that appends to the message's stored event stream as its owner.

    Events are written in batches: the first event of a batch starts a short window
    (`FLUSH_SECONDS`, or what remains of `FLUSH_SPACING` since the last batch), and
    everything emitted until it closes is stored in one transaction, which also renews the
    lease. A checkpoint and the end of the turn take whatever is
    pending into their own transaction. A background flusher (one per turn) closes the
    windows and renews the lease while the model is quiet; its failure (LeaseLost, or a
    database that stayed down) reaches the runner at its next write.
    """

    def __init__(self, service: ChatService, message_id: str, owner: str, seq: int) -> None:
        self.service, self.message_id, self.owner, self.seq = service, message_id, owner, seq
        self._pending: list[StoredEvent] = []
        self._lock = threading.Lock()  # the pending batch and `seq`
        self._writing = threading.Lock()  # one write at a time, so batches land in order
        self._news = threading.Event()
        self._closed = threading.Event()
        # Set by a wake-up of the answer's stop key (it was ended elsewhere) and by `close`.
        self.told = threading.Event()
        self._failure: BaseException | None = None
        self.on_abort: Callable[[], None] | None = None  # abandons the model call in flight
        self._abandoned = False
        # When the lease was last renewed by a write (the question's own, at first).
        self.held_at = time.monotonic()

    def next_event(self, event: str, data: dict[str, Any]) -> StoredEvent:
        self.seq += 1
        return StoredEvent(self.seq, event, json.dumps(data, separators=(",", ":")))

    @contextmanager
    def _batch(self) -> Iterator[tuple[list[StoredEvent], int]]:
        """Take the pending events (and the last seq) for one write; restore them on failure."""
        with self._lock:
            batch, self._pending = self._pending, []
            seq = self.seq
        try:
            yield batch, seq
        except BaseException:
            with self._lock:
                self._pending[:0] = batch
            raise

    def _check(self) -> None:
        if self._failure is not None:
            raise self._failure

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self._check()
        with self._lock:
            self._pending.append(self.next_event(event, data))
        self._news.set()

    def flush(self) -> None:
        """Store the pending events now, in one transaction."""
        with self._writing, self._batch() as (batch, _):
            # Handed over or ended meanwhile: a write now would renew a lease given up.
            if batch and not self._gave_up():
                event_log.append_events(
                    self.service.engine, self.message_id, self.owner, self.service.lease, batch
                )
                self.held_at = time.monotonic()
                self.service.announce(self.message_id, batch)

    def save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self._check()
        with self._writing, self._batch() as (batch, seq):
            self._check()  # not handed over while this waited for the flusher
            event_log.save_checkpoint(
                self.service.engine,
                self.message_id,
                self.owner,
                self.service.lease,
                checkpoint,
                seq,
                batch,
            )
            self.held_at = time.monotonic()
        if batch:
            self.service.announce(self.message_id, batch)

    def finish(self, result: TurnResult) -> None:
        if isinstance(self._failure, LeaseLost):  # ended or handed over: not this runner's
            raise self._failure
        with self._writing, self._batch() as (batch, _):
            with self._lock:
                done = self.next_event("done", {"status": result.status})
            leases.finish_message(
                self.service.engine,
                self.message_id,
                self.owner,
                status=result.status,
                content=result.content,
                citations=result.citations,
                inline_citations=result.inline_citations,
                error=result.error,
                done=done,
                events=batch,
                stop_reason=result.stop_reason,
            )
        self.close()
        self.service.announce(self.message_id, [*batch, done])
        self.service.ended(self.message_id)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def _gave_up(self) -> bool:
        return isinstance(self._failure, LeaseLost)

    @property
    def failed(self) -> bool:
        return self._failure is not None

    def abort(self) -> None:
        """Stop the runner at once: its answer was ended elsewhere (cancelled, timed out)."""
        self._failure = LeaseLost()
        self.close()
        self._abandon()

    def _abandon(self) -> None:
        """End the turn's model call and sandbox now: nothing more of this turn is wanted."""
        with self._lock:
            if self._abandoned or self.on_abort is None:
                return
            self._abandoned = True
        try:
            self.on_abort()
        except Exception:
            log.exception("could not abandon a stopped turn's model call")

    def hand_over(self) -> None:
        """Stop writing and release the lease, for another worker to resume the turn.

        The model call and the sandbox end here too: the turn goes on elsewhere, from its
        checkpoint, and this process asks the model nothing more for it.
        """
        self._failure = LeaseLost()
        self.close()
        self._abandon()
        try:
            with self._writing:  # after any batch in flight, which would renew the lease
                leases.release_lease(self.service.engine, self.message_id, self.owner)
        except Exception:
            log.exception("could not hand a turn over; its lease will run out instead")

    def close(self) -> None:
        """Stop the background flusher (the turn has ended, one way or another)."""
        self._closed.set()
        self._news.set()
        self.told.set()

    def watch_for_end(self) -> None:
        """Until the turn ends here, wait for news that it was ended elsewhere; then abort.

        The news is a wake-up of the answer's stop key, from whichever worker or host ended
        it; the answer's row says whether this runner still owns it (a listener that
        reconnects wakes every key, so a wake-up alone proves nothing).
        """
        wakeups = self.service.wakeups
        with wakeups.watch(leases.stop_key(self.message_id), self.told):
            while True:
                self.told.wait()
                self.told.clear()
                if self.closed:
                    return
                try:
                    if leases.runs_as(self.service.engine, self.message_id, self.owner):
                        continue
                except Exception:  # the flusher's next write finds out instead
                    log.exception("could not tell whether a turn was ended elsewhere")
                    continue
                log.info("a turn was ended elsewhere; its runner stops")
                self.abort()
                return

    def run_flusher(self) -> None:
        """Close batch windows, and keep the lease when the model is quiet for long.

        Every write the turn makes renews the lease anyway; only a turn quiet for
        `RENEW_AFTER` of a lease renews it on its own, so an idle running answer costs one
        transaction per that long, not one per window.
        """
        renew_after = self.service.lease.total_seconds() * RENEW_AFTER
        flushed_at = float("-inf")
        while not self._closed.is_set():
            try:
                quiet = max(0.0, self.held_at + renew_after - time.monotonic())
                if self._news.wait(quiet):
                    if self._closed.is_set():
                        return
                    # Let the window fill: a short one after a quiet spell (the first words
                    # show at once), and never more than one batch per FLUSH_SPACING.
                    wait = max(FLUSH_SECONDS, flushed_at + FLUSH_SPACING - time.monotonic())
                    self._closed.wait(wait)
                    self._news.clear()
                    self.flush()
                    flushed_at = time.monotonic()
                else:
                    with self._writing:
                        if self._gave_up():
                            return
                        leases.renew_lease(
                            self.service.engine, self.message_id, self.owner, self.service.lease
                        )
                        self.held_at = time.monotonic()
            except LeaseLost as exc:
                # Ended or taken over elsewhere: the model call and the sandbox end now, not
                # at the runner's next write.
                self._failure = exc
                self._abandon()
                return
            except Exception as exc:
                log.exception("could not store a turn's events")
                self._failure = exc
                return
