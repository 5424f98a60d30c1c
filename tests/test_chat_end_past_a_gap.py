"""An end from outside numbered past a gap (`SEQ_SKIP`), handed to a reader in the same note
as stored events it had not had yet: the reader reads past the gap and ends (issue 21).

A Stop met by another worker than the runner's waits half a second for the runner's word
that it stored what it handed out live; on a loaded machine the word comes late, and the
end's events are numbered past any id handed out. SQLite's poller in the reader's worker
then hands over, in one note, the runner's last store (events that follow on from what the
reader has) and the end past the gap. The reader took the events that followed on and
waited, past a gap, for news that never came: nothing is written after an end (seen once in
120 Stops from another worker under `gunicorn`, the stream's heartbeats going on for good).
"""

from __future__ import annotations

import json
import queue
import threading

from flask import Flask

from tests.test_chat_wake_payloads import LEASE, packet, running_answer
from webapp.chat import event_log, leases
from webapp.chat.event_log import SEQ_SKIP
from webapp.chat.notes import StoredEvent
from webapp.chat.service import ChatService
from webapp.chat.wakeups import SqlitePoller
from webapp.store.app_db import get_engine

WAIT = 20.0  # the most a step waits for what it needs (it comes in milliseconds)


def test_a_note_with_stored_events_then_an_end_past_a_gap_ends_the_stream(app: Flask) -> None:
    engine = get_engine(app)
    service = ChatService(engine, model=lambda: None, tools=lambda _: None)  # type: ignore[arg-type,return-value]
    answer = running_answer(engine)
    message_id = answer[2]
    event_log.append_events(engine, message_id, "writer", LEASE, [packet(s) for s in range(1, 16)])
    seen: queue.Queue[StoredEvent] = queue.Queue()

    def read() -> None:
        for event in service.events(*answer):
            if event is not None:
                seen.put(event)

    threading.Thread(target=read, daemon=True).start()
    assert [seen.get(timeout=WAIT).seq for _ in range(15)] == list(range(1, 16))
    # The runner's last store, whose news has not reached the reader yet ...
    event_log.append_events(engine, message_id, "writer", LEASE, [packet(16), packet(17)])
    # ... and the end from another worker that could not wait for the runner's word.
    assert leases.end_running(
        engine,
        message_id,
        status="cancelled",
        error=None,
        stop_reason="user_cancelled",
        live=True,
        withdraw=True,
    )
    # One look of the poller in the reader's worker hands over both, in one note.
    SqlitePoller(engine)._wake_grown(service.wakeups, {message_id: 15})

    got = [seen.get(timeout=WAIT) for _ in range(5)]
    assert [(e.seq, e.event) for e in got] == [
        (16, "packet"),
        (17, "packet"),
        (17 + SEQ_SKIP, "reset"),
        (18 + SEQ_SKIP, "packet"),
        (19 + SEQ_SKIP, "done"),
    ]
    assert json.loads(got[2].data) == {"after": 17}


def test_an_end_past_the_gap_numbers_its_events_one_after_another(app: Flask) -> None:
    engine = get_engine(app)
    _, _, message_id = running_answer(engine)
    event_log.append_events(engine, message_id, "writer", LEASE, [packet(1), packet(2)])
    assert leases.end_running(
        engine,
        message_id,
        status="error",
        error="Too long.",
        stop_reason=None,
        live=True,
        withdraw=True,
    )
    ended = event_log.events_after(engine, message_id, 2)
    # reset, error, stop, done: no id skipped between them (a reader holds past a gap).
    assert [e.seq for e in ended] == [s + 2 + SEQ_SKIP for s in range(4)]
    assert [e.event for e in ended] == ["reset", "packet", "packet", "done"]
