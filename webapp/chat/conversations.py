"""Chats and their messages as people see them: sessions, titles, the conversation as
shown, and the history a turn sends the model."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.engine import autocommit
from ..store.writes import write
from ..text import valid_text
from .notes import StoredEvent as StoredEvent  # where readers and writers import it
from .records import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TITLE_CHARS,
    VISIBLE,
    MessageRow,
    SessionRow,
    message_row,
    new_id,
    now,
    session_row,
)
from .tables import (
    ai_chat_logs,
    chat_sessions,
)


def create_session(engine: Engine, user_id: int, title: str = "New chat") -> SessionRow:
    """Create an empty chat session for the user."""
    created = SessionRow(
        id=new_id(), title=title[:TITLE_CHARS] or "New chat", created_at=now(), updated_at=now()
    )
    write(
        engine,
        lambda conn: conn.execute(
            chat_sessions.insert().values(
                id=created.id,
                user_id=user_id,
                title=created.title,
                created_at=created.created_at,
                updated_at=created.updated_at,
            )
        ),
    )
    return created


SHORT_TITLE_CHARS = 48


_LEAD_INS = re.compile(
    r"^(?:(?:hi|hello|hey|ok|okay|so|please|quick question)\b[\s,!.:-]*)+"
    r"|^(?:can|could|would) you (?:please )?(?:tell me|show me|explain|help me (?:with|understand))"
    r"\s+",
    re.IGNORECASE,
)


def short_title(question: str) -> str | None:
    """Return a chat's title from its first question: its first words, cut at a word.

    Greetings and "can you tell me" are dropped; the question mark goes; a title never ends
    mid-word ("What do I owe on my credit…", not "What do I owe on my cred").
    """
    lines = question.strip().splitlines()
    text = " ".join(lines[0].split()) if lines else ""
    while (shorter := _LEAD_INS.sub("", text).strip()) != text:
        text = shorter
    text = text.rstrip("?!.,;: ")
    if not text:
        return None
    if len(text) > SHORT_TITLE_CHARS:
        head = text[: SHORT_TITLE_CHARS + 1]
        cut = head.rsplit(" ", 1)[0] if " " in head else text[:SHORT_TITLE_CHARS]
        text = cut.rstrip(",;:-– ") + "…"
    return text[0].upper() + text[1:]


LIST_LIMIT = 200  # the most chats one read returns; pages go further (chat/pages.py)


def list_sessions(
    engine: Engine, user_id: int, *, keep_empty: str | None = "*", limit: int = LIST_LIMIT
) -> list[SessionRow]:
    """Return the user's latest `limit` sessions, most recently used first.

    `keep_empty` is the one empty chat still listed (the open one), or None for none; the
    default "*" lists every chat. Pages and the sidebar read a page at a time instead
    (`chat.pages.session_page`, `chat.pages.sidebar_page`).
    """
    query = (
        sa.select(*SESSION_COLUMNS)
        .where(chat_sessions.c.user_id == user_id)
        .order_by(chat_sessions.c.updated_at.desc(), chat_sessions.c.id)
        .limit(limit)
    )
    if keep_empty != "*":
        asked = sa.exists().where(ai_chat_logs.c.session_id == chat_sessions.c.id)
        query = query.where(sa.or_(asked, chat_sessions.c.id == (keep_empty or "")))
    with engine.connect() as conn:
        return [session_row(r) for r in conn.execute(query)]


# A turn's own reads are built once, their values bound as they run: building a statement
# (and its cache key) costs more CPU than SQLAlchemy's running it.
_SESSION = sa.select(*SESSION_COLUMNS).where(
    chat_sessions.c.id == sa.bindparam("session_id"),
    chat_sessions.c.user_id == sa.bindparam("user_id"),
)


def get_session(engine: Engine, user_id: int, session_id: str) -> SessionRow | None:
    """Return one of the user's sessions, or None (also for another user's)."""
    with autocommit(engine) as conn:
        row = conn.execute(_SESSION, {"session_id": session_id, "user_id": user_id}).first()
    return session_row(row) if row else None


def session_messages(engine: Engine, user_id: int, session_id: str) -> list[MessageRow]:
    """Return a session's conversation in order: the versions shown, nothing edited away."""
    query = (
        sa.select(*MESSAGE_COLUMNS)
        .where(ai_chat_logs.c.session_id == session_id, ai_chat_logs.c.user_id == user_id, VISIBLE)
        .order_by(ai_chat_logs.c.created_at, ai_chat_logs.c.role.desc())
    )
    with engine.connect() as conn:
        return [message_row(r) for r in conn.execute(query)]


