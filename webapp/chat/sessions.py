"""Chats as a person manages them: rename, delete, retry, and ask once per idempotency key.

Every function names the user, so another user's chat is simply not found. Deleting a chat
ends its running answer first (through the service, so the runner stops), then removes its
rows in one transaction. A question asked with a key is remembered for `KEY_LIFETIME`: the
same key again answers with the same message and starts nothing.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.writes import write
from . import conversations, leases, records
from .leases import SessionBusy
from .records import TITLE_CHARS, SessionRow
from .service import ChatService
from .tables import (
    ai_chat_logs,
    chat_checkpoints,
    chat_creations,
    chat_events,
    chat_idempotency_keys,
    chat_sessions,
)

KEY_CHARS = 200
KEY_LIFETIME = timedelta(hours=24)
# Bidirectional overrides and isolates reorder what is shown around them: a title could
# then read as something else.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class KeyConflict(Exception):
    """The idempotency key was used for another chat or another question."""


# The per-user creation rate counts the chats made in this window.
CREATION_WINDOW = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class ChatCaps:
    """How many chats one user may keep (`total`) and make in a minute (`per_minute`)."""

    total: int
    per_minute: int


class TooManyChats(Exception):
    """The user may not make another chat now: `str()` says why, in plain words."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


_PG_LOCK_USER = "SELECT 1 FROM users WHERE id = %(user_id)s FOR UPDATE"
# A new chat and its creation stored, the user's creations older than the window dropped,
# and what the caps count read, in one round trip. The reads see the tables as they were
# before this statement's own changes: the chat counted is added, the dropped were older.
_PG_CREATE_CHAT = (
    "WITH made AS (INSERT INTO chat_sessions (id, user_id, title, created_at, updated_at)"
    " VALUES (%(id)s, %(user_id)s, %(title)s, %(at)s, %(at)s)),"
    " counted AS (INSERT INTO chat_creations (session_id, user_id, created_at)"
    " VALUES (%(id)s, %(user_id)s, %(at)s)),"
    " dropped AS (DELETE FROM chat_creations"
    " WHERE user_id = %(user_id)s AND created_at < %(since)s)"
    " SELECT (SELECT count(*) FROM chat_sessions WHERE user_id = %(user_id)s) + 1,"
    " ARRAY(SELECT created_at FROM chat_creations"
    " WHERE user_id = %(user_id)s AND created_at >= %(since)s ORDER BY created_at)"
)


def check_caps(caps: ChatCaps, at: datetime, kept: int, recent: list[datetime]) -> None:
    """TooManyChats when the user's chats (`kept`, this one counted) or the creations in
    the last window (`recent`, in order, this one among them) pass `caps`."""
    if kept > caps.total:
        raise TooManyChats(
            f"You have {caps.total} chats, as many as one person may keep; "
            "delete one to start another.",
            math.ceil(CREATION_WINDOW.total_seconds()),
        )
    if len(recent) > caps.per_minute:
        # The chat that must leave the window before one more fits in it.
        frees = records.utc(recent[len(recent) - caps.per_minute - 1]) + CREATION_WINDOW
        raise TooManyChats(
            "You have started a lot of chats in the last minute; wait a moment and try again.",
            max(1, math.ceil((frees - at).total_seconds())),
        )


def create_chat(engine: Engine, user_id: int, title: str, caps: ChatCaps) -> SessionRow:
    """Make an empty chat for the user, unless it would pass one of `caps`: TooManyChats.

    One transaction, counted after the chat's own insert: on SQLite the insert takes the
    write lock, on PostgreSQL the user's row is locked first, so racing requests are counted
    one after another and never both slip under a cap.
    """
    session_id = records.new_id()
    title = title[:TITLE_CHARS] or "New chat"

    def work(conn: sa.Connection) -> datetime:
        if conn.dialect.name == "postgresql":
            return work_pg(conn)
        at = records.now()
        conn.execute(
            chat_sessions.insert().values(
                id=session_id, user_id=user_id, title=title, created_at=at, updated_at=at
            )
        )
        conn.execute(
            chat_creations.insert().values(session_id=session_id, user_id=user_id, created_at=at)
        )
        since = at - CREATION_WINDOW
        mine = chat_creations.c.user_id == user_id
        conn.execute(chat_creations.delete().where(mine, chat_creations.c.created_at < since))
        kept = conn.execute(
            sa.select(sa.func.count())
            .select_from(chat_sessions)
            .where(chat_sessions.c.user_id == user_id)
        ).scalar_one()
        recent = (
            conn.execute(
                sa.select(chat_creations.c.created_at)
                .where(mine, chat_creations.c.created_at >= since)
                .order_by(chat_creations.c.created_at)
            )
            .scalars()
            .all()
        )
        check_caps(caps, at, kept, list(recent))
        return at

    def work_pg(conn: sa.Connection) -> datetime:
        # The user's row locked first, then the rest in one statement read after the lock.
        conn.exec_driver_sql(_PG_LOCK_USER, {"user_id": user_id})
        at = records.now()
        since = at - CREATION_WINDOW
        row = conn.exec_driver_sql(
            _PG_CREATE_CHAT,
            {"id": session_id, "user_id": user_id, "title": title, "at": at, "since": since},
        ).one()
        check_caps(caps, at, int(row[0]), sorted([*row[1], at]))
        return at

    at = write(engine, work)
    return SessionRow(id=session_id, title=title, created_at=at, updated_at=at)


