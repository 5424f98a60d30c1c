"""Keyset pages of a user's chats and of one chat's messages (docs/specs.md#routes).

A page is read from just past its cursor, newest first, through an index in the same order
(revision 0009), so a deep page costs what the first one does: no OFFSET. The cursor names
the oldest row of the page before it; it is opaque to clients (base64url of the row's sort
key) and is checked in full before it reaches a query, so a bad one is a `BadCursor`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from .records import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    VISIBLE,
    MessageRow,
    SessionRow,
    message_row,
    session_row,
)
from .tables import ai_chat_logs, chat_sessions

MAX_PAGE = 200
SESSIONS_PAGE = 50
MESSAGES_PAGE = 100
CONVERSATION_PAGE = 20  # the chat page's messages at a time (`Show earlier` for more)
# A cursor is a few dozen characters; a longer one was not made here.
_CURSOR_CHARS = 200
_ID = re.compile(r"[0-9A-Za-z_-]{1,32}")
_ROLES = ("user", "assistant")

Kind = Literal["s", "m"]  # a page of sessions, a page of one session's messages
Row = TypeVar("Row", SessionRow, MessageRow)


class BadCursor(ValueError):
    """A `before` cursor this service did not make (or made for the other kind of list)."""


class BadLimit(ValueError):
    """A `limit` that is not a whole number from 1 to MAX_PAGE."""


@dataclass(frozen=True, slots=True)
class Page(Generic[Row]):
    """One page, oldest row last (sessions) or first (messages), and the older page's cursor."""

    rows: list[Row]
    before: str | None  # None: this is the oldest page


def parse_limit(raw: str | None, default: int) -> int:
    """Return the page size asked for: `default` when absent, else 1 to MAX_PAGE."""
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 3) or not 1 <= int(raw) <= MAX_PAGE:
        raise BadLimit(f"`limit` must be a whole number from 1 to {MAX_PAGE}.")
    return int(raw)


def _encode(kind: Kind, key: Sequence[str]) -> str:
    packed = json.dumps([kind, *key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(packed).decode().rstrip("=")


def _decode(kind: Kind, raw: str, size: int) -> list[str]:
    bad = BadCursor("`before` is not a cursor from this list.")
    if not (0 < len(raw) <= _CURSOR_CHARS and raw.isascii()):
        raise bad
    try:
        packed = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        value: Any = json.loads(packed)
    except (binascii.Error, ValueError):
        raise bad from None
    if (
        not isinstance(value, list)
        or len(value) != size + 1
        or value[0] != kind
        or not all(isinstance(part, str) for part in value[1:])
    ):
        raise bad
    return value[1:]


def _when(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise BadCursor("`before` is not a cursor from this list.") from None
    if value.tzinfo is None:
        raise BadCursor("`before` is not a cursor from this list.")
    return value.astimezone(UTC)


def _id(text: str) -> str:
    if not _ID.fullmatch(text):
        raise BadCursor("`before` is not a cursor from this list.")
    return text


def session_cursor(row: SessionRow) -> str:
    """Return the cursor of the page after `row` (older chats)."""
    return _encode("s", (row.updated_at.astimezone(UTC).isoformat(), row.id))


def message_cursor(row: MessageRow) -> str:
    """Return the cursor of the page before `row` (older messages)."""
    return _encode("m", (row.created_at.astimezone(UTC).isoformat(), row.role, row.id))


def session_query(
    user_id: int, limit: int, before: str | None, *, keep_empty: str | None = "*"
) -> sa.Select[Any]:
    """Return the query of one page of chats (one row more, to tell whether older ones follow).

    The order is (updated_at, id), both descending: `ix_chat_sessions_user_page` read backwards.
    `keep_empty` is as `list_sessions` has it: "*" lists every chat (the API), else only chats
    with a question and the one empty chat named (the open one, for the sidebar).
    """
    updated, id_ = chat_sessions.c.updated_at, chat_sessions.c.id
    query = sa.select(*SESSION_COLUMNS).where(chat_sessions.c.user_id == user_id)
    if before is not None:
        when_text, id_text = _decode("s", before, 2)
        when, after_id = _when(when_text), _id(id_text)
        query = query.where(sa.or_(updated < when, sa.and_(updated == when, id_ < after_id)))
    if keep_empty != "*":
        asked = sa.exists().where(
            ai_chat_logs.c.session_id == id_, ai_chat_logs.c.user_id == user_id
        )
        query = query.where(sa.or_(asked, id_ == (keep_empty or "")))
    return query.order_by(updated.desc(), id_.desc()).limit(limit + 1)


def _session_page(engine: Engine, query: sa.Select[Any], limit: int) -> Page[SessionRow]:
    with engine.connect() as conn:
        rows = [session_row(r) for r in conn.execute(query)]
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, session_cursor(rows[-1]) if more else None)


def session_page(engine: Engine, user_id: int, limit: int, before: str | None) -> Page[SessionRow]:
    """Return up to `limit` of the user's chats, most recently used first, older than `before`."""
    return _session_page(engine, session_query(user_id, limit, before), limit)


def sidebar_page(
    engine: Engine,
    user_id: int,
    open_id: str | None,
    before: str | None = None,
    limit: int = SESSIONS_PAGE,
) -> Page[SessionRow]:
    """Return a page of the chats the sidebar lists: those asked in, and the open one."""
    query = session_query(user_id, limit, before, keep_empty=open_id)
    return _session_page(engine, query, limit)


def latest_session(engine: Engine, user_id: int) -> SessionRow | None:
    """Return the user's most recently used chat, or None: one row read, however many."""
    rows = session_page(engine, user_id, 1, None).rows
    return rows[0] if rows else None


def message_query(user_id: int, session_id: str, limit: int, before: str | None) -> sa.Select[Any]:
    """Return the query of one page of a chat's conversation, newest first (one row more).

    The conversation's order is (created_at ascending, role descending: a question before an
    answer stored at the same instant, id): `ix_ai_chat_logs_session_page`, read backwards.
    """
    created, role, id_ = ai_chat_logs.c.created_at, ai_chat_logs.c.role, ai_chat_logs.c.id
    query = sa.select(*MESSAGE_COLUMNS).where(
        ai_chat_logs.c.session_id == session_id, ai_chat_logs.c.user_id == user_id, VISIBLE
    )
    if before is not None:
        when_text, role_text, id_text = _decode("m", before, 3)
        if role_text not in _ROLES:
            raise BadCursor("`before` is not a cursor from this list.")
        when, after_id = _when(when_text), _id(id_text)
        earlier_same_instant = sa.or_(role > role_text, sa.and_(role == role_text, id_ < after_id))
        query = query.where(sa.or_(created < when, sa.and_(created == when, earlier_same_instant)))
    return query.order_by(created.desc(), role.asc(), id_.desc()).limit(limit + 1)


def message_page(
    engine: Engine, user_id: int, session_id: str, limit: int, before: str | None
) -> Page[MessageRow]:
    """Return the latest `limit` messages of a chat older than `before`, oldest first."""
    query = message_query(user_id, session_id, limit, before)
    with engine.connect() as conn:
        rows = [message_row(r) for r in conn.execute(query)]
    more = len(rows) > limit
    rows = rows[:limit]
    rows.reverse()
    return Page(rows, message_cursor(rows[0]) if more else None)
