"""Turns in the background: a closed tab or a dropped connection loses nothing.

A turn runs in its own thread and writes every event to the database, so any worker can
stream it, and a reader that reconnects resumes from `Last-Event-ID`. The runner owns a
lease on its answer row and renews it with every write; a reader (or a worker starting up)
that finds a lease expired takes the turn over from its last checkpoint under a new owner,
and the old runner, should it still be alive, is refused its next write.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Engine

from ..engines import Engine as ModelEngine
from ..turn import ToolRunner, TurnResult, failed_turn, run_turn, start_checkpoint
from . import _store as store
from ._store import LeaseLost, SessionBusy, StoredEvent

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=30)
POLL_SECONDS = 0.25
HEARTBEAT_SECONDS = 15.0
CRASHED = "Something went wrong while answering. Please try again."
UNRESUMABLE = "This answer was interrupted and cannot be resumed. Please ask again."


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
    """A TurnSink that appends to the message's stored event stream as its owner."""

    def __init__(self, service: ChatService, message_id: str, owner: str, seq: int) -> None:
        self.service, self.message_id, self.owner, self.seq = service, message_id, owner, seq

    def next_event(self, event: str, data: dict[str, Any]) -> StoredEvent:
        self.seq += 1
        return StoredEvent(self.seq, event, json.dumps(data, separators=(",", ":")))

    def emit(self, event: str, data: dict[str, Any]) -> None:
        store.append_event(self.service.engine, self.message_id, self.owner, self.service.lease,
                           self.next_event(event, data))
        self.service.notifier.notify()

    def save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        store.save_checkpoint(self.service.engine, self.message_id, self.owner,
                              self.service.lease, checkpoint, self.seq)

    def finish(self, result: TurnResult) -> None:
        store.finish_message(
            self.service.engine, self.message_id, self.owner, status=result.status,
            content=result.content, citations=result.citations,
            inline_citations=result.inline_citations, error=result.error,
            done=self.next_event("done", {"status": result.status}))
        self.service.notifier.notify()


class ChatService:
    """Start, run, resume and stream turns for the app's users."""

    def __init__(self, engine: Engine, model: Callable[[], ModelEngine],
                 tools: Callable[[int], ToolRunner], *, lease: timedelta = LEASE) -> None:
        self.engine, self.model, self.tools, self.lease = engine, model, tools, lease
        self.notifier = _Notifier()
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._swept = False

    def ask(self, user_id: int, session_id: str, question: str) -> str:
        """Store the question and start its turn; SessionBusy while one is still answering."""
        running = store.running_message(self.engine, user_id, session_id)
        if running is not None:
            self._resume_if_expired(user_id, running["id"], running["lease_until"])
            raise SessionBusy
        history = store.text_history(self.engine, user_id, session_id)
        owner = store.new_id()
        _, message_id = store.start_message(self.engine, user_id, session_id, question,
                                            self.lease, owner)
        checkpoint = start_checkpoint(history, question)
        store.save_checkpoint(self.engine, message_id, owner, self.lease, checkpoint, 0)
        self._start(user_id, message_id, _DatabaseSink(self, message_id, owner, 0), checkpoint)
        return message_id

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
        return sum(self.resume_if_stale(user_id, message_id)
                   for user_id, message_id in store.stale_messages(self.engine))

    def resume_if_stale(self, user_id: int, message_id: str) -> bool:
        """Take over an answer whose lease expired, from its last checkpoint."""
        owner = store.claim_stale(self.engine, message_id, self.lease)
        if owner is None:
            return False
        high_water = store.last_seq(self.engine, message_id)
        saved = store.load_checkpoint(self.engine, message_id)
        checkpoint, after = saved if saved is not None else ({}, 0)
        # Ids are never reused: what the dead runner wrote after its checkpoint is withdrawn,
        # and readers that saw it are told so by a `reset` event.
        store.truncate_events(self.engine, message_id, after)
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

    def _resume_if_expired(self, user_id: int, message_id: str,
                           lease_until: datetime | None) -> None:
        # Only an expired lease is worth a write: claiming takes the database's write lock.
        if lease_until is None or lease_until < store.now():
            self.resume_if_stale(user_id, message_id)

    def _start(self, user_id: int, message_id: str, sink: _DatabaseSink,
               checkpoint: dict[str, Any]) -> None:
        thread = threading.Thread(target=self._run, args=(user_id, sink, checkpoint),
                                  name=f"turn-{message_id[:8]}", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _run(self, user_id: int, sink: _DatabaseSink, checkpoint: dict[str, Any]) -> None:
        stop = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(sink, stop), daemon=True)
        renewer.start()
        model = self.model()
        try:
            result = run_turn(model, self.tools(user_id), sink, checkpoint)
            sink.finish(result)
        except LeaseLost:
            log.warning("a turn was taken over by another runner; this one stops")
        except Exception:
            log.exception("turn runner crashed")
            try:
                sink.finish(failed_turn(sink, CRASHED))
            except Exception:
                log.exception("could not record the failed turn")
        finally:
            stop.set()
            model.close()
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _renew(self, sink: _DatabaseSink, stop: threading.Event) -> None:
        """Keep the lease while the model is slow to write (renewals also ride on events)."""
        while not stop.wait(self.lease.total_seconds() / 3):
            try:
                store.renew_lease(self.engine, sink.message_id, sink.owner, self.lease)
            except LeaseLost:
                return
            except Exception:
                log.exception("could not renew a turn's lease; will retry")

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait for this process's running turns (tests and shutdown)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    def events(self, user_id: int, session_id: str, message_id: str,
               after: int = 0) -> Iterator[StoredEvent | None]:
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
            if message["status"] != "running":
                if not store.events_after(self.engine, message_id, after):
                    return  # Finished, and every event has been sent.
                continue
            running = store.running_message(self.engine, user_id, session_id)
            if running is not None and running["id"] == message_id:
                self._resume_if_expired(user_id, message_id, running["lease_until"])
            self.notifier.wait(POLL_SECONDS)
            idle += POLL_SECONDS
            if idle >= HEARTBEAT_SECONDS:
                idle = 0.0
                yield None
