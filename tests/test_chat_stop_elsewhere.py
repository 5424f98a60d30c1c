"""Stop pressed while the runner's live ids are ahead of its stored ones, and handled by another
worker than the runner (gunicorn's two): the end reaches the answer's readers (issue 21).

Two services on one SQLite file stand for two workers on one host, each with its live socket
and its poller. The model writes one delta each time the test lets it, so every step is
ordered by what the reader was handed, not by the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tests.support.fake_claude import text_reply
from tests.support.waiting import wait_for
from tests.test_chat_ends import NoTools
from tests.test_chat_live import _database, _text
from webapp.chat import endings, event_log, leases, sink
from webapp.chat.event_log import SEQ_SKIP
from webapp.chat.live import ENDING_PREFIX, LiveChannel, SocketChannel
from webapp.chat.notes import StoredEvent
from webapp.chat.service import ChatService
from webapp.chat.wakeups import SqlitePoller, Wakeups
from webapp.llm.base import ModelRequest

WAIT = 20.0  # the most a step waits for what it needs (it comes in milliseconds)


class StepModel:
    """A model that writes one text delta each time `more` is released, until closed."""

    def __init__(self) -> None:
        self.more = threading.Semaphore(0)
        self.closed = threading.Event()

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        for event in text_reply(("Balance. " * 1_000, [])):
            if event.get("type") == "content_block_delta":
                while not self.more.acquire(timeout=0.01):
                    if self.closed.is_set():
                        return
            yield event

    def close(self) -> None:
        self.closed.set()


class HeldEnding:
    """A worker's live channel whose word to a runner that its answer ends is held back (a
    datagram late or lost); `meanwhile` runs when it would have gone."""

    def __init__(self, inner: LiveChannel, meanwhile: Callable[[], None]) -> None:
        self.inner, self.meanwhile = inner, meanwhile
        self.held: list[tuple[str, Sequence[StoredEvent] | None]] = []

    def send(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> bool:
        if message_id.startswith(ENDING_PREFIX):
            self.held.append((message_id, events))
            self.meanwhile()
            return True
        return self.inner.send(message_id, events)

    def run(self, wakeups: Wakeups, stop: threading.Event) -> None:
        self.inner.run(wakeups, stop)

    def release(self) -> None:
        held, self.held = self.held, []
        for message_id, events in held:
            self.inner.send(message_id, events)


class Reader:
    """A stream of the answer, read in a thread of its own: what it was handed so far."""

    def __init__(self, service: ChatService, user_id: int, session_id: str, message_id: str):
        self.got: list[StoredEvent] = []
        self._news = threading.Condition()
        args = (service, user_id, session_id, message_id)
        self._thread = threading.Thread(target=self._read, args=args, daemon=True)
        self._thread.start()

    def _read(self, service: ChatService, user_id: int, session_id: str, message_id: str) -> None:
        for event in service.events(user_id, session_id, message_id):
            if event is not None:
                with self._news:
                    self.got.append(event)
                    self._news.notify_all()

    def wait_for(self, seen: Callable[[list[StoredEvent]], bool]) -> bool:
        with self._news:
            return self._news.wait_for(lambda: seen(self.got), WAIT)

    @property
    def last(self) -> int:
        with self._news:
            return self.got[-1].seq if self.got else 0


def _worker(
    engine: Engine, model: StepModel, live: LiveChannel, stop: threading.Event
) -> ChatService:
    service = ChatService(
        engine,
        lambda: model,
        lambda _: NoTools(),
        live=live,
        store_spacing=20.0,
        listener=SqlitePoller(engine),
    )
    assert service.listener is not None
    for job in (service.listener.run, live.run):
        threading.Thread(target=job, args=(service.wakeups, stop), daemon=True).start()
    return service


@pytest.fixture
def no_timed_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner stores only when asked, at the end and at its checkpoints: never by the clock
    while a test runs (20 s, the store spacing, past the first store)."""
    monkeypatch.setattr(sink, "FIRST_STORE_SECONDS", 1_000.0)


def _content(engine: Engine, message_id: str) -> str:
    with engine.connect() as conn:
        query = sa.text("SELECT content FROM ai_chat_logs WHERE id = :id")
        return str(conn.execute(query, {"id": message_id}).scalar())


