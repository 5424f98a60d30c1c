"""An answer's event stream and checkpoints: events appended in order and announced, read
after a sequence number, and the checkpoint a turn resumes from."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.engine import autocommit
from ..store.writes import write
from ..text import valid_text
from ..turn.emit import SinkClosed
from .notes import PG_NOTE_BYTES, encode_note
from .notes import StoredEvent as StoredEvent  # where readers and writers import it
from .records import now
from .tables import (
    ai_chat_logs,
    chat_checkpoints,
    chat_events,
)


class LeaseLost(SinkClosed):
    """Another runner owns this answer now (this one was thought dead): stop writing."""


def hold(conn: sa.Connection, message_id: str, owner: str, lease: timedelta) -> None:
    """Renew `owner`'s lease inside the caller's transaction, or raise LeaseLost."""
    result = conn.execute(
        ai_chat_logs.update()
        .where(
            ai_chat_logs.c.id == message_id,
            ai_chat_logs.c.lease_owner == owner,
            ai_chat_logs.c.status == "running",
        )
        .values(lease_until=now() + lease)
    )
    if not result.rowcount:
        raise LeaseLost


# On PostgreSQL a batch of events and its note are one statement of constant text: the
# events as one JSON array of [seq, event, data] (json.dumps's C encoder; not one VALUES
# row each, a text that grows with the batch, which psycopg parses afresh every time, nor
# text arrays, whose elements psycopg escapes one by one in Python), and the notify in the
# same round trip.
_PG_INSERT_EVENTS = (
    "WITH stored AS (INSERT INTO chat_events (message_id, seq, event, data)"
    " SELECT %(message_id)s, (r ->> 0)::integer, r ->> 1, r ->> 2"
    " FROM json_array_elements(%(rows)s::json) AS r)"
    " SELECT pg_notify(%(channel)s, %(note)s)"
)


def insert_events(conn: sa.Connection, message_id: str, events: Sequence[StoredEvent]) -> None:
    if events and conn.dialect.name == "postgresql":
        rows = json.dumps([[e.seq, e.event, e.data] for e in events], ensure_ascii=False)
        conn.exec_driver_sql(
            _PG_INSERT_EVENTS,
            {
                "message_id": message_id,
                "rows": rows,
                "channel": EVENTS_CHANNEL,
                "note": encode_note(message_id, events, PG_NOTE_BYTES),
            },
        )
    elif events:
        conn.execute(
            chat_events.insert(),
            [
                {"message_id": message_id, "seq": e.seq, "event": e.event, "data": e.data}
                for e in events
            ],
        )
        announce(conn, message_id, events)


def announce(
    conn: sa.Connection, message_id: str, events: Sequence[StoredEvent] | None = None
) -> None:
    """Tell PostgreSQL listeners, when this transaction commits, that the message has news.

    The note carries the events themselves when they fit (`notes.encode_note`), so readers
    elsewhere need no query.
    """
    if conn.dialect.name == "postgresql":
        note = encode_note(message_id, events, PG_NOTE_BYTES)
        conn.execute(sa.select(sa.func.pg_notify(EVENTS_CHANNEL, note)))


EVENTS_CHANNEL = "webapp_chat_events"

# A running turn hands its events to readers live and stores them later (`chat/sink.py`);
# it stores before its unstored events reach MAX_UNSTORED. Events another writer (an end
# from outside, a takeover) numbers after the last stored one skip SEQ_SKIP ids, past any
# the runner handed out live, so that no reader takes them for copies of what it has.
SEQ_SKIP = 1_000_000
MAX_UNSTORED = 100_000


def append_events(
    engine: Engine, message_id: str, owner: str, lease: timedelta, events: Sequence[StoredEvent]
) -> None:
    """Store a batch of stream events in one transaction, renewing the owner's lease.

    LeaseLost if `owner` no longer runs the message.
    """

    def work(conn: sa.Connection) -> None:
        hold(conn, message_id, owner, lease)
        insert_events(conn, message_id, events)

    write(engine, work)


def append_event(
    engine: Engine, message_id: str, owner: str, lease: timedelta, event: StoredEvent
) -> None:
    """Store one stream event (see `append_events`)."""
    append_events(engine, message_id, owner, lease, [event])


def events_after(engine: Engine, message_id: str, after: int) -> list[StoredEvent]:
    """Return the stream's events after sequence number `after`, in order."""
    with autocommit(engine) as conn:
        return events_after_on(conn, message_id, after)


def events_after_on(conn: sa.Connection, message_id: str, after: int) -> list[StoredEvent]:
    query = (
        sa.select(chat_events.c.seq, chat_events.c.event, chat_events.c.data)
        .where(chat_events.c.message_id == message_id, chat_events.c.seq > after)
        .order_by(chat_events.c.seq)
    )
    # Read back as valid text (`webapp.text`), whatever an older row holds.
    return [StoredEvent(r.seq, r.event, valid_text(r.data)) for r in conn.execute(query)]


