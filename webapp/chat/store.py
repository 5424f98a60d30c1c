"""Chat persistence: sessions, message rows, event streams and checkpoints, per user.

Every read names the user, so another user's session or message is simply not found.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.values import JsonValue
from ..store.writes import write
from ..text import valid_json, valid_text
from ..turn.emit import SinkClosed
from .notes import PG_NOTE_BYTES, encode_note
from .notes import StoredEvent as StoredEvent  # where readers and writers import it
from .tables import (
    ai_chat_logs,
    chat_checkpoints,
    chat_events,
    chat_open_streams,
    chat_sessions,
    chat_workers,
)
from .titles import distinct_title

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


def _session(row: sa.Row[*tuple[Any, ...]]) -> SessionRow:
    return SessionRow(
        id=str(row.id),
        title=str(row.title),
        created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at),
    )


def _message(row: sa.Row[*tuple[Any, ...]]) -> MessageRow:
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
        created_at=_utc(row.created_at),
        completed_at=_aware(row.completed_at),
        stop_reason=row.stop_reason,
        version_of=row.version_of,
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


_SESSION_COLUMNS = (
    chat_sessions.c.id,
    chat_sessions.c.title,
    chat_sessions.c.created_at,
    chat_sessions.c.updated_at,
)


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
        sa.select(*_SESSION_COLUMNS)
        .where(chat_sessions.c.user_id == user_id)
        .order_by(chat_sessions.c.updated_at.desc(), chat_sessions.c.id)
        .limit(limit)
    )
    if keep_empty != "*":
        asked = sa.exists().where(ai_chat_logs.c.session_id == chat_sessions.c.id)
        query = query.where(sa.or_(asked, chat_sessions.c.id == (keep_empty or "")))
    with engine.connect() as conn:
        return [_session(r) for r in conn.execute(query)]


def get_session(engine: Engine, user_id: int, session_id: str) -> SessionRow | None:
    """Return one of the user's sessions, or None (also for another user's)."""
    query = sa.select(*_SESSION_COLUMNS).where(
        chat_sessions.c.id == session_id, chat_sessions.c.user_id == user_id
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return _session(row) if row else None


_MESSAGE_COLUMNS = (
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


def session_messages(engine: Engine, user_id: int, session_id: str) -> list[MessageRow]:
    """Return a session's conversation in order: the versions shown, nothing edited away."""
    query = (
        sa.select(*_MESSAGE_COLUMNS)
        .where(ai_chat_logs.c.session_id == session_id, ai_chat_logs.c.user_id == user_id, VISIBLE)
        .order_by(ai_chat_logs.c.created_at, ai_chat_logs.c.role.desc())
    )
    with engine.connect() as conn:
        return [_message(r) for r in conn.execute(query)]