_MESSAGE = sa.select(*MESSAGE_COLUMNS).where(
    ai_chat_logs.c.id == sa.bindparam("message_id"),
    ai_chat_logs.c.session_id == sa.bindparam("session_id"),
    ai_chat_logs.c.user_id == sa.bindparam("user_id"),
)


def get_message(
    engine: Engine, user_id: int, session_id: str, message_id: str
) -> MessageRow | None:
    """Return one of the user's messages in a session, or None."""
    values = {"message_id": message_id, "session_id": session_id, "user_id": user_id}
    with autocommit(engine) as conn:
        row = conn.execute(_MESSAGE, values).first()
    return message_row(row) if row else None


def find_message(engine: Engine, user_id: int, message_id: str) -> MessageRow | None:
    """Return one of the user's messages by its id alone, or None."""
    query = sa.select(*MESSAGE_COLUMNS).where(
        ai_chat_logs.c.id == message_id, ai_chat_logs.c.user_id == user_id
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return message_row(row) if row else None


# The most history one turn sends the model, in characters of text (about 12,000 tokens):
# the latest exchanges that fit; older ones are left out. The read stops there too: at most
# _HISTORY_ROWS of the latest messages, newest first through the keyset index (revision
# 0009), fetched _HISTORY_CHUNK at a time until the budget is spent, so a long chat costs a
# new turn no more than a short one.
HISTORY_BUDGET_CHARS = 48_000


_HISTORY_ROWS = 200


_HISTORY_CHUNK = 20


def _history(user_id: Any, session_id: Any) -> sa.Select[Any]:
    c = ai_chat_logs.c
    return (
        sa.select(c.role, c.content, c.status, c.stop_reason)
        .where(c.session_id == session_id, c.user_id == user_id, VISIBLE)
        .order_by(c.created_at.desc(), c.role, c.id.desc())  # the index's order, backwards
        .limit(_HISTORY_ROWS)
    )


def history_query(user_id: int, session_id: str, before: datetime | None = None) -> sa.Select[Any]:
    """Return the query `text_history` reads: a chat's latest shown messages (before
    `before`, when given), newest first, the few columns history needs (never the
    citations), at most _HISTORY_ROWS of them."""
    query = _history(user_id, session_id)
    return query if before is None else query.where(ai_chat_logs.c.created_at < before)


# A new question's first read (most chats hold less than a chunk): built once, as `_SESSION`.
_LATEST = _history(sa.bindparam("user_id"), sa.bindparam("session_id")).limit(_HISTORY_CHUNK)


def text_history(
    engine: Engine,
    user_id: int,
    session_id: str,
    budget: int = HISTORY_BUDGET_CHARS,
    *,
    before: datetime | None = None,
) -> list[dict[str, str]]:
    """Return the latest finished exchanges that fit `budget`, as text only, oldest first.

    Only the conversation as shown (`VISIBLE`): the version of each answer shown, nothing an
    edit left out; with `before`, only what came before that instant (a question asked again
    in its place). Text only, so a turn cites only what it wrote; a refused exchange is left
    out (the streaming-refusals guide), and so is a question whose answer failed or was stopped.
    """
    # Most chats hold less than a chunk: one plain read (one round trip) says all.
    with autocommit(engine) as conn:
        if before is None:
            latest = conn.execute(_LATEST, {"user_id": user_id, "session_id": session_id}).all()
        else:
            chunk = history_query(user_id, session_id, before).limit(_HISTORY_CHUNK)
            latest = conn.execute(chunk).all()
    if len(latest) < _HISTORY_CHUNK:
        return _exchanges(latest, budget)
    query = history_query(user_id, session_id, before)
    with (
        engine.connect() as conn,
        conn.execution_options(yield_per=_HISTORY_CHUNK).execute(query) as rows,
    ):  # closed when the budget is spent: the rest is never fetched
        return _exchanges(rows, budget)


def _exchanges(rows: Iterable[sa.Row[Any]], budget: int) -> list[dict[str, str]]:
    """Return the finished exchanges among `rows` (newest first) that fit `budget`, as
    `text_history` does, oldest first."""
    exchanges: list[list[dict[str, str]]] = []
    answer: str | None = None
    spent = 0
    for row in rows:  # newest first: an answer, then the question it answers
        if row.role != "user":
            kept = row.status == "complete" and row.stop_reason != "refusal"
            answer = valid_text(str(row.content)) if kept and row.content else None
            continue
        if answer is not None:
            question = valid_text(str(row.content))
            spent += len(question) + len(answer)
            if spent > budget:
                break
            exchanges.append(
                [
                    {"role": "user", "content": question},
                    {"role": "assistant", "content": answer},
                ]
            )
        answer = None
    return [m for pair in reversed(exchanges) for m in pair]
