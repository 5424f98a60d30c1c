"""Turns in the background: a closed tab or a dropped connection loses nothing.

A turn runs in its own thread (a greenlet under gunicorn's gevent worker) and writes its
events to the database in short batches, so any worker can stream it, and a reader that
reconnects resumes from `Last-Event-ID`. Readers are woken by the writes themselves (see
`wakeups.py`). The runner owns a lease on its answer row and renews it with every batch; each
worker's sweeper (and a reader or a new question that finds a lease expired) takes a turn
whose runner died over from its last checkpoint under a new owner, and the old runner,
should it still be alive, is refused its next write.

An answer ended from outside its runner (a cancel, the turn deadline), in whichever worker or
host, reaches the runner at once over the wake-up channel (`leases.stop_key`): its model call
is abandoned and its sandbox ends, so nothing of a turn that is over runs on. A worker told to
stop hands its turns over and ends its streams at once (`ChatService.stop_serving`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Engine

from ..llm.base import Model
from ..packets.models import USER_CANCELLED
from ..settings import (
    DEFAULT_MAX_TOKENS,
    MAX_STREAMS_PER_USER,
    MAX_TURNS_PER_USER,
    TURN_DEADLINE_SECONDS,
    TURN_LEASE_SECONDS,
)
from ..store.writes import WRITE_RETRY_SECONDS, is_transient
from ..turn.runner import ToolRunner, TurnResult, failed_turn, run_turn, start_checkpoint
from . import conversations, event_log, leases, open_streams, records, versions
from .event_log import LeaseLost
from .leases import SessionBusy
from .notes import StoredEvent, following
from .wakeups import Listener, Wakeups

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=TURN_LEASE_SECONDS)
DEADLINE = timedelta(seconds=TURN_DEADLINE_SECONDS)
FLUSH_SECONDS = 0.03
FLUSH_SPACING = 0.1  # as often as the browser's stream renders
SWEEP_SECONDS = 5.0
# A quiet turn renews its lease itself once this share of it has passed since its last write
# (30 s leases: after 21 s, so 0.048 transactions a second), leaving the rest of the lease
# for that write's own retries (`webapp.store.writes.WRITE_RETRY_SECONDS`).
RENEW_AFTER = 0.7
HEARTBEAT_SECONDS = 15.0
CRASHED = "Something went wrong while answering. Please try again."
UNRESUMABLE = "This answer was interrupted and cannot be resumed. Please ask again."
TIMED_OUT = "This answer took too long and was stopped. Please ask again."


class _DatabaseSink:
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


class WorkerStopping(Exception):
    """This worker is stopping: its streams end, for their clients to resume on a live one."""


class ChatService:
    """Start, run, resume and stream turns for the app's users."""

    def __init__(
        self,
        engine: Engine,
        model: Callable[[], Model],
        tools: Callable[[int], ToolRunner],
        *,
        lease: timedelta = LEASE,
        deadline: timedelta = DEADLINE,
        max_turns_per_user: int = MAX_TURNS_PER_USER,
        max_streams_per_user: int = MAX_STREAMS_PER_USER,
        listener: Listener | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        on_ended: Callable[[str], object] | None = None,
    ) -> None:
        self.engine, self.model, self.tools, self.lease = engine, model, tools, lease
        self.deadline, self.max_turns_per_user = deadline, max_turns_per_user
        self.max_streams_per_user = max_streams_per_user
        self.max_tokens = max_tokens  # of one model round (MODEL_MAX_TOKENS)
        self.worker_id = records.new_id()  # this process, for counting its open streams
        self.wakeups = Wakeups()
        self.listener = listener
        # Told each answer that reached its end here (done, stopped, failed), once its row is
        # final: the web layer keeps what a page draws of it (webapp/web/snapshots.py).
        self.on_ended = on_ended
        self._threads: set[threading.Thread] = set()
        self._sinks: set[_DatabaseSink] = set()
        self._lock = threading.Lock()
        self._swept = False
        self._stop = threading.Event()
        self._stopping = threading.Event()  # a deploy's SIGTERM: see `stop_serving`
        self._handed_over = threading.Event()  # ... and its hand-overs are written
        self._background: list[threading.Thread] = []

    def ask(self, user_id: int, session_id: str, question: str) -> str:
        """Store the question and start its turn.

        SessionBusy while the session is still answering; TooManyTurns past the user's cap.
        """
        self._not_busy(user_id, session_id)
        history = conversations.text_history(self.engine, user_id, session_id)
        owner = records.new_id()
        checkpoint = start_checkpoint(history, question)
        _, message_id = leases.start_message(
            self.engine,
            user_id,
            session_id,
            question,
            self.lease,
            owner,
            checkpoint,
            max_running=self.max_turns_per_user,
        )
        self._start(user_id, message_id, _DatabaseSink(self, message_id, owner, 0), checkpoint)
        return message_id

    def ended(self, message_id: str) -> None:
        """Tell `on_ended` that an answer is final; its failure never touches the answer."""
        if self.on_ended is None:
            return
        try:
            self.on_ended(message_id)
        except Exception:
            log.exception("could not keep a finished answer's snapshot")

    def regenerate(self, user_id: int, session_id: str, answer_id: str) -> str:
        """Write a new version of the chat's latest answer in its place; return its id.

        The question is not asked again: the model gets the chat as shown before it, then
        it. LookupError, NotInChat or NotLatest for an answer that can't be regenerated;
        SessionBusy and TooManyTurns as `ask`.
        """
        self._not_busy(user_id, session_id)
        question = versions.question_for(self.engine, user_id, session_id, answer_id)
        history = conversations.text_history(
            self.engine, user_id, session_id, before=question.created_at
        )
        checkpoint, owner = start_checkpoint(history, question.content), records.new_id()
        version = versions.start_version(
            self.engine,
            user_id,
            session_id,
            answer_id,
            self.lease,
            owner,
            checkpoint,
            self.max_turns_per_user,
        )
        self._start(user_id, version, _DatabaseSink(self, version, owner, 0), checkpoint)
        return version

    def edit(self, user_id: int, session_id: str, question_id: str, text: str) -> versions.Edited:
        """Ask `text` in place of a question; it and everything after it leave the chat.

        The model gets the chat as shown before the question, then `text`. LookupError or
        NotInChat for a question that can't be edited; SessionBusy and TooManyTurns as `ask`.
        """
        self._not_busy(user_id, session_id)
        question = versions.question_to_edit(self.engine, user_id, session_id, question_id)
        history = conversations.text_history(
            self.engine, user_id, session_id, before=question.created_at
        )
        checkpoint, owner = start_checkpoint(history, text), records.new_id()
        edited = versions.start_edit(
            self.engine,
            user_id,
            session_id,
            question_id,
            text,
            self.lease,
            owner,
            checkpoint,
            self.max_turns_per_user,
        )
        answer = edited.answer_id
        self._start(user_id, answer, _DatabaseSink(self, answer, owner, 0), checkpoint)
        return edited

    def _not_busy(self, user_id: int, session_id: str) -> None:
        """SessionBusy while the chat answers (taking a dead runner's turn over first)."""
        running = leases.running_message(self.engine, user_id, session_id)
        if running is not None:
            self._resume_if_expired(user_id, running.id, running.lease_until)
            raise SessionBusy

    def announce(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> None:
        """Wake the message's readers here, and tell the other processes (after commit).

        `events` are what the write stored: readers that are handed them read nothing.
        """
        self.wakeups.wake(message_id, events)
        if self.listener is not None:
            self.listener.publish(message_id, events)

    def start_background(self) -> None:
        """Start this worker's sweeper and its listener for other processes' writes.

        Called once per worker process (gunicorn's `post_worker_init`, see gunicorn.conf.py):
        turns a dead worker left running are taken over within a lease and a sweep, whether
        or not anyone is reading them.
        """
        with self._lock:
            if self._background:
                return
            jobs: list[Callable[[], None]] = [self._sweep_forever]
            if self.listener is not None:
                listener = self.listener
                jobs.append(lambda: listener.run(self.wakeups, self._stop))
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
        self._stop.set()
        if self._stopping.is_set():
            # The streams may have ended (and let the worker exit) before `stop_serving` has
            # written every hand-over: a lease left held would keep its turn waiting.
            self._handed_over.wait(WRITE_RETRY_SECONDS)
        with self._lock:
            sinks = list(self._sinks)
        for sink in sinks:
            sink.hand_over()
        for thread in self._background:
            thread.join(5)
        try:
            open_streams.worker_gone(self.engine, self.worker_id)
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
        self._stopping.set()
        try:
            with self._lock:
                sinks = list(self._sinks)
            for sink in sinks:
                sink.hand_over()
        finally:
            self._handed_over.set()
            self.wakeups.wake_all()

    def open_stream(self, user_id: int) -> str | None:
        """Count one more open stream of the user's; None when they have as many as allowed."""
        return open_streams.open_stream(
            self.engine, user_id, self.worker_id, self.max_streams_per_user, self.lease
        )

    def close_stream(self, stream_id: str) -> None:
        """Stop counting a stream (it ended, or its client went away)."""
        try:
            open_streams.close_stream(self.engine, stream_id)
        except Exception:  # it stops counting when this worker is next seen gone
            log.exception("could not forget a closed stream")

    def _sweep_forever(self) -> None:
        # This worker's lease, renewed twice a lease: its streams count against their users
        # while it holds, and stop counting once it lapses (the worker died). The sweep, a
        # read, comes every SWEEP_SECONDS.
        beat = min(SWEEP_SECONDS, self.lease.total_seconds() / 3)
        seen_every = self.lease.total_seconds() / 2
        seen_at = float("-inf")
        sweep_at = time.monotonic() + SWEEP_SECONDS
        while True:
            if time.monotonic() >= seen_at + seen_every:
                try:
                    open_streams.worker_seen(self.engine, self.worker_id)
                    seen_at = time.monotonic()
                except Exception:
                    log.exception("could not say this worker is alive")
            if self._stop.wait(beat):
                return
            if time.monotonic() < sweep_at or self._stopping.is_set():
                continue
            sweep_at = time.monotonic() + SWEEP_SECONDS
            try:
                self.end_overdue()
                self.resume_stale()
            except Exception:
                log.exception("could not look for interrupted or overdue turns")

    def cancel(self, user_id: int, session_id: str, message_id: str) -> bool:
        """Stop a running answer now, keeping what it wrote; False if it was not running."""
        if conversations.get_message(self.engine, user_id, session_id, message_id) is None:
            return False
        return self._end(message_id, status="cancelled", error=None, stop_reason=USER_CANCELLED)

    def end_overdue(self) -> int:
        """End every answer running past the turn deadline, whatever its model is doing."""
        return sum(
            self._end(message_id, status="error", error=TIMED_OUT, stop_reason=None)
            for message_id in leases.overdue_messages(self.engine, self.deadline)
        )

    def _end(
        self, message_id: str, *, status: str, error: str | None, stop_reason: str | None
    ) -> bool:
        ended = leases.end_running(
            self.engine, message_id, status=status, error=error, stop_reason=stop_reason
        )
        with self._lock:
            local = [sink for sink in self._sinks if sink.message_id == message_id]
        for sink in local:
            sink.abort()
        if ended:
            self.announce(message_id)
            # A runner in another process hears it through the wake-up channel (PostgreSQL's
            # notification rides in `end_running`'s transaction; SQLite's poller sees the row).
            if self.listener is not None:
                self.listener.publish(leases.stop_key(message_id))
            self.ended(message_id)
        return ended

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
            for user_id, message_id in leases.stale_messages(self.engine)
        )

    def resume_if_stale(self, user_id: int, message_id: str) -> bool:
        """Take over an answer whose lease expired, from its last checkpoint."""
        if self._stopping.is_set():  # a stopping worker hands turns over, it takes none
            return False
        owner = leases.claim_stale(self.engine, message_id, self.lease)
        if owner is None:
            return False
        high_water = event_log.last_seq(self.engine, message_id)
        saved = event_log.load_checkpoint(self.engine, message_id)
        checkpoint, after = saved if saved is not None else ({}, 0)
        # Ids are never reused: what the dead runner wrote after its checkpoint is withdrawn,
        # and readers that saw it are told so by a `reset` event.
        event_log.truncate_events(self.engine, message_id, after)
        sink = _DatabaseSink(self, message_id, owner, high_water)
        try:
            if high_water > after:
                sink.emit("reset", {"after": after})
            if not isinstance(checkpoint, dict) or "messages" not in checkpoint:
                sink.finish(failed_turn(sink, UNRESUMABLE))
                return True
        except LeaseLost:
            return True
        log.info("resuming an interrupted turn from its checkpoint")
        self._start(user_id, message_id, sink, checkpoint)
        return True

    def _resume_if_expired(
        self, user_id: int, message_id: str, lease_until: datetime | None
    ) -> None:
        # Only an expired lease is worth a write: claiming takes the database's write lock.
        if lease_until is None or lease_until < records.now():
            self.resume_if_stale(user_id, message_id)

    def _start(
        self, user_id: int, message_id: str, sink: _DatabaseSink, checkpoint: dict[str, Any]
    ) -> None:
        thread = threading.Thread(
            target=self._run,
            args=(user_id, sink, checkpoint),
            name=f"turn-{message_id[:8]}",
            daemon=True,
        )
        if self._stopping.is_set():  # asked as this worker stops: a live one answers it
            sink.hand_over()
            return
        with self._lock:
            self._threads.add(thread)
            self._sinks.add(sink)
        thread.start()

    def _run(self, user_id: int, sink: _DatabaseSink, checkpoint: dict[str, Any]) -> None:
        model, tools = self.model(), self.tools(user_id)
        stop_tools = getattr(tools, "stop", None)  # LocalTools ends a running sandbox with it

        def abandon() -> None:
            model.close()
            if callable(stop_tools):
                stop_tools()

        sink.on_abort = abandon
        if sink.failed:  # ended before it started: nothing of it may run
            sink.abort()
        for job, name in ((sink.run_flusher, "flush"), (sink.watch_for_end, "ends")):
            threading.Thread(target=job, daemon=True, name=f"{name}-{sink.message_id[:8]}").start()
        try:
            result = run_turn(model, tools, sink, checkpoint, self.max_tokens)
            sink.finish(result)
        except LeaseLost:
            log.info("a turn was ended or taken over elsewhere; this runner stops")
        except Exception as exc:
            if is_transient(exc) or is_transient(exc.__cause__ or exc):
                # The database stayed away past the write's retries: a live worker resumes
                # the turn from its checkpoint instead of this answer failing.
                log.warning("a turn's database write kept failing; handing the turn over")
                sink.hand_over()
                return
            log.exception("turn runner crashed")
            try:
                sink.finish(failed_turn(sink, CRASHED))
            except Exception:
                log.exception("could not record the failed turn")
        finally:
            sink.close()
            model.close()
            with self._lock:
                self._threads.discard(threading.current_thread())
                self._sinks.discard(sink)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait for this process's running turns (tests and shutdown)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

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
        read = True
        with self.wakeups.inbox(message_id) as inbox:
            while True:
                if self._stopping.is_set():
                    raise WorkerStopping
                inbox.flag.clear()
                handed, stale = inbox.take()
                batch = None if read or stale else following(handed, after)
                if read := batch is None:  # a gap, or news that did not say what: read it
                    batch = event_log.events_after(self.engine, message_id, after)
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
                    and not self._still_running(user_id, session_id, message_id, after)
                ):
                    return
                read = False
                while not inbox.flag.wait(HEARTBEAT_SECONDS):
                    yield []  # a heartbeat costs no query

    def _still_running(self, user_id: int, session_id: str, message_id: str, after: int) -> bool:
        """Tell whether a quiet answer may still write; take it over if its runner died."""
        found = leases.message_state(self.engine, user_id, session_id, message_id)
        if found is None:
            return False  # deleted
        status, lease_until = found
        if status != "running":
            return bool(event_log.events_after(self.engine, message_id, after))
        self._resume_if_expired(user_id, message_id, lease_until)
        return True
