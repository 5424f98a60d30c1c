"""Turns in the background: a closed tab or a dropped connection loses nothing.

A turn runs in its own thread and writes every event to the database, so any worker can
stream it, and a reader that reconnects resumes from `Last-Event-ID`. The runner holds a
lease on its answer row; a reader that finds the lease expired (the worker died) takes
the turn over from its last checkpoint.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

from sqlalchemy.engine import Engine

from ..engines import Engine as ModelEngine
from ..turn import ToolRunner, TurnResult, run_turn, start_checkpoint
from . import _store as store

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=30)
POLL_SECONDS = 0.25
HEARTBEAT_SECONDS = 15.0


class _Notifier:
    """Wake this process's readers when a turn in it writes an event."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._version = 0

    def notify(self) -> None:
        with self._condition:
            self._version += 1
            self._condition.notify_all()

    def wait(self, timeout: float) -> None:
        with self._condition:
            seen = self._version
            self._condition.wait_for(lambda: self._version != seen, timeout)


class _DatabaseSink:
    """A TurnSink that appends to the message's stored event stream."""

    def __init__(self, service: ChatService, message_id: str, seq: int) -> None:
        self.service, self.message_id, self.seq = service, message_id, seq

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self.seq += 1
        store.append_event(self.service.engine, self.message_id, self.seq, event,
                           json.dumps(data, separators=(",", ":")))
        self.service.notifier.notify()

    def save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        store.save_checkpoint(self.service.engine, self.message_id, checkpoint, self.seq)

    def done_event(self, status: str) -> store.StoredEvent:
        self.seq += 1
        return store.StoredEvent(self.seq, "done", json.dumps({"status": status}))


class ChatService:
    """Start, run, resume and stream turns for the app's users."""

    def __init__(self, engine: Engine, model: Callable[[], ModelEngine],
                 tools: Callable[[int], ToolRunner], *, lease: timedelta = LEASE) -> None:
        self.engine, self.model, self.tools, self.lease = engine, model, tools, lease
        self.notifier = _Notifier()
        self._threads: set[threading.Thread] = set()

    def ask(self, user_id: int, session_id: str, question: str) -> str:
        """Store the question and start its turn; return the answer's message id."""
        history = store.text_history(self.engine, user_id, session_id)
        _, message_id = store.start_message(self.engine, user_id, session_id, question,
                                            self.lease)
        checkpoint = start_checkpoint(history, question)
        store.save_checkpoint(self.engine, message_id, checkpoint, 0)
        self._start(user_id, message_id, checkpoint, 0)
        return message_id

    def _start(self, user_id: int, message_id: str, checkpoint: dict[str, Any],
               seq: int) -> None:
        thread = threading.Thread(target=self._run, args=(user_id, message_id, checkpoint, seq),
                                  name=f"turn-{message_id[:8]}", daemon=True)
        self._threads.add(thread)
        thread.start()

    def _run(self, user_id: int, message_id: str, checkpoint: dict[str, Any], seq: int) -> None:
        sink = _DatabaseSink(self, message_id, seq)
        stop = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(message_id, stop), daemon=True)
        renewer.start()
        try:
            result = run_turn(self.model(), self.tools(user_id), sink, checkpoint)
        except Exception:  # run_turn reports its own failures; this is the last line.
            log.exception("turn runner crashed")
            result = TurnResult("error", "", [], [], "Something went wrong. Please try again.")
        finally:
            stop.set()
        store.finish_message(self.engine, message_id, status=result.status,
                             content=result.content, citations=result.citations,
                             inline_citations=result.inline_citations, error=result.error,
                             done=sink.done_event(result.status))
        self.notifier.notify()
        self._threads.discard(threading.current_thread())

    def _renew(self, message_id: str, stop: threading.Event) -> None:
        while not stop.wait(self.lease.total_seconds() / 3):
            store.renew_lease(self.engine, message_id, self.lease)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait for this process's running turns (tests and shutdown)."""
        for thread in list(self._threads):
            thread.join(timeout)

    def resume_if_stale(self, user_id: int, message_id: str) -> bool:
        """Take over an answer whose runner died, from its last checkpoint."""
        if not store.claim_stale(self.engine, message_id, self.lease):
            return False
        saved = store.load_checkpoint(self.engine, message_id)
        checkpoint, seq = saved if saved is not None else ({}, 0)
        if not isinstance(checkpoint, dict) or "messages" not in checkpoint:
            sink = _DatabaseSink(self, message_id, store.last_seq(self.engine, message_id))
            store.finish_message(self.engine, message_id, status="error", content="",
                                 citations=[], inline_citations=[],
                                 error="This answer was interrupted and cannot be resumed.",
                                 done=sink.done_event("error"))
            return True
        store.truncate_events(self.engine, message_id, seq)
        log.info("resuming an interrupted turn from its checkpoint")
        self._start(user_id, message_id, checkpoint, seq)
        return True

    def events(self, user_id: int, session_id: str, message_id: str,
               after: int = 0) -> Iterator[store.StoredEvent | None]:
        """Yield the answer's events after `after` until `done`; None is a heartbeat."""
        idle = 0.0
        while True:
            batch = store.events_after(self.engine, message_id, after)
            for event in batch:
                yield event
                after = event.seq
                if event.event == "done":
                    return
            if batch:
                idle = 0.0
                continue
            message = store.get_message(self.engine, user_id, session_id, message_id)
            if message is None:
                return
            if message["status"] == "running":
                self.resume_if_stale(user_id, message_id)
            elif not store.events_after(self.engine, message_id, after):
                return  # Finished, and every event has been sent.
            self.notifier.wait(POLL_SECONDS)
            idle += POLL_SECONDS
            if idle >= HEARTBEAT_SECONDS:
                idle = 0.0
                yield None
