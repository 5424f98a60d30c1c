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

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
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
from ..turn.runner import ToolRunner, failed_turn, run_turn, start_checkpoint
from . import conversations, event_log, leases, open_streams, records, versions
from .event_log import LeaseLost
from .leases import SessionBusy
from .notes import StoredEvent
from .reading import AnswerReader
from .sink import DatabaseSink
from .wakeups import Listener, Wakeups

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=TURN_LEASE_SECONDS)
DEADLINE = timedelta(seconds=TURN_DEADLINE_SECONDS)
SWEEP_SECONDS = 5.0
CRASHED = "Something went wrong while answering. Please try again."
UNRESUMABLE = "This answer was interrupted and cannot be resumed. Please ask again."
TIMED_OUT = "This answer took too long and was stopped. Please ask again."


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
        self._sinks: set[DatabaseSink] = set()
        self._lock = threading.Lock()
        self._swept = False
        self._stop = threading.Event()
        self._stopping = threading.Event()  # a deploy's SIGTERM: see `stop_serving`
        self.reader = AnswerReader(engine, self.wakeups, self._stopping, self._resume_if_expired)
        self._handed_over = threading.Event()  # ... and its hand-overs are written
        self._background: list[threading.Thread] = []

    def ask(self, user_id: int, session_id: str, question: str) -> str:
        """Store the question and start its turn.

        SessionBusy while the session is still answering; TooManyTurns past the user's cap.
        """
        self._not_busy(user_id, session_id)

        def store_turn(owner: str, checkpoint: dict[str, Any]) -> str:
            _, answer_id = leases.start_message(
                self.engine,
                user_id,
                session_id,
                question,
                self.lease,
                owner,
                checkpoint,
                max_running=self.max_turns_per_user,
            )
            return answer_id

        return self._begin(user_id, session_id, question, None, store_turn)

    def _begin(
        self,
        user_id: int,
        session_id: str,
        text: str,
        before: datetime | None,
        store_turn: Callable[[str, dict[str, Any]], str],
    ) -> str:
        """Start a turn asking `text` of the chat as shown (before `before`, when given):
        `store_turn(owner, checkpoint)` stores its rows and returns the answer's id."""
        history = conversations.text_history(self.engine, user_id, session_id, before=before)
        checkpoint, owner = start_checkpoint(history, text), records.new_id()
        answer_id = store_turn(owner, checkpoint)
        self._start(user_id, answer_id, DatabaseSink(self, answer_id, owner, 0), checkpoint)
        return answer_id

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

        def store_turn(owner: str, checkpoint: dict[str, Any]) -> str:
            return versions.start_version(
                self.engine,
                user_id,
                session_id,
                answer_id,
                self.lease,
                owner,
                checkpoint,
                self.max_turns_per_user,
            )

        return self._begin(user_id, session_id, question.content, question.created_at, store_turn)

    def edit(self, user_id: int, session_id: str, question_id: str, text: str) -> versions.Edited:
        """Ask `text` in place of a question; it and everything after it leave the chat.

        The model gets the chat as shown before the question, then `text`. LookupError or
        NotInChat for a question that can't be edited; SessionBusy and TooManyTurns as `ask`.
        """
        self._not_busy(user_id, session_id)
        question = versions.question_to_edit(self.engine, user_id, session_id, question_id)
        edited: list[versions.Edited] = []

        def store_turn(owner: str, checkpoint: dict[str, Any]) -> str:
            edited.append(
                versions.start_edit(
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
            )
            return edited[0].answer_id

        self._begin(user_id, session_id, text, question.created_at, store_turn)
        return edited[0]

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
        sink = DatabaseSink(self, message_id, owner, high_water)
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
        self, user_id: int, message_id: str, sink: DatabaseSink, checkpoint: dict[str, Any]
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

    def _run(self, user_id: int, sink: DatabaseSink, checkpoint: dict[str, Any]) -> None:
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
        """Yield the answer's events one by one; None is a heartbeat (`AnswerReader`)."""
        return self.reader.events(user_id, session_id, message_id, after)

    def event_batches(
        self, user_id: int, session_id: str, message_id: str, after: int = 0
    ) -> Iterator[list[StoredEvent]]:
        """Yield the answer's events after `after` until `done` (`AnswerReader`)."""
        return self.reader.event_batches(user_id, session_id, message_id, after)
