"""A stream's reads shared with the other streams of its answer (`chat/flights.py`), beside
the events it holds past a gap (`chat/notes.py::following`): every event once, in order.

A stream shares only a read begun after it took the news that sent it to read (a write's
news follows its commit), and what it holds is added to its own copy of the shared read,
never to the read the other streams were handed.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator

from flask import Flask
from sqlalchemy.engine import Engine

from tests.support.waiting import wait_for
from tests.test_chat_wake_payloads import WAIT, packet, running_answer, write
from webapp.chat.notes import StoredEvent
from webapp.chat.reading import AnswerReader, WorkerStopping
from webapp.chat.wakeups import Inbox, Wakeups
from webapp.store.app_db import get_engine


def streamed(
    reader: AnswerReader, user_id: int, session_id: str, message_id: str
) -> queue.Queue[list[int]]:
    """Read the answer as a stream does, in a thread: each batch's event ids to the queue."""
    batches: queue.Queue[list[int]] = queue.Queue()

    def read() -> None:
        with contextlib.suppress(WorkerStopping):
            for batch in reader.event_batches(user_id, session_id, message_id):
                if batch:
                    batches.put([event.seq for event in batch])

    threading.Thread(target=read, daemon=True).start()
    return batches


def test_a_stream_shares_only_a_read_begun_after_it_took_its_news(app: Flask) -> None:
    engine = get_engine(app)
    user_id, session_id, message_id = running_answer(engine)
    write(engine, message_id, [packet(1)], None)
    stopping = threading.Event()
    reader = AnswerReader(engine, Wakeups(), stopping, lambda *_: None)
    batches = streamed(reader, user_id, session_id, message_id)
    assert batches.get(timeout=WAIT) == [1]  # its first look
    # Another stream of the answer begins to read what follows 1, after this one listened
    # and before event 2 is stored: its read can't hold 2.
    began, gate = threading.Event(), threading.Event()

    def slow() -> list[StoredEvent]:
        began.set()
        gate.wait(WAIT)
        return []

    threading.Thread(
        target=lambda: reader.flights.read(("events", message_id, 1), slow), daemon=True
    ).start()
    wait_for(began.is_set)
    try:
        write(engine, message_id, [packet(2)], None)
        reader.wakeups.wake(message_id, None)  # news that did not say what: read it
        assert batches.get(timeout=WAIT) == [2]  # its own read, not the one begun before
    finally:
        gate.set()
        stopping.set()
        reader.wakeups.wake_all()


class HandedAsItListens(Wakeups):
    """Hands each new inbox `events` at once: live events sent as its reader began."""

    def __init__(self, events: list[StoredEvent]) -> None:
        super().__init__()
        self.events = events

    @contextlib.contextmanager
    def inbox(self, message_id: str, flag: threading.Event | None = None) -> Iterator[Inbox]:
        with super().inbox(message_id, flag) as box:
            box.deliver(self.events)
            yield box


def test_events_held_past_a_shared_read_leave_that_read_as_it_was(app: Flask) -> None:
    engine = get_engine(app)
    user_id, session_id, message_id = running_answer(engine)
    shared = [packet(1), packet(2)]  # the read another stream of the answer began
    reader = AnswerReader(
        engine, HandedAsItListens([packet(3), packet(4)]), threading.Event(), lambda *_: None
    )
    reader.flights.read = lambda *_, **__: shared  # type: ignore[method-assign]
    batches = reader.event_batches(user_id, session_id, message_id)
    assert [event.seq for event in next(batches)] == [1, 2, 3, 4]
    del batches  # its inbox closed
    assert [event.seq for event in shared] == [1, 2]  # the other stream yields 1, 2 alone


def _first_look_beside(
    engine: Engine, quiet: bool
) -> tuple[AnswerReader, str, queue.Queue[list[int]], threading.Event, threading.Event]:
    """A stream opened while another stream's first look at the answer is still running;
    `quiet`: no news of the answer came in between."""
    user_id, session_id, message_id = running_answer(engine)
    write(engine, message_id, [packet(1)], None)
    stopping = threading.Event()
    reader = AnswerReader(engine, Wakeups(), stopping, lambda *_: None)
    began, gate, other_done = threading.Event(), threading.Event(), threading.Event()

    def other_stream() -> None:  # its first look, held open until `gate`
        def slow() -> list[StoredEvent]:
            began.set()
            gate.wait(WAIT)
            return [packet(1)]

        with reader.wakeups.inbox(message_id):
            reader.flights.read(("events", message_id, 0), slow)
            other_done.wait(WAIT)

    threading.Thread(target=other_stream, daemon=True).start()
    wait_for(began.is_set)
    if not quiet:
        write(engine, message_id, [packet(2)], None)
        reader.wakeups.wake(message_id, None)
    batches = streamed(reader, user_id, session_id, message_id)
    return reader, message_id, batches, gate, stopping


def test_a_stream_opened_beside_a_look_at_a_quiet_answer_shares_it(app: Flask) -> None:
    reader, message_id, batches, gate, stopping = _first_look_beside(get_engine(app), True)
    try:
        # No news of the answer since that look began: everything stored is in it.
        wait_for(lambda: reader.flights.sharing(("events", message_id, 0)) == 1)
        assert batches.empty()
        gate.set()
        assert batches.get(timeout=WAIT) == [1]
    finally:
        gate.set()
        stopping.set()
        reader.wakeups.wake_all()


def test_a_stream_opened_after_news_does_not_share_a_look_begun_before_it(app: Flask) -> None:
    reader, message_id, batches, gate, stopping = _first_look_beside(get_engine(app), False)
    try:
        # Event 2 was stored (and its news came) after that look began: its own read has it.
        assert batches.get(timeout=WAIT) == [1, 2]
        assert reader.flights.sharing(("events", message_id, 0)) == 0
    finally:
        gate.set()
        stopping.set()
        reader.wakeups.wake_all()
