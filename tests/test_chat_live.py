"""A running answer's batches reach readers live; its stores come seldom (issue 21).

A long turn on PostgreSQL is stored in a bounded number of transactions however many batches
it streams; a reader in another process, joining mid-turn, still gets every event once and
in order (its gap filled from the store it asks for); an answer cancelled mid-stream keeps
everything its readers were handed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from tests.support.fake_claude import text_reply
from tests.test_chat_ends import NoTools
from tests.test_store_idle_ping import _admin, _xact_commit
from webapp.chat import conversations, event_log, sink
from webapp.chat.live import SocketChannel
from webapp.chat.service import ChatService
from webapp.llm.base import ModelRequest
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import authenticate

DELTAS = 400
ROOT = Path(__file__).resolve().parents[1]


class PacedText:
    """A model that answers `deltas` text deltas `pace` seconds apart, once `go` is set."""

    def __init__(self, deltas: int = DELTAS, pace: float = 0.005) -> None:
        self.deltas, self.pace = deltas, pace
        self.go = threading.Event()
        self.go.set()
        self.closed = threading.Event()

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.go.wait(60)
        for event in text_reply(("Balance. " * self.deltas, [])):
            if event.get("type") == "content_block_delta" and self.closed.wait(self.pace):
                return
            yield event

    def close(self) -> None:
        self.closed.set()


@pytest.fixture
def fast_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches ten times as often as served, so that a short turn streams many."""
    monkeypatch.setattr(sink, "FLUSH_SPACING", 0.01)
    monkeypatch.setattr(sink, "FLUSH_SECONDS", 0.005)
    monkeypatch.setattr(sink, "FIRST_STORE_SECONDS", 0.05)


def _database(url: str) -> tuple[Engine, int, str]:
    engine = create_store_engine(url)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    return engine, user.id, conversations.create_session(engine, user.id).id


def _service(engine: Engine, model: PacedText, folder: Path) -> ChatService:
    return ChatService(
        engine,
        lambda: model,
        lambda _: NoTools(),
        live=SocketChannel(folder),
        store_spacing=20.0,
    )


def _text(events: list[event_log.StoredEvent]) -> str:
    return event_log.written_so_far(events)[0]


@pytest.mark.postgres
def test_a_long_turn_is_stored_in_a_bounded_number_of_transactions(
    pg_url: str, pg_admin_url: str, tmp_path: Path, fast_windows: None
) -> None:
    engine, user_id, session_id = _database(pg_url)
    model = PacedText(deltas=1_000, pace=0.002)
    service = _service(engine, model, tmp_path / "live")
    database, admin = str(make_url(pg_url).database), _admin(pg_admin_url)
    engine.dispose()
    before = _xact_commit(admin, database)
    message_id = service.ask(user_id, session_id, "What are my balances?")
    got = [e for e in service.events(user_id, session_id, message_id) if e is not None]
    service.wait_idle()
    engine.dispose()
    transactions = _xact_commit(admin, database) - before
    stored = event_log.events_after(engine, message_id, 0)
    assert [e.seq for e in got] == list(range(1, len(got) + 1))  # each once, in order
    assert [(e.seq, e.data) for e in got] == [(e.seq, e.data) for e in stored]
    assert _text(stored).count("Balance.") == 1_000
    # One per 0.01 s batch before: about 300 here (the question, the answer's end and its
    # snapshot, and the first reads' connections, come on top of the stores).
    assert transactions <= 30
    engine.dispose()


READER = """
import json, sys, threading
from pathlib import Path
from webapp.chat.live import SocketChannel
from webapp.chat.service import ChatService
from webapp.chat.wakeups import SqlitePoller
from webapp.store.engine import create_store_engine

url, user_id, session_id, message_id, folder, ready = sys.argv[1:]
engine = create_store_engine(url)
live = SocketChannel(Path(folder))
service = ChatService(engine, None, None, listener=SqlitePoller(engine), live=live,
                      store_spacing=20.0)
stop = threading.Event()
threading.Thread(target=live.run, args=(service.wakeups, stop), daemon=True).start()
threading.Thread(target=service.listener.run, args=(service.wakeups, stop), daemon=True).start()
while not list(Path(folder).glob("*.sock"))[1:]:
    stop.wait(0.01)
Path(ready).touch()
for event in service.events(int(user_id), session_id, message_id):
    if event is not None:
        print(json.dumps([event.seq, event.event, event.data]), flush=True)
"""


def test_a_reader_in_another_process_gets_every_event_once_in_order(
    tmp_path: Path, fast_windows: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.sqlite'}"
    engine, user_id, session_id = _database(url)
    folder, ready = tmp_path / "live", tmp_path / "ready"
    model = PacedText(deltas=DELTAS, pace=0.005)
    model.go.clear()  # the answer streams once the other process reads
    service = _service(engine, model, folder)
    stop = threading.Event()
    folder.mkdir(mode=0o700)
    threading.Thread(target=service.live.run, args=(service.wakeups, stop), daemon=True).start()
    stores: list[int] = []
    append = event_log.append_events

    def counted(*args: Any) -> None:
        stores.append(len(args[-1]))
        append(*args)

    monkeypatch.setattr(event_log, "append_events", counted)
    message_id = service.ask(user_id, session_id, "What are my balances?")
    args = [url, str(user_id), session_id, message_id, str(folder), str(ready)]
    with subprocess.Popen(
        [sys.executable, "-c", READER, *args], cwd=ROOT, stdout=subprocess.PIPE, text=True
    ) as reader:
        for _ in range(3000):
            if ready.exists() or reader.poll() is not None:
                break
            time.sleep(0.01)
        model.go.set()
        out, _ = reader.communicate(timeout=60)
    stop.set()
    service.wait_idle()
    got = [json.loads(line) for line in out.splitlines()]
    stored = event_log.events_after(engine, message_id, 0)
    assert got == [[e.seq, e.event, e.data] for e in stored]  # each once, in order
    assert got[-1][1] == "done" and _text(stored).count("Balance.") == DELTAS
    # Stored seldom: a few stores (one asked for by the reader's gap), not one per batch.
    assert 1 <= len(stores) <= 12 and sum(stores) > 5 * len(stores)
    engine.dispose()


def test_an_answer_cancelled_mid_stream_keeps_all_its_readers_were_handed(
    tmp_path: Path, fast_windows: None
) -> None:
    engine, user_id, session_id = _database(f"sqlite:///{tmp_path / 'chat.sqlite'}")
    model = PacedText(deltas=100_000, pace=0.001)
    service = _service(engine, model, tmp_path / "live")
    message_id = service.ask(user_id, session_id, "What are my balances?")
    got: list[event_log.StoredEvent] = []
    for event in service.events(user_id, session_id, message_id):
        if event is not None:
            got.append(event)
        if len(got) == 300:
            assert service.cancel(user_id, session_id, message_id)
    service.wait_idle()
    stored = event_log.events_after(engine, message_id, 0)
    assert [(e.seq, e.data) for e in got] == [(e.seq, e.data) for e in stored]
    # The runner stored what it had handed out first, so the end's ids follow on.
    assert [e.seq for e in got] == list(range(1, len(got) + 1)) and got[-1].event == "done"
    with engine.connect() as conn:
        content = conn.execute(
            sa.text("SELECT content FROM ai_chat_logs WHERE id = :id"), {"id": message_id}
        ).scalar()
    assert content == _text(got) and content.count("Balance.") >= 200
    engine.dispose()
