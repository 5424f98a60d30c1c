"""Finished answers' snapshots in the store: written once as a turn ends, read a page at a time.

A snapshot is opaque text here (its format is the web layer's, `webapp/web/snapshots.py`), kept
beside its answer's row (revision 0011) with the version of its format, so that a page can
tell a snapshot it can read from one written by another version of the app.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.engine import autocommit
from ..store.writes import write_one
from ..text import valid_text
from .notes import StoredEvent
from .tables import ai_chat_logs, chat_events


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One answer's snapshot as stored: its format's version and its text."""

    version: int
    data: str


@dataclass(frozen=True, slots=True)
class Finished:
    """What a finished answer's snapshot is drawn from: its owner, how it ended, its events."""

    user_id: int
    message_id: str
    status: str
    error: str | None
    events: list[StoredEvent]


# Built once, their values bound as they run: building a statement costs more than running it.
_FINISHED = (
    sa.select(
        ai_chat_logs.c.user_id,
        ai_chat_logs.c.status,
        ai_chat_logs.c.error,
        chat_events.c.seq,
        chat_events.c.event,
        chat_events.c.data,
    )
    .select_from(ai_chat_logs.outerjoin(chat_events, chat_events.c.message_id == ai_chat_logs.c.id))
    .where(
        ai_chat_logs.c.id == sa.bindparam("message_id"),
        ai_chat_logs.c.role == "assistant",
        ai_chat_logs.c.status != "running",
    )
    .order_by(chat_events.c.seq)
)
# `write_one` runs a statement with its values in it: a text statement takes them for far
# less than a built one (`.values()` copies it, and its cache key is made again).
_SAVE = sa.text(
    "UPDATE ai_chat_logs SET snapshot = :data, snapshot_version = :version"
    " WHERE id = :message_id AND status <> 'running' AND snapshot IS NULL"
)


def finished_events(engine: Engine, message_id: str) -> Finished | None:
    """Return a finished answer with its events, in order, in one query (None while it runs,
    or if there is none): the answer's few columns beside each event, one row for none."""
    with autocommit(engine) as conn:
        rows = conn.execute(_FINISHED, {"message_id": message_id}).all()
    if not rows:
        return None
    first = rows[0]
    return Finished(
        int(first.user_id),
        message_id,
        str(first.status),
        None if first.error is None else valid_text(str(first.error)),
        # Read back as valid text (`webapp.text`), as `event_log.events_after` reads them.
        [StoredEvent(r.seq, r.event, valid_text(r.data)) for r in rows if r.seq is not None],
    )


def save_snapshot(engine: Engine, message_id: str, version: int, data: str) -> bool:
    """Store a finished answer's snapshot, once: False if it runs again or already has one."""
    saved = _SAVE.bindparams(message_id=message_id, data=data, version=version)
    return bool(write_one(engine, saved))


def load_snapshots(engine: Engine, user_id: int, message_ids: Sequence[str]) -> dict[str, Snapshot]:
    """Return the snapshots the user's finished answers among `message_ids` have, in one query."""
    if not message_ids:
        return {}
    query = sa.select(
        ai_chat_logs.c.id, ai_chat_logs.c.snapshot_version, ai_chat_logs.c.snapshot
    ).where(
        ai_chat_logs.c.id.in_(list(message_ids)),
        ai_chat_logs.c.user_id == user_id,
        ai_chat_logs.c.status != "running",
        ai_chat_logs.c.snapshot.is_not(None),
    )
    with autocommit(engine) as conn:
        return {
            str(row.id): Snapshot(int(row.snapshot_version or 0), str(row.snapshot))
            for row in conn.execute(query)
        }