def clean_title(value: object) -> str:
    """Return the title trimmed; ValueError, in plain words, for anything else."""
    if not isinstance(value, str):
        raise ValueError("The title must be text.")
    title = value.strip()
    if not 1 <= len(title) <= TITLE_CHARS:
        raise ValueError(f"Write a title of 1 to {TITLE_CHARS} characters.")
    if any(_unprintable(ch) for ch in title):
        raise ValueError("The title has characters that cannot be shown.")
    if not any(_visible(ch) for ch in title):  # only zero-width, soft hyphens, fillers
        raise ValueError(f"Write a title of 1 to {TITLE_CHARS} characters.")
    return title


# Letters that draw nothing: the Hangul fillers and the blank Braille pattern.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _visible(ch: str) -> bool:
    # Cf: format characters (zero-width space and joiners, soft hyphen, byte order mark);
    # Z*: spaces and separators.
    return not (unicodedata.category(ch) in ("Cf", "Zs", "Zl", "Zp") or ch in _BLANK_LETTERS)


def _unprintable(ch: str) -> bool:
    # Cc: control characters (line breaks, tabs, NUL); Cs: a lone half of a surrogate pair;
    # Zl, Zp: line and paragraph separators.
    return unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") or ch in _BIDI


def clean_key(value: str) -> str:
    """Return an idempotency key as sent; ValueError, in plain words, for a bad one."""
    if not 1 <= len(value) <= KEY_CHARS:
        raise ValueError(f"The Idempotency-Key must be 1 to {KEY_CHARS} characters.")
    if any(not ch.isprintable() for ch in value):
        raise ValueError("The Idempotency-Key must be printable text.")
    return value


def rename_session(engine: Engine, user_id: int, session_id: str, title: str) -> SessionRow | None:
    """Give one of the user's chats a new title (already cleaned); None if it is not theirs."""

    def work(conn: sa.Connection) -> bool:
        result = conn.execute(
            chat_sessions.update()
            .where(chat_sessions.c.id == session_id, chat_sessions.c.user_id == user_id)
            .values(title=title)
        )
        return bool(result.rowcount)

    if not write(engine, work):
        return None
    return conversations.get_session(engine, user_id, session_id)


def delete_session(engine: Engine, user_id: int, session_id: str) -> bool:
    """Delete one of the user's chats with its messages, events, checkpoints and keys.

    Only rows: end a running answer first (see `remove_session`). False if not theirs.
    """

    def work(conn: sa.Connection) -> bool:
        owned = conn.execute(
            sa.select(chat_sessions.c.id).where(
                chat_sessions.c.id == session_id, chat_sessions.c.user_id == user_id
            )
        ).first()
        if owned is None:
            return False
        messages = (
            sa.select(ai_chat_logs.c.id)
            .where(ai_chat_logs.c.session_id == session_id)
            .scalar_subquery()
        )
        # Children first: the deletes do not depend on the foreign keys' cascades.
        conn.execute(
            chat_idempotency_keys.delete().where(chat_idempotency_keys.c.session_id == session_id)
        )
        conn.execute(chat_events.delete().where(chat_events.c.message_id.in_(messages)))
        conn.execute(chat_checkpoints.delete().where(chat_checkpoints.c.message_id.in_(messages)))
        conn.execute(ai_chat_logs.delete().where(ai_chat_logs.c.session_id == session_id))
        conn.execute(chat_sessions.delete().where(chat_sessions.c.id == session_id))
        return True

    return write(engine, work)


