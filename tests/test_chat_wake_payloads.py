"""A wake-up hands readers the events themselves: no query per wake-up, on every channel.

A reader reads the database for its first look, after a gap in the event ids it was handed
(a lost note) and after a note too big to carry its events; nothing is lost or repeated.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from tests.test_chat_wakeups import redis_reachable
from webapp.chat import event_log, leases
from webapp.chat import upkeep as upkeep_module
from webapp.chat.conversations import create_session
from webapp.chat.notes import PG_NOTE_BYTES, StoredEvent, decode_note, encode_note, following
from webapp.chat.service import ChatService
from webapp.chat.wakeups import Listener, PostgresListener, RedisListener, SqlitePoller, Wakeups
from webapp.store.app_db import get_engine
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import authenticate

LEASE = timedelta(minutes=5)
WAIT = 60.0
REDIS_URL = "redis://127.0.0.1:6379/0"


def packet(seq: int, words: str = "") -> StoredEvent:
    obj = {"type": "message_delta", "content": words or f"w{seq} "}
    return StoredEvent(seq, "packet", json.dumps({"obj": obj}))


def done(seq: int) -> StoredEvent:
    return StoredEvent(seq, "done", json.dumps({"status": "complete"}))


def test_a_note_carries_its_events_when_they_fit_and_only_the_id_when_not() -> None:
    events = [packet(1), packet(2, "é ✓")]
    assert decode_note(encode_note("m1", events, PG_NOTE_BYTES)) == ("m1", events)
    big = [packet(1, "x" * PG_NOTE_BYTES)]
    assert encode_note("m1", big, PG_NOTE_BYTES) == "m1"
    assert decode_note("m1") == ("m1", None)
    assert decode_note("m1 [garbled") == ("m1", None)
    assert len(encode_note("m1", [packet(1, "✓" * 3000)], PG_NOTE_BYTES).encode()) <= 7_900


@pytest.mark.parametrize(
    ("seqs", "after", "expected", "kept"),
    [
        ([3, 4], 2, [3, 4], []),
        ([1, 2, 3, 4], 2, [3, 4], []),  # a second copy of what was read is dropped
        ([4, 3, 3], 2, [3, 4], []),
        ([], 2, [], []),
        ([4, 5], 2, [], [4, 5]),  # 3 is missing: held until it is read
        ([3, 5], 2, [3], [5]),
    ],
    ids=["next", "repeated", "unordered", "nothing", "gap-before", "gap-inside"],
)
def test_following_hands_over_only_what_follows_without_a_gap(
    seqs: list[int], after: int, expected: list[int], kept: list[int]
) -> None:
    held: dict[int, StoredEvent] = {}
    for seq in seqs:
        held.setdefault(seq, packet(seq))
    assert [e.seq for e in following(held, after)] == expected
    assert sorted(held) == kept


class Reads:
    """Count the reader's reads of the events table and of the answer's state."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events = 0
        self.states = 0
        # Two readers count at once: `+=` from two threads can lose one without the lock.
        lock = threading.Lock()
        events_after, message_state = event_log.events_after, leases.message_state

        def count_events(*args: Any) -> list[StoredEvent]:
            with lock:
                self.events += 1
            return events_after(*args)

        def count_state(*args: Any) -> Any:
            with lock:
                self.states += 1
            return message_state(*args)

        monkeypatch.setattr(event_log, "events_after", count_events)
        monkeypatch.setattr(leases, "message_state", count_state)


def running_answer(engine: Engine) -> tuple[int, str, str]:
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    session_id = create_session(engine, user.id).id
    _, message_id = leases.start_message(engine, user.id, session_id, "Hi", LEASE, "writer")
    return user.id, session_id, message_id


def reading(service: ChatService, answer: tuple[int, str, str]) -> queue.Queue[StoredEvent]:
    """Read the answer to `done` in a thread; each event goes to the queue."""
    seen: queue.Queue[StoredEvent] = queue.Queue()

    def read() -> None:
        for event in service.events(*answer):
            if event is not None:
                seen.put(event)
                if event.event == "done":
                    return

    threading.Thread(target=read, daemon=True).start()
    return seen


