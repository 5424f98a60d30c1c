"""The chat store's rows as the app reads them: sessions, messages, events; ids and
times.

Every read names the user, so another user's session or message is simply not found.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from ..store.values import JsonValue
from ..text import valid_json, valid_text
from .notes import StoredEvent as StoredEvent  # where readers and writers import it
from .tables import (
    ai_chat_logs,
    chat_sessions,
)

TITLE_CHARS = 80


def now() -> datetime:
    """Return the current time, timezone-aware."""
    return datetime.now(UTC)


def new_id() -> str:
    """Return a fresh unguessable id for a session or message."""
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One of a user's chats, as the API and the sidebar show it."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime

    def as_json(self) -> dict[str, str]:
        """Return the API's JSON for the chat, times in ISO 8601."""
        return {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class MessageRow:
    """One message of a chat: a question (`role` "user") or an answer ("assistant").

    `citations` and `inline_citations` are the answer's JSON as its turn wrote it (None
    for a question).
    """

    id: str
    session_id: str
    role: str
    content: str
    citations: JsonValue
    inline_citations: JsonValue
    status: str
    error: str | None
    created_at: datetime
    completed_at: datetime | None
    stop_reason: str | None = None
    # The first version of this answer, or the question an edited question replaced.
    version_of: str | None = None

    def as_json(self) -> dict[str, JsonValue]:
        """Return the API's JSON for the message (its chat is the one it is listed in)."""
        return {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "citations": self.citations,
            "inline_citations": self.inline_citations,
            "status": self.status,
            "error": self.error,
            "created_at": self.created_at.isoformat(),
            "completed_at": self.completed_at.isoformat() if self.completed_at else None,
            "stop_reason": self.stop_reason,
            "version_of": self.version_of,
        }


@dataclass(frozen=True, slots=True)
class RunningAnswer:
    """A chat's answer in progress, with the lease its runner holds."""

    id: str
    lease_until: datetime | None


def session_row(row: sa.Row[*tuple[Any, ...]]) -> SessionRow:
    return SessionRow(
        id=str(row.id),
        title=str(row.title),
        created_at=utc(row.created_at),
        updated_at=utc(row.updated_at),
    )


def message_row(row: sa.Row[*tuple[Any, ...]]) -> MessageRow:
    # Rows written before text was cleaned as it came in may hold what no page can draw.
    return MessageRow(
        id=str(row.id),
        session_id=str(row.session_id),
        role=str(row.role),
        content=valid_text(str(row.content)),
        citations=valid_json(row.citations),
        inline_citations=valid_json(row.inline_citations),
        status=str(row.status),
        error=None if row.error is None else valid_text(str(row.error)),
        created_at=utc(row.created_at),
        completed_at=aware(row.completed_at),
        stop_reason=row.stop_reason,
        version_of=row.version_of,
    )


SESSION_COLUMNS = (
    chat_sessions.c.id,
    chat_sessions.c.title,
    chat_sessions.c.created_at,
    chat_sessions.c.updated_at,
)


MESSAGE_COLUMNS = (
    ai_chat_logs.c.id,
    ai_chat_logs.c.session_id,
    ai_chat_logs.c.role,
    ai_chat_logs.c.content,
    ai_chat_logs.c.citations,
    ai_chat_logs.c.inline_citations,
    ai_chat_logs.c.status,
    ai_chat_logs.c.error,
    ai_chat_logs.c.created_at,
    ai_chat_logs.c.completed_at,
    ai_chat_logs.c.stop_reason,
    ai_chat_logs.c.version_of,
)


# The conversation: every row but the versions not shown and what an edit left out
# (`webapp/chat/versions.py`). Pages, the chat page and the model's history read only these.
VISIBLE = ai_chat_logs.c.hidden.is_(None)


def utc(value: datetime) -> datetime:
    # SQLite hands timestamps back without their zone; they were written in UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def aware(value: datetime | None) -> datetime | None:
    return utc(value) if value is not None else None
