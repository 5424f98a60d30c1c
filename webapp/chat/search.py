"""Search a user's chats by title and by the words of their questions and answers.

A search is a page of chats, newest first, in the list's own keyset order (chat/pages.py):
the sessions are read through `ix_chat_sessions_user_page` and each is kept when its title or
one of its messages contains the words asked for, case aside, so the read stops at a page's
worth of matches. Every read names the user, in the chat list and in the messages, so another
user's chat is never found. The words are matched literally: `%`, `_` and the escape
character are escaped before they reach LIKE. A query is at most MAX_QUERY_CHARS long.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from .pages import session_cursor, session_query
from .records import SessionRow, session_row
from .tables import ai_chat_logs, chat_sessions
from .titles import LIKE_ESCAPE, like_literal

MAX_QUERY_CHARS = 100
SEARCH_PAGE = 20


@dataclass(frozen=True, slots=True)
class Hit:
    """A chat that matched: the chat, and the first message that matched (None: the title)."""

    session: SessionRow
    text: str | None


@dataclass(frozen=True, slots=True)
class Hits:
    """One page of matches, newest first, and the older page's cursor (None: the last)."""

    rows: list[Hit]
    before: str | None


def clean_query(raw: object) -> str:
    """Return the words searched for: spaces made single, at most MAX_QUERY_CHARS."""
    text = " ".join(raw.split()) if isinstance(raw, str) else ""
    return text[:MAX_QUERY_CHARS].strip()


def search_query(user_id: int, words: str, limit: int, before: str | None) -> sa.Select[Any]:
    """Return the query of one page of the user's chats containing `words` (one row more).

    A bad `before` raises `pages.BadCursor`.
    """
    pattern = f"%{like_literal(words)}%"
    in_text = ai_chat_logs.c.content.ilike(pattern, escape=LIKE_ESCAPE)
    mine = sa.and_(
        ai_chat_logs.c.session_id == chat_sessions.c.id, ai_chat_logs.c.user_id == user_id
    )
    first_text = (
        sa.select(ai_chat_logs.c.content)
        .where(mine, in_text)
        .order_by(ai_chat_logs.c.created_at, ai_chat_logs.c.role.desc())
        .limit(1)
        .scalar_subquery()
    )
    in_title = chat_sessions.c.title.ilike(pattern, escape=LIKE_ESCAPE)
    return (
        session_query(user_id, limit, before)
        .add_columns(sa.case((in_title, None), else_=first_text).label("matched"))
        # A correlated subquery with a LIMIT, not EXISTS: PostgreSQL would hash an EXISTS
        # by scanning every user's messages; this one reads each chat's own, by its index.
        .where(sa.or_(in_title, first_text.is_not(None)))
    )


def search_sessions(
    engine: Engine, user_id: int, query: str, before: str | None = None, limit: int = SEARCH_PAGE
) -> Hits:
    """Return a page of the user's chats whose title or messages contain `query`.

    An empty query finds nothing. A bad `before` raises `pages.BadCursor`.
    """
    words = clean_query(query)
    if not words:
        return Hits([], None)
    with engine.connect() as conn:
        rows = list(conn.execute(search_query(user_id, words, limit, before)))
    hits = [
        Hit(session_row(row), None if row.matched is None else str(row.matched)) for row in rows
    ]
    more = len(hits) > limit
    hits = hits[:limit]
    return Hits(hits, session_cursor(hits[-1].session) if more else None)
