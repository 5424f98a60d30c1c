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
from .event_log import MAX_UNSTORED, LeaseLost
from .live import ASKED, asked, ending_key, store_key, storing_key
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
# Stored, when the process can hand batches to other processes live (`live.py`): the first
# store this long after the last, each next one twice as long after, up to the turn's store
# spacing (`ChatService.store_spacing`, and never past RENEW_AFTER of a lease, so that the
# stores keep the lease), and at every checkpoint and the end.
FIRST_STORE_SECONDS = 0.5


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
        # Handed to readers live, not stored yet; stored with the next write (`_store`).
        self._unstored: list[StoredEvent] = []
        self._stores = 0
        self._asked = False  # a reader asked for the unstored events to be stored now
        self._live_off = False  # being ended: every batch is stored before it is handed out

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

    def flush(self, store: bool = False) -> None:
        """Hand the pending events to every reader now; store them when due (or `store`).

        Without a live channel every batch is stored, as its only way to other processes.
        """
        with self._writing, self._batch() as (batch, _):
            # Handed over or ended meanwhile: a write now would renew a lease given up.
            if self._gave_up() or not (batch or (store and self._unstored)):
                return
            if not store and not self._store_due() and self._send_live(batch):
                self._unstored.extend(batch)
                return
            self._store(batch)

    def _spacing(self) -> float:
        """How long after the last store (or renewal) the next one is due."""
        # Never past RENEW_AFTER of a lease: the stores keep the lease while text flows.
        most = min(self.service.store_spacing, self.service.lease.total_seconds() * RENEW_AFTER)
        return min(most, FIRST_STORE_SECONDS * 2.0 ** min(self._stores, 20))

    def _store_due(self) -> bool:
        if self.service.store_spacing <= 0 or self.service.live is None:
            return True
        if self._asked or self._live_off or len(self._unstored) >= MAX_UNSTORED:
            return True
        return time.monotonic() >= self.held_at + self._spacing()

    def store_wait(self) -> float:
        """Seconds until the unstored events are due to be stored (inf when there are none)."""
        if not self._unstored:
            return float("inf")
        return max(0.0, self.held_at + self._spacing() - time.monotonic())

    def _send_live(self, batch: list[StoredEvent]) -> bool:
        """Wake this process's readers with `batch`, and send it to the others'; False when
        the channel can't carry it (then it is stored at once)."""
        live = self.service.live
        if live is None or not live.send(self.message_id, batch):
            return False
        self.service.wakeups.wake(self.message_id, batch)
        return True

    def _store(self, batch: list[StoredEvent]) -> None:
        """Store the unstored events and `batch` in one transaction, renewing the lease."""
        events = [*self._unstored, *batch]
        event_log.append_events(
            self.service.engine, self.message_id, self.owner, self.service.lease, events
        )
        self._stored(events)

    def _stored(self, events: list[StoredEvent]) -> None:
        self._unstored, self._asked = [], False
        self._stores += 1
        self.held_at = time.monotonic()
        if events:
            self.service.announce(self.message_id, events)

    def save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self._check()
        with self._writing, self._batch() as (batch, seq):
            self._check()  # not handed over while this waited for the flusher
            events = [*self._unstored, *batch]
            event_log.save_checkpoint(
                self.service.engine,
                self.message_id,
                self.owner,
                self.service.lease,
                checkpoint,
                seq,
                events,
            )
            self._stored(events)

    def finish(self, result: TurnResult) -> None:
        if isinstance(self._failure, LeaseLost):  # ended or handed over: not this runner's
            raise self._failure
        with self._writing, self._batch() as (batch, _):
            batch = [*self._unstored, *batch]
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
            self._unstored = []
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

    def end_live(self) -> bool:
        """Store what was handed out live, and from now on store each batch before handing
        it out: an end from outside then keeps what readers saw, and numbers its own events
        after the last one stored. False when this runner could not store (then the end
        numbers its events past any id handed out)."""
        try:
            with self._writing, self._batch() as (batch, _):
                self._live_off = True
                if self._gave_up():
                    return False
                # Even with nothing to store: the write proves this runner still owns it.
                self._store(batch)
        except LeaseLost:
            return False  # ended or handed over meanwhile
        except Exception:
            log.exception("could not store a turn's events before its end")
            return False
        return True

    def _say_storing(self) -> None:
        """Tell the end from another process that `end_live` stored (`Endings`)."""
        self.service.wakeups.wake(storing_key(self.message_id), ASKED)
        if self.service.live is not None:
            self.service.live.send(storing_key(self.message_id), ASKED)

    def run_flusher(self) -> None:
        """Close batch windows, store them when due, and keep the lease when quiet for long.

        Every store the turn makes renews the lease anyway; only a turn quiet for
        `RENEW_AFTER` of a lease renews it on its own, so an idle running answer costs one
        transaction per that long, not one per window. A reader's request (`store_key`,
        after it found a gap) stores the unstored events at the next window.
        """
        wakeups = self.service.wakeups
        with (
            wakeups.inbox(store_key(self.message_id), self._news) as wanted,
            wakeups.inbox(ending_key(self.message_id), self._news) as ending,
        ):
            self._flush_until_closed(wanted.take, ending.take)

    def _flush_until_closed(
        self,
        wanted: Callable[[], tuple[list[StoredEvent], bool]],
        ending: Callable[[], tuple[list[StoredEvent], bool]],
    ) -> None:
        renew_after = self.service.lease.total_seconds() * RENEW_AFTER
        flushed_at = float("-inf")
        while not self._closed.is_set():
            try:
                quiet = max(0.0, self.held_at + renew_after - time.monotonic())
                if self._news.wait(min(quiet, self.store_wait())):
                    if self._closed.is_set():
                        return
                    # Let the window fill: a short one after a quiet spell (the first words
                    # show at once), and never more than one batch per FLUSH_SPACING.
                    wait = max(FLUSH_SECONDS, flushed_at + FLUSH_SPACING - time.monotonic())
                    self._closed.wait(wait)
                    self._news.clear()
                    if asked(ending()) and self.end_live():
                        self._say_storing()
                    self._asked = self._asked or asked(wanted())
                    self.flush(store=self._asked)
                    flushed_at = time.monotonic()
                elif self._unstored:
                    self.flush(store=True)  # due: stored (and the lease renewed)
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