class Looks(Reads):
    """Count the reader's looks (`reading.py`'s reads, shared or not)."""

    def __init__(self, service: ChatService, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events = 0
        self.states = 0
        lock = threading.Lock()
        flights = service.reader.flights
        read = flights.read

        def count(key: tuple[str, ...], *args: Any, **kwargs: Any) -> Any:
            with lock:
                if key[0] == "events":
                    self.events += 1
                elif key[0] == "state":
                    self.states += 1
            return read(key, *args, **kwargs)

        monkeypatch.setattr(flights, "read", count)


def settle(reads: Reads, looks: int = 1) -> None:
    """Wait until the reader has had its first look (what is there; whether it runs)."""
    flag = threading.Event()
    for _ in range(2400):  # up to a minute: a loaded machine is slow, never wrong
        if reads.events >= looks and reads.states >= looks:
            return
        flag.wait(0.025)
    raise AssertionError("the reader never looked")


def received(seen: queue.Queue[StoredEvent], count: int) -> list[int]:
    return [seen.get(timeout=WAIT).seq for _ in range(count)]


def write(
    engine: Engine, message_id: str, events: list[StoredEvent], tell: Callable[..., None] | None
) -> None:
    event_log.append_events(engine, message_id, "writer", LEASE, events)
    if tell is not None:
        tell(message_id, events)


def test_in_process_readers_are_handed_each_batch_without_reading(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = get_engine(app)
    service = ChatService(engine, model=lambda: None, tools=lambda _: None)  # type: ignore[arg-type,return-value]
    answer = running_answer(engine)
    reads = Reads(monkeypatch)
    looks = Looks(service, monkeypatch)
    first = reading(service, answer)
    settle(looks)
    second = reading(service, answer)
    settle(looks, looks=2)
    # One after the other, with no news between: the second took the first one's look.
    assert reads.events == reads.states == 1
    looked = reads.events
    for start in range(1, 40, 3):
        write(engine, answer[2], [packet(start), packet(start + 1), packet(start + 2)], None)
        service.announce(answer[2], [packet(start), packet(start + 1), packet(start + 2)])
    write(engine, answer[2], [done(40)], service.announce)
    assert received(first, 40) == received(second, 40) == list(range(1, 41))
    assert reads.events == looked  # 14 wake-ups each, and not one read


def test_a_lost_note_is_read_once_and_a_repeated_one_is_not_shown_twice(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = get_engine(app)
    service = ChatService(engine, model=lambda: None, tools=lambda _: None)  # type: ignore[arg-type,return-value]
    answer = running_answer(engine)
    reads = Reads(monkeypatch)
    seen = reading(service, answer)
    settle(reads)
    write(engine, answer[2], [packet(1), packet(2)], service.announce)
    assert received(seen, 2) == [1, 2]
    looked = reads.events
    write(engine, answer[2], [packet(3)], None)  # its note never came
    write(engine, answer[2], [packet(4)], service.announce)  # ... so 4 shows a gap
    assert received(seen, 2) == [3, 4]
    assert reads.events == looked + 1
    service.announce(answer[2], [packet(3), packet(4)])  # a late copy, from another channel
    write(engine, answer[2], [packet(5), done(6)], service.announce)
    assert received(seen, 2) == [5, 6]
    assert seen.empty() and reads.events == looked + 1


def test_resuming_by_last_event_id_reads_from_there_then_takes_the_notes(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = get_engine(app)
    service = ChatService(engine, model=lambda: None, tools=lambda _: None)  # type: ignore[arg-type,return-value]
    user_id, session_id, message_id = running_answer(engine)
    write(engine, message_id, [packet(1), packet(2), packet(3)], None)
    reads = Reads(monkeypatch)
    seen: queue.Queue[StoredEvent] = queue.Queue()

    def read() -> None:
        for event in service.events(user_id, session_id, message_id, after=2):
            if event is not None:
                seen.put(event)

    threading.Thread(target=read, daemon=True).start()
    assert received(seen, 1) == [3]
    write(engine, message_id, [packet(4), done(5)], service.announce)
    assert received(seen, 2) == [4, 5]
    assert reads.events == 1


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Engine]:
    engine = create_store_engine(pg_url)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    yield engine
    engine.dispose()


def _watching(
    listener: Listener, message_id: str, monkeypatch: pytest.MonkeyPatch
) -> threading.Event:
    """Set once the listener hands `message_id`'s news over as it comes.

    PostgreSQL's and Redis's do from their connect on. SQLite's poller does from its first
    look at the message: a write before that look finds no earlier count to grow from, so its
    readers are told to read (as a stream that opens between two polls is).
    """
    ready = threading.Event()
    if not isinstance(listener, SqlitePoller):
        ready.set()
        return ready
    wake_grown = listener._wake_grown

    def looked(wakeups: Wakeups, seen: dict[str, int]) -> dict[str, int]:
        now = wake_grown(wakeups, seen)
        if message_id in now:
            ready.set()
        return now

    monkeypatch.setattr(listener, "_wake_grown", looked)
    return ready


def across_processes(
    engine: Engine,
    listener: Listener,
    tell: Callable[[str, list[StoredEvent]], None] | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reader's host hears a writer elsewhere: each note's events, a big one by a read."""
    monkeypatch.setattr(upkeep_module, "SWEEP_SECONDS", 3600.0)
    writer = create_store_engine(engine.url.render_as_string(hide_password=False))
    reader_host = ChatService(engine, model=lambda: None, tools=lambda _: None, listener=listener)  # type: ignore[arg-type,return-value]
    answer = running_answer(engine)
    reads = Reads(monkeypatch)
    connected = threading.Event()
    wake_all = reader_host.wakeups.wake_all

    def on_connect() -> None:  # a listener wakes everyone as it (re)connects
        wake_all()
        connected.set()

    monkeypatch.setattr(reader_host.wakeups, "wake_all", on_connect)
    watching = _watching(listener, answer[2], monkeypatch)
    seen = reading(reader_host, answer)
    settle(reads)
    reader_host.start_background()
    try:
        assert connected.wait(WAIT)
        settle(reads, looks=2)  # that wake-up cost the reader a read: count after it
        assert watching.wait(WAIT)
        looked = reads.events
        for seq in range(1, 11):
            write(writer, answer[2], [packet(seq)], tell)
            assert received(seen, 1) == [seq]
        assert reads.events == looked  # ten notes, no read
        big = packet(11, "x" * (PG_NOTE_BYTES + 100))
        write(writer, answer[2], [big], tell)  # too big for a NOTIFY: its note says only "news"
        write(writer, answer[2], [packet(12), done(13)], tell)
        got = [seen.get(timeout=WAIT) for _ in range(3)]
        assert [e.seq for e in got] == [11, 12, 13] and got[0].data == big.data
        assert seen.empty()
    finally:
        reader_host.stop_background()
        writer.dispose()


def test_sqlite_one_poll_hands_every_reader_the_new_events(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = get_engine(app)
    # SQLite's poller reads what grew for all its readers at once; a big event is no matter.
    monkeypatch.setattr("webapp.chat.notes.PG_NOTE_BYTES", PG_NOTE_BYTES)
    across_processes(engine, SqlitePoller(engine), None, monkeypatch)


@pytest.mark.postgres
def test_postgresql_notify_hands_readers_the_events(
    pg_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    across_processes(pg_engine, PostgresListener(pg_engine), None, monkeypatch)


@pytest.mark.skipif(not redis_reachable(), reason="no Redis at 127.0.0.1:6379")
def test_redis_messages_hand_readers_the_events(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    publisher = RedisListener(REDIS_URL)

    def tell(message_id: str, events: list[StoredEvent]) -> None:
        # As big as PostgreSQL would refuse, a Redis message still carries it.
        publisher.publish(message_id, events if events[0].seq != 11 else None)

    across_processes(get_engine(app), RedisListener(REDIS_URL), tell, monkeypatch)