def remove_session(service: ChatService, user_id: int, session_id: str) -> bool:
    """Stop the chat's running answer (its runner stops), then delete the chat."""
    running = leases.running_message(service.engine, user_id, session_id)
    if running is not None:
        service.cancel(user_id, session_id, running.id)
    deleted = delete_session(service.engine, user_id, session_id)
    service.known.forget_session(session_id)
    return deleted


def question_before(engine: Engine, user_id: int, session_id: str, answer_id: str) -> str | None:
    """Return the question an answer answers: the user's message just before it."""
    messages = conversations.session_messages(engine, user_id, session_id)
    question = None
    for message in messages:
        if message.id == answer_id:
            return question if message.role == "assistant" else None
        question = message.content if message.role == "user" else None
    return None


def find_key(engine: Engine, user_id: int, key: str) -> tuple[str, str] | None:
    """Return (session id, message id) asked with the user's key in the last 24 hours."""
    query = sa.select(chat_idempotency_keys.c.session_id, chat_idempotency_keys.c.message_id).where(
        chat_idempotency_keys.c.user_id == user_id,
        chat_idempotency_keys.c.key == key,
        chat_idempotency_keys.c.created_at >= records.now() - KEY_LIFETIME,
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return (str(row.session_id), str(row.message_id)) if row else None


def record_key(
    conn: sa.Connection, user_id: int, key: str, session_id: str, message_id: str
) -> None:
    """Record in `conn`'s transaction the message asked with a key (an IntegrityError when
    the user's key names a message already), forgetting the user's keys past their lifetime
    so that one may be used again."""
    conn.execute(
        chat_idempotency_keys.delete().where(
            chat_idempotency_keys.c.user_id == user_id,
            chat_idempotency_keys.c.created_at < records.now() - KEY_LIFETIME,
        )
    )
    conn.execute(
        chat_idempotency_keys.insert().values(
            user_id=user_id,
            key=key,
            session_id=session_id,
            message_id=message_id,
            created_at=records.now(),
        )
    )


def remember_key(
    engine: Engine, user_id: int, key: str, session_id: str, message_id: str
) -> tuple[str, str]:
    """Record the message asked with a key; return the (session, message) the key names.

    That is this one, unless another request recorded the key first (the primary key makes
    the insert race-safe): then the winner's.
    """
    try:
        write(engine, lambda conn: record_key(conn, user_id, key, session_id, message_id))
    except sa.exc.IntegrityError:
        winner = find_key(engine, user_id, key)
        if winner is None:
            raise
        return winner
    return session_id, message_id


@dataclass(frozen=True, slots=True)
class Asked:
    message_id: str
    repeated: bool  # the key had been used: nothing new was started


def ask_once(
    service: ChatService, user_id: int, session_id: str, question: str, key: str | None
) -> Asked:
    """Ask, unless the key was used for this question in the last 24 hours.

    SessionBusy while the chat answers another question; KeyConflict when the key was used
    for another chat or question.
    """
    if key is None:
        return Asked(service.ask(user_id, session_id, question), False)
    engine = service.engine
    found = find_key(engine, user_id, key)
    if found is not None:
        return _repeated(engine, user_id, session_id, question, found)
    try:
        # The key is stored in the transaction that stores the question, so a twin request
        # with the same key either finds it above or is refused by the store below.
        message_id = service.ask(
            user_id,
            session_id,
            question,
            also=lambda conn, answer_id: record_key(conn, user_id, key, session_id, answer_id),
        )
    except (SessionBusy, sa.exc.IntegrityError):
        # Refused: the chat answers another question, or a twin stored this key first (with
        # its question: the chat is busy with it) and names its message.
        winner = find_key(engine, user_id, key)
        if winner is None:
            raise
        return _repeated(engine, user_id, session_id, question, winner)
    return Asked(message_id, False)


def _repeated(
    engine: Engine, user_id: int, session_id: str, question: str, found: tuple[str, str]
) -> Asked:
    found_session, message_id = found
    if found_session != session_id:
        raise KeyConflict
    asked = question_before(engine, user_id, session_id, message_id)
    if asked is not None and asked != question:
        raise KeyConflict
    return Asked(message_id, True)