def _ahead_of_its_store(
    runner: ChatService, model: StepModel, reader: Reader, message_id: str
) -> None:
    """Have the runner store (as a reader's ask makes it), then hand out three deltas live."""
    engine = runner.engine
    lease = leases.lease_of(engine, message_id)
    runner.endings.ask_to_store(message_id)
    wait_for(lambda: leases.lease_of(engine, message_id) != lease, "the lease never moved")
    shown = len(_text(reader.got))
    for _ in range(3):
        model.more.release()
    assert reader.wait_for(lambda got: len(_text(got)) >= shown + 3 * 7)
    assert event_log.last_seq(engine, message_id) < reader.last  # live, not stored


@pytest.mark.parametrize("note", ["lost", "late"])
def test_a_stop_in_another_worker_reaches_readers_handed_more_than_was_stored(
    tmp_path: Path, no_timed_stores: None, monkeypatch: pytest.MonkeyPatch, note: str
) -> None:
    # The runner stores once on its own (a reader asked, after a gap) between the stopping
    # worker's look at its lease and the runner hearing of the stop, and hands out more live:
    # the end must not take ids the reader already has.
    engine, user_id, session_id = _database(f"sqlite:///{tmp_path / 'chat.sqlite'}")
    folder, stop, model = tmp_path / "live", threading.Event(), StepModel()
    folder.mkdir(mode=0o700)
    runner = _worker(engine, model, SocketChannel(folder), stop)
    message_id = runner.ask(user_id, session_id, "What are my balances?")
    reader = Reader(runner, user_id, session_id, message_id)

    def meanwhile() -> None:
        _ahead_of_its_store(runner, model, reader, message_id)
        if note == "late":
            channel.release()  # heard now, while the stopping worker waits for its word

    channel = HeldEnding(SocketChannel(folder), meanwhile)
    stopper = _worker(engine, model, channel, stop)
    wait_for(lambda: len(list(folder.glob("*.sock"))) == 2, "a worker never listened")
    for _ in range(5):
        model.more.release()
    assert reader.wait_for(lambda got: len(_text(got)) >= 5 * 7)
    if note == "late":  # the word comes back within the wait, however slow the host
        monkeypatch.setattr(endings, "STORED_ELSEWHERE_SECONDS", WAIT)
    try:
        assert stopper.cancel(user_id, session_id, message_id)
        handed = reader.last
        # What a reader that has `handed` resumes with (Last-Event-ID) holds the end ...
        after = event_log.events_after(engine, message_id, handed)
        assert [e.event for e in after][-1:] == ["done"], after
        # ... and the live reader is handed it.
        assert reader.wait_for(lambda got: got[-1].event == "done")
    finally:
        channel.release()
        model.close()
        runner.wait_idle()
        stop.set()
    got, stored = reader.got, event_log.events_after(engine, message_id, 0)
    assert [e.seq for e in got] == sorted({e.seq for e in got})  # each once, in order
    assert _text(got) == _content(engine, message_id) == _text(stored)
    if note == "late":  # the runner stored what it handed out: the end follows on from it
        assert [e.seq for e in got] == list(range(1, len(got) + 1))
        assert _text(got).count("Balance") == 6  # all eight deltas
    else:  # never heard: the end is numbered past what it may have handed out, withdrawing it
        assert got[-1].seq > SEQ_SKIP and any(e.event == "reset" for e in got)
    engine.dispose()


def test_a_stop_in_the_runners_worker_that_cannot_store_first_still_ends_for_readers(
    tmp_path: Path, no_timed_stores: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, user_id, session_id = _database(f"sqlite:///{tmp_path / 'chat.sqlite'}")
    folder, stop, model = tmp_path / "live", threading.Event(), StepModel()
    folder.mkdir(mode=0o700)
    runner = _worker(engine, model, SocketChannel(folder), stop)
    message_id = runner.ask(user_id, session_id, "What are my balances?")
    reader = Reader(runner, user_id, session_id, message_id)
    try:
        model.more.release()
        assert reader.wait_for(lambda got: len(_text(got)) >= 7)
        _ahead_of_its_store(runner, model, reader, message_id)
        (turn,) = runner.running_sinks()

        def refused(batch: list[StoredEvent]) -> None:
            raise RuntimeError("the write was refused")

        monkeypatch.setattr(turn, "_store", refused)  # what it handed out stays unstored
        assert runner.cancel(user_id, session_id, message_id)
        after = event_log.events_after(engine, message_id, reader.last)
        assert [e.event for e in after][-1:] == ["done"], after
        assert reader.wait_for(lambda got: got[-1].event == "done")
    finally:
        model.close()
        runner.wait_idle()
        stop.set()
    got = reader.got
    assert got[-1].seq > SEQ_SKIP and any(e.event == "reset" for e in got)
    assert _text(got) == _content(engine, message_id)  # what was never stored is withdrawn
    engine.dispose()
