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
from .records import MESSAGE_COLUMNS, MessageRow, message_row
from .tables import ai_chat_logs


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One answer's snapshot as stored: its format's version and its text."""

    version: int
    data: str


def finished_answer(engine: Engine, message_id: str) -> tuple[int, MessageRow] | None:
    """Return a finished answer's owner and row (None while it runs, or if there is none)."""
    query = sa.select(ai_chat_logs.c.user_id, *MESSAGE_COLUMNS).where(
        ai_chat_logs.c.id == message_id,
        ai_chat_logs.c.role == "assistant",
        ai_chat_logs.c.status != "running",
    )
    with autocommit(engine) as conn:
        row = conn.execute(query).first()
    return (int(row.user_id), message_row(row)) if row else None


def save_snapshot(engine: Engine, message_id: str, version: int, data: str) -> bool:
    """Store a finished answer's snapshot, once: False if it runs again or already has one."""
    update = (
        ai_chat_logs.update()
        .where(
            ai_chat_logs.c.id == message_id,
            ai_chat_logs.c.status != "running",
            ai_chat_logs.c.snapshot.is_(None),
        )
        .values(snapshot=data, snapshot_version=version)
    )
    return bool(write_one(engine, update))


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
