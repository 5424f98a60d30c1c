"""Wake an answer's readers when its events are written: pushed, never polled per stream.

Each process keeps one `Wakeups` table: a reader waits on a flag for the one message it
streams, and a write wakes the flags of that message only. Writes made in this process wake
their readers directly. Writes made in another process (another worker, another host) reach
this one through one listener per process, picked by the database the app uses:

- PostgreSQL: `LISTEN`; every event batch is committed with a `pg_notify` naming its message.
- Redis, when `REDIS_URL` is set: pub/sub on one channel; the writer publishes after commit.
- SQLite (one host): one poll per process of `PRAGMA data_version`, which changes whenever
  another connection commits; only then one query finds which watched messages grew.

Whatever the listener misses while it reconnects, it makes up for by waking every reader,
who then reads what it missed from the database: the events table stays the truth.

The same channel stops runners: an answer ended from outside its runner (a cancel, the turn
deadline, met by any worker of any host) wakes the key `stop:<message id>` (`store.stop_key`),
on which the runner's process waits; it then checks the answer's row and, if it no longer
runs it, ends the turn's model call and sandbox at once. SQLite's poller finds such answers
by their status.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.engine import sqlite_file
from ..text import valid_text
from .event_log import EVENTS_CHANNEL
from .leases import STOP_PREFIX, still_running
from .notes import REDIS_NOTE_BYTES, StoredEvent, decode_note, encode_note
from .tables import chat_events

log = logging.getLogger(__name__)

RECONNECT_SECONDS = 1.0
SQLITE_POLL_SECONDS = 0.01


class Inbox:
    """One reader's news of one message: the events its wake-ups carried, or word to read.

    `flag` is set on every wake-up. What a wake-up carries is kept for the reader (`take`)
    up to `HELD_EVENTS`; past that, or after a wake-up that carried nothing, the reader is
    told to read from the database instead.
    """

    __slots__ = ("_events", "_lock", "_stale", "flag")

    def __init__(self, flag: threading.Event | None = None) -> None:
        self.flag = flag if flag is not None else threading.Event()
        self._lock = threading.Lock()
        self._events: list[StoredEvent] = []
        self._stale = False

    def deliver(self, events: Sequence[StoredEvent] | None) -> None:
        """Hand the reader `events` (None: the news did not say what; read it)."""
        with self._lock:
            if events is None or self._stale or len(self._events) + len(events) > HELD_EVENTS:
                self._events, self._stale = [], True
            else:
                self._events.extend(events)
        self.flag.set()

    def take(self) -> tuple[list[StoredEvent], bool]:
        """Return what was handed over since the last take, and whether to read instead."""
        with self._lock:
            events, stale = self._events, self._stale
            self._events, self._stale = [], False
        return events, stale


HELD_EVENTS = 5_000


class Wakeups:
    """This process's readers, by the message they wait on, and when each last had news."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[Inbox]] = {}
        self._someone = threading.Condition(self._lock)
        # When news last came, per message while someone waits on it, and for everyone.
        self._news_at: dict[str, float] = {}
        self._all_news_at = 0.0
        self._news_hooks: list[Callable[[str | None], object]] = []

    @contextmanager
    def inbox(self, message_id: str, flag: threading.Event | None = None) -> Iterator[Inbox]:
        """Register a reader of `message_id`; its inbox gets the news of every write."""
        box = Inbox(flag)
        with self._lock:
            self._waiting.setdefault(message_id, set()).add(box)
            self._someone.notify_all()
        try:
            yield box
        finally:
            with self._lock:
                boxes = self._waiting.get(message_id)
                if boxes is not None:
                    boxes.discard(box)
                    if not boxes:
                        del self._waiting[message_id]
                        self._news_at.pop(message_id, None)

    @contextmanager
    def watch(
        self, message_id: str, flag: threading.Event | None = None
    ) -> Iterator[threading.Event]:
        """Register a waiter on `message_id`; its flag (`flag`, or a new one) is set whenever
        the message has news."""
        with self.inbox(message_id, flag) as box:
            yield box.flag

    def on_news(self, hook: Callable[[str | None], object]) -> None:
        """Call `hook(message_id)` on each news, `hook(None)` on news for everyone, before
        any reader is woken (`AnswerReader` drops what it kept of the message then)."""
        self._news_hooks.append(hook)

    def wake(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> None:
        """Wake the readers of one message (and nobody else), handing them `events`."""
        for hook in self._news_hooks:
            hook(message_id)
        with self._lock:
            boxes = list(self._waiting.get(message_id, ()))
            if boxes:
                self._news_at[message_id] = time.monotonic()
        for box in boxes:
            box.deliver(events)

    def wake_all(self) -> None:
        """Wake every reader: after a listener gap, each reads what it may have missed."""
        for hook in self._news_hooks:
            hook(None)
        with self._lock:
            boxes = [box for group in self._waiting.values() for box in group]
            self._all_news_at = time.monotonic()
        for box in boxes:
            box.deliver(None)

    def news_since(self, message_id: str) -> float:
        """Return when news of `message_id` last came (a `time.monotonic()`), or 0.0.

        For a caller that waits on the message: every write committed after that moment
        either is in a read begun after it, or its news is still to come to the caller's
        inbox (a write's news follows its commit, and news came here, and was noted, while
        anyone waited). So a reader may share any read of the message begun after this
        moment, not only one begun after the reader itself began to listen: the streams of
        a quiet answer opened one after another all share one look at it.
        """
        with self._lock:
            return max(self._news_at.get(message_id, 0.0), self._all_news_at)

    def watched(self) -> list[str]:
        """Return the messages someone in this process is waiting on."""
        with self._lock:
            return list(self._waiting)

    def wait_for_watchers(self, timeout: float) -> bool:
        """Block until some reader is waiting (True) or `timeout` passes (False)."""
        with self._lock:
            return self._someone.wait_for(lambda: bool(self._waiting), timeout)


class Listener(Protocol):
    """How news of other processes' writes reaches this process's `Wakeups`."""

    def publish(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> None:
        """Tell the other processes, after commit, that `message_id` has new `events`."""

    def run(self, wakeups: Wakeups, stop: threading.Event) -> None:
        """Wake local readers on other processes' news until `stop` is set."""


def _reconnecting(listen: Callable[[], None], stop: threading.Event, what: str) -> None:
    """Run `listen` again after each failure (it wakes everyone as it connects) until `stop`."""
    while not stop.is_set():
        try:
            listen()
        except Exception as exc:
            log.warning("%s failed (%s); retrying", what, type(exc).__name__)
            stop.wait(RECONNECT_SECONDS)


class PostgresListener:
    """`LISTEN` on the events channel; the writers' `pg_notify` rides in their transaction."""

    def __init__(self, engine: Engine) -> None:
        self._url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)

    def publish(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> None:
        pass  # pg_notify is sent inside the write's own transaction (`store.announce`).

    def run(self, wakeups: Wakeups, stop: threading.Event) -> None:
        import psycopg

        def listen() -> None:
            with psycopg.connect(self._url, autocommit=True) as conn:
                conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                wakeups.wake_all()
                while not stop.is_set():
                    for note in conn.notifies(timeout=RECONNECT_SECONDS):
                        wakeups.wake(*decode_note(note.payload))

        _reconnecting(listen, stop, "listening for answer events")


class RedisListener:
    """Redis pub/sub on one channel: any host that shares `REDIS_URL` hears every write."""

    def __init__(self, url: str) -> None:
        import redis

        self._url = url
        self._client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)

    def publish(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> None:
        try:
            self._client.publish(EVENTS_CHANNEL, encode_note(message_id, events, REDIS_NOTE_BYTES))
        except Exception as exc:  # readers elsewhere still get it at their next heartbeat
            log.warning("could not publish an answer event (%s)", type(exc).__name__)

    def send(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> bool:
        """Hand a batch to every host's readers before it is stored (`live.LiveChannel`)."""
        note = encode_note(message_id, events, REDIS_NOTE_BYTES)
        try:
            self._client.publish(EVENTS_CHANNEL, note)
        except Exception as exc:
            log.warning("could not publish an answer event (%s)", type(exc).__name__)
            return False
        return not events or note != message_id

    def run(self, wakeups: Wakeups, stop: threading.Event) -> None:
        import redis

        def listen() -> None:
            client = redis.Redis.from_url(
                self._url, socket_connect_timeout=5, socket_timeout=RECONNECT_SECONDS * 5
            )
            with client.pubsub(ignore_subscribe_messages=True) as pubsub:  # type: ignore[no-untyped-call]
                pubsub.subscribe(EVENTS_CHANNEL)
                wakeups.wake_all()
                while not stop.is_set():
                    note = pubsub.get_message(timeout=RECONNECT_SECONDS)
                    if note is not None and isinstance(note.get("data"), bytes):
                        wakeups.wake(*decode_note(note["data"].decode("ascii", "replace")))

        _reconnecting(listen, stop, "listening on Redis")


class SqlitePoller:
    """One cheap poll per process, and only while someone waits: one host, one file."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._file = sqlite_file(engine)

    def publish(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> None:
        pass  # the other processes see the file change

    def run(self, wakeups: Wakeups, stop: threading.Event) -> None:
        if self._file is None:
            return  # an in-memory database has no other process to hear from
        connection = sqlite3.connect(
            f"file:{quote(self._file)}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            self._poll(connection, wakeups, stop)
        finally:
            connection.close()

    def _poll(
        self, connection: sqlite3.Connection, wakeups: Wakeups, stop: threading.Event
    ) -> None:
        version: object = None
        seen: dict[str, int] = {}
        wakeups.wake_all()  # as the other listeners do when they (re)connect
        while not stop.is_set():
            if not wakeups.wait_for_watchers(RECONNECT_SECONDS):
                seen.clear()
                continue
            try:
                now = connection.execute("PRAGMA data_version").fetchone()
                # A new reader's message too: from then on, what it grows by is handed over.
                if now != version or not seen.keys() >= _readers_of(wakeups):
                    version = now
                    seen = self._wake_grown(wakeups, seen)
            except sqlite3.Error as exc:
                log.warning("polling for answer events failed (%s)", type(exc).__name__)
            stop.wait(SQLITE_POLL_SECONDS)

    def _wake_grown(self, wakeups: Wakeups, seen: dict[str, int]) -> dict[str, int]:
        keys = wakeups.watched()
        runners = [key.removeprefix(STOP_PREFIX) for key in keys if key.startswith(STOP_PREFIX)]
        watched = [key for key in keys if not key.startswith(STOP_PREFIX)]
        if runners:  # a runner here whose answer another process ended
            running = still_running(self._engine, runners)
            for message_id in runners:
                if message_id not in running:
                    wakeups.wake(STOP_PREFIX + message_id)
        if not watched:
            return {}
        query = (
            sa.select(chat_events.c.message_id, sa.func.max(chat_events.c.seq))
            .where(chat_events.c.message_id.in_(watched))
            .group_by(chat_events.c.message_id)
        )
        with self._engine.connect() as conn:
            latest = {str(m): int(s) for m, s in conn.execute(query)}
            grown = {m: seen[m] for m, s in latest.items() if m in seen and seen[m] < s}
            # What grew since the last look, read once for every reader of this process.
            news: dict[str, list[StoredEvent]] = {m: [] for m in grown}
            if grown:
                rows = conn.execute(
                    sa.select(
                        chat_events.c.message_id,
                        chat_events.c.seq,
                        chat_events.c.event,
                        chat_events.c.data,
                    )
                    .where(
                        sa.or_(
                            *(
                                sa.and_(chat_events.c.message_id == m, chat_events.c.seq > after)
                                for m, after in grown.items()
                            )
                        )
                    )
                    .order_by(chat_events.c.message_id, chat_events.c.seq)
                )
                for row in rows:
                    news[str(row.message_id)].append(
                        StoredEvent(int(row.seq), str(row.event), valid_text(str(row.data)))
                    )
        for message_id, seq in latest.items():
            if message_id in news:
                wakeups.wake(message_id, news[message_id])
            elif seen.get(message_id) != seq:
                wakeups.wake(message_id)  # first seen here: its readers read for themselves
        # A watched message with no events yet has none up to 0: what comes is handed over.
        return {m: latest.get(m, 0) for m in watched}


def _readers_of(wakeups: Wakeups) -> set[str]:
    return {key for key in wakeups.watched() if not key.startswith(STOP_PREFIX)}


def listener_for(engine: Engine, redis_url: str | None) -> Listener:
    """Redis when configured, else what the database itself offers."""
    if redis_url:
        return RedisListener(redis_url)
    if engine.dialect.name == "postgresql":
        return PostgresListener(engine)
    return SqlitePoller(engine)
