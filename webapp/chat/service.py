"""Turns in the background: a closed tab or a dropped connection loses nothing.

A turn runs in its own thread (a greenlet under gunicorn's gevent worker) and hands its
events to readers in short batches, live to the host's other workers (`live.py`), storing
them on a growing spacing (`sink.py`), so any worker can stream it, and a reader that
reconnects resumes from `Last-Event-ID`. Readers are woken by the writes themselves (see
`wakeups.py`). The runner owns a lease on its answer row and renews it with every store; each
worker's sweeper (and a reader or a new question that finds a lease expired) takes a turn
whose runner died over from its last checkpoint under a new owner (`upkeep.py`), and the old
runner, should it still be alive, is refused its next write.

An answer ended from outside its runner (a cancel, the turn deadline), in whichever worker or
host, reaches the runner at once over the wake-up channel (`leases.stop_key`): its model call
is abandoned and its sandbox ends, so nothing of a turn that is over runs on; the answer keeps
what its readers were handed (`endings.py`). A worker told to stop hands its turns over and
ends its streams at once (`Upkeep.stop_serving`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
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
from ..store.writes import is_transient
from ..turn.runner import ToolRunner, failed_turn, run_turn, start_checkpoint
from . import conversations, leases, open_streams, records, versions
from .endings import Endings
from .event_log import LeaseLost
from .known import KnownMessages
from .leases import SessionBusy
from .live import LiveChannel
from .notes import StoredEvent
from .queues import Batched, UserQueues
from .reading import AnswerReader
from .sink import DatabaseSink
from .upkeep import Upkeep
from .wakeups import Listener, Wakeups

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=TURN_LEASE_SECONDS)
DEADLINE = timedelta(seconds=TURN_DEADLINE_SECONDS)
CRASHED = "Something went wrong while answering. Please try again."


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
        live: LiveChannel | None = None,
        store_spacing: float = 0.0,
    ) -> None:
        self.engine, self.model, self.tools, self.lease = engine, model, tools, lease
        self.deadline, self.max_turns_per_user = deadline, max_turns_per_user
        self.max_streams_per_user = max_streams_per_user
        self.max_tokens = max_tokens  # of one model round (MODEL_MAX_TOKENS)
        self.worker_id = records.new_id()  # this process, for counting its open streams
        self.wakeups = Wakeups()
        self.user_queues = UserQueues()  # a user's lock-taking writes, one at a time here
        self._streams: Batched[str] = Batched(
            self.user_queues,
            lambda user_id, wanted: open_streams.open_streams(
                engine, user_id, self.worker_id, max_streams_per_user, wanted, self.lease
            ),
        )
        self.listener = listener
        # How batches reach other processes' readers before they are stored (`live.py`),
        # and the most a running turn's store waits (0: every batch is stored; see sink.py).
        self.live = live
        self.store_spacing = store_spacing if live is not None else 0.0
        # Told each answer that reached its end here (done, stopped, failed), once its row is
        # final: the web layer keeps what a page draws of it (webapp/web/snapshots.py).
        self.on_ended = on_ended
        self._threads: set[threading.Thread] = set()
        self._sinks: set[DatabaseSink] = set()
        self._lock = threading.Lock()
        self.upkeep = Upkeep(self)  # the sweeper, this worker's exit, dead runners' turns
        self.endings = Endings(self)  # ends from outside a runner, requests that it store
        self.known = KnownMessages()  # whose each message is, for the streams' opens
        self.reader = AnswerReader(
            engine,
            self.wakeups,
            self.upkeep.stopping,
            self.upkeep.resume_if_expired,
            self.endings.ask_to_store,
        )

    def ask(
        self,
        user_id: int,
        session_id: str,
        question: str,
        also: Callable[[sa.Connection, str], None] | None = None,
    ) -> str:
        """Store the question and start its turn; `also(conn, answer_id)` runs in the
        transaction that stores it.

        SessionBusy while the session is still answering; TooManyTurns past the user's cap.
        The store's own refusal says the session is busy (no read before it, as a turn is
        asked far more often than refused); only then is a dead runner's turn taken over.
        """

        def store_turn(owner: str, checkpoint: dict[str, Any]) -> str:
            try:
                with self.user_queues.turn(user_id):  # the store takes the user's row lock
                    _, answer_id = leases.start_message(
                        self.engine,
                        user_id,
                        session_id,
                        question,
                        self.lease,
                        owner,
                        checkpoint,
                        max_running=self.max_turns_per_user,
                        also=also,
                    )
            except SessionBusy:
                self._not_busy(user_id, session_id)  # takes a dead runner's turn over
                raise
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
        self.known.remember(user_id, session_id, answer_id, "assistant")  # its streams come next
        self.start_turn(user_id, answer_id, DatabaseSink(self, answer_id, owner, 0), checkpoint)
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
            self.upkeep.resume_if_expired(user_id, running.id, running.lease_until)
            raise SessionBusy

    def announce(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> None:
        """Wake the message's readers here, and tell the other processes (after commit).

        `events` are what the write stored: readers that are handed them read nothing.
        """
        self.wakeups.wake(message_id, events)
        if self.listener is not None:
            self.listener.publish(message_id, events)

    def start_background(self, serving: Callable[[], bool] | None = None) -> None:
        """Start this worker's sweeper and listener (`Upkeep.start_background`)."""
        self.upkeep.start_background(serving)

    def stop_background(self) -> None:
        """Stop them and hand this process's turns over (`Upkeep.stop_background`)."""
        self.upkeep.stop_background()

    def stop_serving(self) -> None:
        """Hand this worker's turns over and end its streams (`Upkeep.stop_serving`)."""
        self.upkeep.stop_serving()

    def open_stream(self, user_id: int) -> str | None:
        """Count one more open stream of the user's; None when they have as many as allowed."""
        return self._streams.get(user_id)  # with those of the user's that queued with it

    def close_stream(self, stream_id: str) -> None:
        """Stop counting a stream (it ended, or its client went away)."""
        try:
            open_streams.close_stream(self.engine, stream_id)
        except Exception:  # it stops counting when this worker is next seen gone
            log.exception("could not forget a closed stream")

    def cancel(self, user_id: int, session_id: str, message_id: str) -> bool:
        """Stop a running answer now, keeping what it wrote; False if it was not running."""
        if conversations.get_message(self.engine, user_id, session_id, message_id) is None:
            return False
        return self.end_answer(
            message_id, status="cancelled", error=None, stop_reason=USER_CANCELLED
        )

    def end_overdue(self) -> int:
        """End every answer running past the turn deadline (`Upkeep.end_overdue`)."""
        return self.upkeep.end_overdue()

    def end_answer(
        self, message_id: str, *, status: str, error: str | None, stop_reason: str | None
    ) -> bool:
        """End a running answer from outside its runner, wherever it runs; False if not
        running (`Endings.end_answer`: it keeps what readers were handed live)."""
        return self.endings.end_answer(
            message_id, status=status, error=error, stop_reason=stop_reason
        )

    def resume_stale_once(self) -> None:
        """On first use, take over a dead worker's turns (`Upkeep.resume_stale_once`)."""
        self.upkeep.resume_stale_once()

    def resume_stale(self) -> int:
        """Take over every turn whose runner died; return how many (`Upkeep`)."""
        return self.upkeep.resume_stale()

    def resume_if_stale(self, user_id: int, message_id: str) -> bool:
        """Take over an answer whose lease expired, from its last checkpoint (`Upkeep`)."""
        return self.upkeep.resume_if_stale(user_id, message_id)

    def start_turn(
        self, user_id: int, message_id: str, sink: DatabaseSink, checkpoint: dict[str, Any]
    ) -> None:
        thread = threading.Thread(
            target=self._run,
            args=(user_id, sink, checkpoint),
            name=f"turn-{message_id[:8]}",
            daemon=True,
        )
        if self.upkeep.told_to_stop():  # asked as this worker stops: a live one answers it
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

    def running_sinks(self) -> list[DatabaseSink]:
        """The sinks of the turns running in this process."""
        with self._lock:
            return list(self._sinks)

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