def last_seq(engine: Engine, message_id: str) -> int:
    """Return the sequence number of the stream's last event (0 when empty)."""
    query = sa.select(sa.func.max(chat_events.c.seq)).where(chat_events.c.message_id == message_id)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar() or 0)


def save_checkpoint(
    engine: Engine,
    message_id: str,
    owner: str,
    lease: timedelta,
    data: dict[str, Any],
    event_seq: int,
    events: Sequence[StoredEvent] = (),
) -> None:
    """Store `events`, then replace the message's checkpoint, in one transaction.

    LeaseLost if `owner` no longer runs the message.
    """

    def work(conn: sa.Connection) -> None:
        hold(conn, message_id, owner, lease)
        insert_events(conn, message_id, events)
        replace_checkpoint(conn, message_id, data, event_seq)

    write(engine, work)


# The checkpoint replaced in one statement on PostgreSQL (not a delete, then an insert).
_PG_REPLACE_CHECKPOINT = (
    "INSERT INTO chat_checkpoints (message_id, data, event_seq, updated_at)"
    " VALUES (%(message_id)s, %(data)s::json, %(event_seq)s, %(updated_at)s)"
    " ON CONFLICT (message_id) DO UPDATE SET data = excluded.data,"
    " event_seq = excluded.event_seq, updated_at = excluded.updated_at"
)


def replace_checkpoint(
    conn: sa.Connection, message_id: str, data: dict[str, Any], event_seq: int
) -> None:
    if conn.dialect.name == "postgresql":
        serialize = getattr(conn.dialect, "_json_serializer", None) or json.dumps
        conn.exec_driver_sql(
            _PG_REPLACE_CHECKPOINT,
            {
                "message_id": message_id,
                "data": serialize(data),
                "event_seq": event_seq,
                "updated_at": now(),
            },
        )
        return
    conn.execute(chat_checkpoints.delete().where(chat_checkpoints.c.message_id == message_id))
    insert_checkpoint(conn, message_id, data, event_seq)


def insert_checkpoint(
    conn: sa.Connection, message_id: str, data: dict[str, Any], event_seq: int
) -> None:
    """Store the first checkpoint of a message that has none."""
    conn.execute(
        chat_checkpoints.insert().values(
            message_id=message_id, data=data, event_seq=event_seq, updated_at=now()
        )
    )


def load_checkpoint(engine: Engine, message_id: str) -> tuple[Any, int] | None:
    """Return the message's checkpoint and the event it was taken after, or None."""
    query = sa.select(chat_checkpoints.c.data, chat_checkpoints.c.event_seq).where(
        chat_checkpoints.c.message_id == message_id
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return (row.data, int(row.event_seq)) if row else None


def truncate_events(engine: Engine, message_id: str, after: int) -> None:
    """Drop the events a dead runner wrote after its last checkpoint."""
    write(
        engine,
        lambda conn: conn.execute(
            chat_events.delete().where(
                chat_events.c.message_id == message_id, chat_events.c.seq > after
            )
        ),
    )


def written_so_far(events: Sequence[StoredEvent]) -> tuple[str, list[Any]]:
    """Return the answer text and its citations as far as an unfinished stream got.

    Citations come from the packets: each `citation_info` in order, with the title and
    target of its document's latest copy (live `citation` events wait for the turn's end).
    What a `reset` withdrew is dropped.
    """
    kept: list[tuple[int, dict[str, Any]]] = []
    for event in events:
        data = json_object(event.data)
        if event.event == "reset" and isinstance(data.get("after"), int):
            kept = [k for k in kept if k[0] <= data["after"]]
        elif event.event == "packet" and isinstance(data.get("obj"), dict):
            kept.append((event.seq, data["obj"]))
    text: list[str] = []
    documents: dict[str, dict[str, Any]] = {}
    cited: list[tuple[int, str]] = []
    for _, obj in kept:
        kind = obj.get("type")
        if kind == "message_delta":
            text.append(str(obj.get("content", "")))
        elif kind == "citation_info" and isinstance(obj.get("document_id"), str):
            cited.append((int(obj.get("citation_number") or 0), obj["document_id"]))
        for doc in [*(obj.get("documents") or []), *(obj.get("final_documents") or [])]:
            if isinstance(doc, dict) and isinstance(doc.get("document_id"), str):
                documents[doc["document_id"]] = doc
    citations = [
        {
            "number": number,
            "source": source,
            "title": documents.get(source, {}).get("semantic_identifier"),
            "target": documents.get(source, {}).get("target"),
        }
        for number, source in cited
    ]
    return "".join(text), citations


def json_object(data: str) -> dict[str, Any]:
    try:
        loaded = json.loads(data)
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}