def get_message(
    engine: Engine, user_id: int, session_id: str, message_id: str
) -> MessageRow | None:
    """Return one of the user's messages in a session, or None."""
    query = sa.select(*_MESSAGE_COLUMNS).where(
        ai_chat_logs.c.id == message_id,
        ai_chat_logs.c.session_id == session_id,
        ai_chat_logs.c.user_id == user_id,
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return _message(row) if row else None


def find_message(engine: Engine, user_id: int, message_id: str) -> MessageRow | None:
    """Return one of the user's messages by its id alone, or None."""
    query = sa.select(*_MESSAGE_COLUMNS).where(
        ai_chat_logs.c.id == message_id, ai_chat_logs.c.user_id == user_id
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return _message(row) if row else None


# The most history one turn sends the model, in characters of text (about 12,000 tokens):
# the latest exchanges that fit; older ones are left out. The read stops there too: at most
# _HISTORY_ROWS of the latest messages, newest first through the keyset index (revision
# 0009), fetched _HISTORY_CHUNK at a time until the budget is spent, so a long chat costs a
# new turn no more than a short one.
HISTORY_BUDGET_CHARS = 48_000
_HISTORY_ROWS = 200
_HISTORY_CHUNK = 20


def history_query(user_id: int, session_id: str, before: datetime | None = None) -> sa.Select[Any]:
    """Return the query `text_history` reads: a chat's latest shown messages (before
    `before`, when given), newest first, the few columns history needs (never the
    citations), at most _HISTORY_ROWS of them."""
    c = ai_chat_logs.c
    query = (
        sa.select(c.role, c.content, c.status, c.stop_reason)
        .where(c.session_id == session_id, c.user_id == user_id, VISIBLE)
        .order_by(c.created_at.desc(), c.role, c.id.desc())  # the index's order, backwards
        .limit(_HISTORY_ROWS)
    )
    return query if before is None else query.where(c.created_at < before)


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
    exchanges: list[list[dict[str, str]]] = []
    answer: str | None = None
    spent = 0
    with (
        engine.connect() as conn,
        conn.execution_options(yield_per=_HISTORY_CHUNK).execute(
            history_query(user_id, session_id, before)
        ) as rows,  # closed when the budget is spent: the rest is never fetched
    ):
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


class SessionBusy(Exception):
    """The session is still answering its previous question."""


class TooManyTurns(Exception):
    """The user already has as many answers being written as one user may."""


class LeaseLost(SinkClosed):
    """Another runner owns this answer now (this one was thought dead): stop writing."""


def start_message(
    engine: Engine,
    user_id: int,
    session_id: str,
    question: str,
    lease: timedelta,
    owner: str,
    checkpoint: dict[str, Any] | None = None,
    max_running: int | None = None,
) -> tuple[str, str]:
    """Store the question, a running answer row owned by `owner` and its first checkpoint.

    One transaction; returns both message ids. SessionBusy while the session is answering;
    TooManyTurns when the user would have more than `max_running` answers being written.
    """
    user_id_msg, answer_id = new_id(), new_id()
    at = now()

    def work(conn: sa.Connection) -> None:
        if conn.dialect.name == "postgresql":
            # One user's questions queue here, so concurrent ones cannot both pass the count.
            conn.execute(sa.text("SELECT 1 FROM users WHERE id = :id FOR UPDATE"), {"id": user_id})
        _insert_exchange(
            conn, user_id, session_id, question, user_id_msg, answer_id, at, at + lease, owner
        )
        if max_running is not None and _running_count(conn, user_id) > max_running:
            raise TooManyTurns
        if checkpoint is not None:
            _replace_checkpoint(conn, answer_id, checkpoint, 0)

    try:
        write(engine, work)
    except sa.exc.IntegrityError:
        if running_message(engine, user_id, session_id) is not None:
            raise SessionBusy from None
        raise
    return user_id_msg, answer_id


def _insert_exchange(
    conn: sa.Connection,
    user_id: int,
    session_id: str,
    question: str,
    user_id_msg: str,
    answer_id: str,
    at: datetime,
    lease_until: datetime,
    owner: str,
) -> None:
    conn.execute(
        ai_chat_logs.insert(),
        [
            {
                "id": user_id_msg,
                "session_id": session_id,
                "user_id": user_id,
                "role": "user",
                "content": question,
                "status": "complete",
                "created_at": at,
                "completed_at": at,
                "lease_until": None,
                "lease_owner": None,
            },
            {
                "id": answer_id,
                "session_id": session_id,
                "user_id": user_id,
                "role": "assistant",
                "content": "",
                "status": "running",
                "created_at": at + timedelta(microseconds=1),
                "completed_at": None,
                "lease_until": lease_until,
                "lease_owner": owner,
            },
        ],
    )
    title = short_title(question)
    update = chat_sessions.update().where(chat_sessions.c.id == session_id)
    conn.execute(update.values(updated_at=at))
    if title:
        untitled = update.where(chat_sessions.c.title == "New chat")
        if conn.execute(untitled.values(updated_at=at)).rowcount:  # this is its first question
            conn.execute(update.values(title=distinct_title(conn, user_id, session_id, title)))


def _running_count(conn: sa.Connection, user_id: int) -> int:
    query = (
        sa.select(sa.func.count())
        .select_from(ai_chat_logs)
        .where(ai_chat_logs.c.user_id == user_id, ai_chat_logs.c.status == "running")
    )
    return int(conn.execute(query).scalar() or 0)


def running_message(engine: Engine, user_id: int, session_id: str) -> RunningAnswer | None:
    """Return the session's answer in progress (with its lease), if any."""
    query = sa.select(ai_chat_logs.c.id, ai_chat_logs.c.lease_until).where(
        ai_chat_logs.c.session_id == session_id,
        ai_chat_logs.c.user_id == user_id,
        ai_chat_logs.c.status == "running",
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return RunningAnswer(str(row.id), _aware(row.lease_until)) if row else None


def message_state(
    engine: Engine, user_id: int, session_id: str, message_id: str
) -> tuple[str, datetime | None] | None:
    """Return one of the user's messages' status and lease, in one cheap query."""
    query = sa.select(ai_chat_logs.c.status, ai_chat_logs.c.lease_until).where(
        ai_chat_logs.c.id == message_id,
        ai_chat_logs.c.session_id == session_id,
        ai_chat_logs.c.user_id == user_id,
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return (str(row.status), _aware(row.lease_until)) if row else None


def stale_messages(engine: Engine) -> list[tuple[int, str]]:
    """Return (user id, message id) of every running answer whose lease has run out."""
    query = sa.select(ai_chat_logs.c.user_id, ai_chat_logs.c.id).where(
        ai_chat_logs.c.status == "running", ai_chat_logs.c.lease_until < now()
    )
    with engine.connect() as conn:
        return [(int(r.user_id), str(r.id)) for r in conn.execute(query)]


def _utc(value: datetime) -> datetime:
    # SQLite hands timestamps back without their zone; they were written in UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _aware(value: datetime | None) -> datetime | None:
    return _utc(value) if value is not None else None


def _hold(conn: sa.Connection, message_id: str, owner: str, lease: timedelta) -> None:
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


def _insert_events(conn: sa.Connection, message_id: str, events: Sequence[StoredEvent]) -> None:
    if events:
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
# On the same channel, a key "stop:<message id>" tells the answer's runner, wherever it runs,
# that its answer was ended from outside (cancelled, past its deadline): the wake-up channel
# carries it to every worker and host, as it carries news of events to readers.
STOP_PREFIX = "stop:"


def stop_key(message_id: str) -> str:
    """Return the wake-up key the runner of `message_id` waits on."""
    return STOP_PREFIX + message_id


def runs_as(engine: Engine, message_id: str, owner: str) -> bool:
    """Tell whether `owner` still runs the answer (it was not ended or taken over)."""
    query = sa.select(ai_chat_logs.c.id).where(
        ai_chat_logs.c.id == message_id,
        ai_chat_logs.c.status == "running",
        ai_chat_logs.c.lease_owner == owner,
    )
    with engine.connect() as conn:
        return conn.execute(query).first() is not None


def still_running(engine: Engine, message_ids: Sequence[str]) -> set[str]:
    """Return which of the answers are still being written."""
    if not message_ids:
        return set()
    query = sa.select(ai_chat_logs.c.id).where(
        ai_chat_logs.c.id.in_(message_ids), ai_chat_logs.c.status == "running"
    )
    with engine.connect() as conn:
        return {str(row.id) for row in conn.execute(query)}


def append_events(
    engine: Engine, message_id: str, owner: str, lease: timedelta, events: Sequence[StoredEvent]
) -> None:
    """Store a batch of stream events in one transaction, renewing the owner's lease.

    LeaseLost if `owner` no longer runs the message.
    """

    def work(conn: sa.Connection) -> None:
        _hold(conn, message_id, owner, lease)
        _insert_events(conn, message_id, events)

    write(engine, work)


def append_event(
    engine: Engine, message_id: str, owner: str, lease: timedelta, event: StoredEvent
) -> None:
    """Store one stream event (see `append_events`)."""
    append_events(engine, message_id, owner, lease, [event])


def events_after(engine: Engine, message_id: str, after: int) -> list[StoredEvent]:
    """Return the stream's events after sequence number `after`, in order."""
    with engine.connect() as conn:
        return _events_after(conn, message_id, after)


def _events_after(conn: sa.Connection, message_id: str, after: int) -> list[StoredEvent]:
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
        _hold(conn, message_id, owner, lease)
        _insert_events(conn, message_id, events)
        _replace_checkpoint(conn, message_id, data, event_seq)

    write(engine, work)


def _replace_checkpoint(
    conn: sa.Connection, message_id: str, data: dict[str, Any], event_seq: int
) -> None:
    conn.execute(chat_checkpoints.delete().where(chat_checkpoints.c.message_id == message_id))
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


def claim_stale(engine: Engine, message_id: str, lease: timedelta) -> str | None:
    """Take over a running answer whose lease ran out; return the new owner if this caller won."""
    owner = new_id()

    def work(conn: sa.Connection) -> bool:
        at = now()
        result = conn.execute(
            ai_chat_logs.update()
            .where(
                ai_chat_logs.c.id == message_id,
                ai_chat_logs.c.status == "running",
                ai_chat_logs.c.lease_until < at,
            )
            .values(lease_until=at + lease, lease_owner=owner)
        )
        return bool(result.rowcount)

    return owner if write(engine, work) else None


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


def finish_message(
    engine: Engine,
    message_id: str,
    owner: str,
    *,
    status: str,
    content: str,
    citations: Sequence[Any],
    inline_citations: Sequence[Any],
    error: str | None,
    done: StoredEvent,
    events: Sequence[StoredEvent] = (),
    stop_reason: str | None = None,
) -> None:
    """Write the answer row whole, with its last events and `done`, in one transaction."""

    def work(conn: sa.Connection) -> None:
        result = conn.execute(
            ai_chat_logs.update()
            .where(
                ai_chat_logs.c.id == message_id,
                ai_chat_logs.c.lease_owner == owner,
                ai_chat_logs.c.status == "running",
            )
            .values(
                status=status,
                content=content,
                citations=list(citations),
                inline_citations=list(inline_citations),
                error=error,
                stop_reason=stop_reason,
                completed_at=now(),
                lease_until=None,
                lease_owner=None,
            )
        )
        if not result.rowcount:
            raise LeaseLost
        _insert_events(conn, message_id, [*events, done])

    write(engine, work)


def end_running(
    engine: Engine, message_id: str, *, status: str, error: str | None, stop_reason: str | None
) -> bool:
    """End a running answer from outside its runner (cancelled, past its deadline).

    The answer keeps what it had written: its text and the citations announced so far. The
    stream ends as a finished turn's does (an `error` packet when there is an error, `stop`
    with `stop_reason`, then `done`). The runner, wherever it is, is refused its next write.
    Returns False when the answer was no longer running.
    """

    def work(conn: sa.Connection) -> bool:
        # The row first: its lock orders this after any batch the runner is committing.
        ended = conn.execute(
            ai_chat_logs.update()
            .where(ai_chat_logs.c.id == message_id, ai_chat_logs.c.status == "running")
            .values(
                status=status, error=error, completed_at=now(), lease_until=None, lease_owner=None
            )
        )
        if not ended.rowcount:
            return False
        written = _events_after(conn, message_id, 0)
        content, citations = written_so_far(written)
        conn.execute(
            ai_chat_logs.update()
            .where(ai_chat_logs.c.id == message_id)
            .values(content=content, citations=citations, inline_citations=[])
        )
        seq = written[-1].seq if written else 0
        place = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
        closing = ([{"type": "error", "error": error}] if error else []) + [
            {"type": "stop", "stop_reason": stop_reason}
        ]
        events = [
            StoredEvent(seq + i + 1, "packet", json.dumps({"placement": place, "obj": obj}))
            for i, obj in enumerate(closing)
        ]
        events.append(StoredEvent(seq + len(events) + 1, "done", json.dumps({"status": status})))
        _insert_events(conn, message_id, events)
        announce(conn, stop_key(message_id))  # its runner, wherever it is, stops now
        return True

    return write(engine, work)


def written_so_far(events: Sequence[StoredEvent]) -> tuple[str, list[Any]]:
    """Return the answer text and its citations as far as an unfinished stream got.

    Citations come from the packets: each `citation_info` in order, with the title and
    target of its document's latest copy (live `citation` events wait for the turn's end).
    What a `reset` withdrew is dropped.
    """
    kept: list[tuple[int, dict[str, Any]]] = []
    for event in events:
        data = _object(event.data)
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


def _object(data: str) -> dict[str, Any]:
    try:
        loaded = json.loads(data)
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def overdue_messages(engine: Engine, deadline: timedelta) -> list[str]:
    """Return the ids of running answers that started longer than `deadline` ago."""
    query = sa.select(ai_chat_logs.c.id).where(
        ai_chat_logs.c.status == "running", ai_chat_logs.c.created_at < now() - deadline
    )
    with engine.connect() as conn:
        return [str(r.id) for r in conn.execute(query)]


def release_lease(engine: Engine, message_id: str, owner: str) -> None:
    """Give up `owner`'s lease at once, so the next sweep of any worker takes the turn over."""
    write(
        engine,
        lambda conn: conn.execute(
            ai_chat_logs.update()
            .where(
                ai_chat_logs.c.id == message_id,
                ai_chat_logs.c.lease_owner == owner,
                ai_chat_logs.c.status == "running",
            )
            .values(lease_until=now() - timedelta(seconds=1))
        ),
    )


def renew_lease(engine: Engine, message_id: str, owner: str, lease: timedelta) -> None:
    """Extend `owner`'s lease on a running answer; LeaseLost if it is not the owner."""
    write(engine, lambda conn: _hold(conn, message_id, owner, lease))


# A worker not seen for this long is forgotten with its streams' rows. Its streams stopped
# counting long before: when its lease (`open_stream`'s `lease`) lapsed.
WORKER_GONE = timedelta(seconds=60)


def open_stream(
    engine: Engine, user_id: int, worker: str, limit: int, lease: timedelta = WORKER_GONE
) -> str | None:
    """Count a new open stream of the user's, or None when they already have `limit`.

    Streams count while their worker's lease holds: a worker renews it (`worker_seen`) well
    within `lease`, so the streams of a worker that died stop counting once it lapses.
    """
    stream_id = new_id()

    def work(conn: sa.Connection) -> str | None:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT 1 FROM users WHERE id = :id FOR UPDATE"), {"id": user_id})
        alive = sa.select(chat_workers.c.id).where(chat_workers.c.seen_at > now() - lease)
        held = (
            sa.select(sa.func.count())
            .select_from(chat_open_streams)
            .where(
                chat_open_streams.c.user_id == user_id,
                sa.or_(chat_open_streams.c.worker == worker, chat_open_streams.c.worker.in_(alive)),
            )
        )
        if int(conn.execute(held).scalar() or 0) >= limit:
            return None
        conn.execute(
            chat_open_streams.insert().values(
                id=stream_id, user_id=user_id, worker=worker, opened_at=now()
            )
        )
        return stream_id

    return write(engine, work)


def close_stream(engine: Engine, stream_id: str) -> None:
    """Stop counting a stream that ended."""
    write(
        engine,
        lambda conn: conn.execute(
            chat_open_streams.delete().where(chat_open_streams.c.id == stream_id)
        ),
    )


def worker_seen(engine: Engine, worker: str) -> None:
    """Say this worker is alive, and forget the streams of workers that are not."""

    def work(conn: sa.Connection) -> None:
        at = now()
        if (
            conn.execute(
                chat_workers.update().where(chat_workers.c.id == worker).values(seen_at=at)
            ).rowcount
            == 0
        ):
            conn.execute(chat_workers.insert().values(id=worker, seen_at=at))
        gone = sa.select(chat_workers.c.id).where(chat_workers.c.seen_at < at - WORKER_GONE)
        conn.execute(chat_open_streams.delete().where(chat_open_streams.c.worker.in_(gone)))
        conn.execute(chat_workers.delete().where(chat_workers.c.seen_at < at - WORKER_GONE))

    write(engine, work)


def worker_gone(engine: Engine, worker: str) -> None:
    """Forget a worker that stops, with its streams."""

    def work(conn: sa.Connection) -> None:
        conn.execute(chat_open_streams.delete().where(chat_open_streams.c.worker == worker))
        conn.execute(chat_workers.delete().where(chat_workers.c.id == worker))

    write(engine, work)
