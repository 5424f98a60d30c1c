"""Versions of an answer, and questions edited in place (revision 0012).

An answer's versions share a slot: the first version's id, which every later version names in
`version_of`. One version of a slot is shown (`hidden` NULL); the others are hidden as
"version" and may be shown again. Only the latest answer of a chat is regenerated, so all of a
slot's versions come before the next question, and whichever is shown stands in its place.
Editing a question leaves it and everything after it out of the chat for good ("edited") and
asks the new text at the end, which is then its place. Every write goes through the store's
retrying `write()`, in one transaction each, with the per-user cap of running answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NoReturn

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.writes import write
from .event_log import insert_checkpoint
from .leases import SessionBusy, TooManyTurns, insert_exchange, running_count, running_message
from .records import MESSAGE_COLUMNS, VISIBLE, MessageRow, message_row, new_id, now
from .tables import ai_chat_logs, chat_sessions

SHOWN_AWAY = "version"  # `hidden`: another version of the answer is shown
EDITED_AWAY = "edited"  # `hidden`: an edit left it out of the chat for good


class NotLatest(Exception):
    """Only the chat's latest answer can be regenerated (an earlier one: edit its question)."""


class NotInChat(Exception):
    """The message is no longer in the conversation: an edit left it out."""


@dataclass(frozen=True, slots=True)
class Versions:
    """An answer's versions, oldest first, and which of them this one is."""

    ids: tuple[str, ...]
    current: str

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def number(self) -> int:
        """Return this version's place, counted from 1."""
        return self.ids.index(self.current) + 1

    @property
    def previous(self) -> str | None:
        return self.ids[self.number - 2] if self.number > 1 else None

    @property
    def next(self) -> str | None:
        return self.ids[self.number] if self.number < self.count else None


def slot(message: MessageRow) -> str:
    """Return the id of the first version of an answer (its own id when it is the first)."""
    return message.version_of or message.id


def versions_of(engine: Engine, user_id: int, answers: Sequence[MessageRow]) -> dict[str, Versions]:
    """Return each answer's versions, read in one query (an edit's leftovers are not counted)."""
    slots = {slot(m) for m in answers if m.role == "assistant"}
    if not slots:
        return {}
    column = ai_chat_logs.c
    query = (
        sa.select(column.id, column.version_of)
        .where(
            column.user_id == user_id,
            sa.or_(column.id.in_(slots), column.version_of.in_(slots)),
            sa.or_(column.hidden.is_(None), column.hidden == SHOWN_AWAY),
        )
        .order_by(column.created_at, column.id)
    )
    by_slot: dict[str, list[str]] = {key: [] for key in slots}
    with engine.connect() as conn:
        for row in conn.execute(query):
            by_slot[str(row.version_of or row.id)].append(str(row.id))
    return {
        m.id: Versions(tuple(by_slot[slot(m)]), m.id)
        for m in answers
        if m.role == "assistant" and m.id in by_slot[slot(m)]
    }


def _latest(conn: sa.Connection, user_id: int, session_id: str) -> str | None:
    column = ai_chat_logs.c
    query = (
        sa.select(column.id)
        .where(column.session_id == session_id, column.user_id == user_id, VISIBLE)
        .order_by(column.created_at.desc(), column.role.asc(), column.id.desc())
        .limit(1)
    )
    found = conn.execute(query).scalar()
    return None if found is None else str(found)


def latest_id(engine: Engine, user_id: int, session_id: str) -> str | None:
    """Return the id of the chat's last shown message, or None for an empty chat."""
    with engine.connect() as conn:
        return _latest(conn, user_id, session_id)


def _row(conn: sa.Connection, user_id: int, session_id: str, message_id: str) -> Any:
    query = sa.select(*MESSAGE_COLUMNS, ai_chat_logs.c.hidden).where(
        ai_chat_logs.c.id == message_id,
        ai_chat_logs.c.session_id == session_id,
        ai_chat_logs.c.user_id == user_id,
    )
    return conn.execute(query).first()


def question_for(engine: Engine, user_id: int, session_id: str, answer_id: str) -> MessageRow:
    """Return the question the chat's latest answer answers, to ask it again in its place.

    LookupError for no such answer; NotInChat when an edit left it out; NotLatest when it
    is not the chat's latest answer.
    """
    with engine.connect() as conn:
        answer = _row(conn, user_id, session_id, answer_id)
        if answer is None or answer.role != "assistant":
            raise LookupError(answer_id)
        if answer.hidden is not None:
            raise NotInChat if answer.hidden == EDITED_AWAY else NotLatest
        if _latest(conn, user_id, session_id) != answer_id:
            raise NotLatest
        column = ai_chat_logs.c
        query = (
            sa.select(*MESSAGE_COLUMNS)
            .where(
                column.session_id == session_id,
                column.user_id == user_id,
                column.role == "user",
                column.created_at < answer.created_at,
                VISIBLE,
            )
            .order_by(column.created_at.desc())
            .limit(1)
        )
        question = conn.execute(query).first()
    if question is None:
        raise LookupError(answer_id)
    return message_row(question)


def question_to_edit(engine: Engine, user_id: int, session_id: str, question_id: str) -> MessageRow:
    """Return a question of the chat that may be edited; LookupError or NotInChat if not."""
    with engine.connect() as conn:
        question = _row(conn, user_id, session_id, question_id)
    if question is None or question.role != "user":
        raise LookupError(question_id)
    if question.hidden is not None:
        raise NotInChat
    return message_row(question)


def _answer_row(
    session_id: str, user_id: int, answer_id: str, lease: timedelta, owner: str, version_of: str
) -> dict[str, Any]:
    at = now()
    return {
        "id": answer_id,
        "session_id": session_id,
        "user_id": user_id,
        "role": "assistant",
        "content": "",
        "status": "running",
        "created_at": at,
        "completed_at": None,
        "lease_until": at + lease,
        "lease_owner": owner,
        "version_of": version_of,
    }


def _busy_or(engine: Engine, user_id: int, session_id: str, exc: sa.exc.IntegrityError) -> NoReturn:
    # The one-running-answer-per-chat index refused the new answer.
    if running_message(engine, user_id, session_id) is not None:
        raise SessionBusy from None
    raise exc


def start_version(
    engine: Engine,
    user_id: int,
    session_id: str,
    answer_id: str,
    lease: timedelta,
    owner: str,
    checkpoint: dict[str, Any],
    max_running: int | None = None,
) -> str:
    """Store a new running version of the chat's latest answer, shown in the old one's place.

    One transaction; returns the new version's id. NotLatest when the answer is no longer
    the chat's latest shown one; SessionBusy while the chat answers; TooManyTurns past the cap.
    """
    version_id = new_id()

    def work(conn: sa.Connection) -> None:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT 1 FROM users WHERE id = :id FOR UPDATE"), {"id": user_id})
        answer = _row(conn, user_id, session_id, answer_id)
        if answer is None or _latest(conn, user_id, session_id) != answer_id:
            raise NotLatest
        column = ai_chat_logs.c
        conn.execute(ai_chat_logs.update().where(column.id == answer_id).values(hidden=SHOWN_AWAY))
        first = str(answer.version_of or answer.id)
        conn.execute(
            ai_chat_logs.insert(),
            [_answer_row(session_id, user_id, version_id, lease, owner, first)],
        )
        if max_running is not None and running_count(conn, user_id) > max_running:
            raise TooManyTurns
        insert_checkpoint(conn, version_id, checkpoint, 0)
        conn.execute(
            chat_sessions.update().where(chat_sessions.c.id == session_id).values(updated_at=now())
        )

    try:
        write(engine, work)
    except sa.exc.IntegrityError as exc:
        _busy_or(engine, user_id, session_id, exc)
    return version_id


@dataclass(frozen=True, slots=True)
class Edited:
    """What an edit wrote and what it left out of the chat."""

    question_id: str
    answer_id: str
    left_out: tuple[str, ...]  # the ids that were shown from the edited question on


def start_edit(
    engine: Engine,
    user_id: int,
    session_id: str,
    question_id: str,
    text: str,
    lease: timedelta,
    owner: str,
    checkpoint: dict[str, Any],
    max_running: int | None = None,
) -> Edited:
    """Leave a question and everything after it out of the chat; ask `text` in its place.

    One transaction. NotInChat when the question was already left out; SessionBusy while
    the chat answers; TooManyTurns past the cap.
    """
    new_question, answer_id = new_id(), new_id()
    left_out: list[str] = []

    def work(conn: sa.Connection) -> None:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT 1 FROM users WHERE id = :id FOR UPDATE"), {"id": user_id})
        question = _row(conn, user_id, session_id, question_id)
        if question is None or question.hidden is not None:
            raise NotInChat
        column = ai_chat_logs.c
        later = sa.and_(
            column.session_id == session_id,
            column.user_id == user_id,
            column.created_at >= question.created_at,
        )
        shown = sa.select(column.id).where(later, VISIBLE).order_by(column.created_at)
        left_out[:] = [str(r.id) for r in conn.execute(shown)]
        conn.execute(ai_chat_logs.update().where(later).values(hidden=EDITED_AWAY))
        at = now()
        insert_exchange(
            conn, user_id, session_id, text, new_question, answer_id, at, at + lease, owner
        )
        replaced = str(question.version_of or question.id)
        conn.execute(
            ai_chat_logs.update().where(column.id == new_question).values(version_of=replaced)
        )
        if max_running is not None and running_count(conn, user_id) > max_running:
            raise TooManyTurns
        insert_checkpoint(conn, answer_id, checkpoint, 0)

    try:
        write(engine, work)
    except sa.exc.IntegrityError as exc:
        _busy_or(engine, user_id, session_id, exc)
    return Edited(new_question, answer_id, tuple(left_out))


class VersionBusy(Exception):
    """That answer is being written: its versions can be shown once it has finished."""


def show_version(engine: Engine, user_id: int, session_id: str, message_id: str) -> MessageRow:
    """Show this version of an answer in its place; the one shown before is hidden.

    The choice is kept: the chat shows it on every reload, and later turns' history says it.
    LookupError for no such answer; NotInChat when an edit left it out; VersionBusy while a
    version of it is being written.
    """

    def work(conn: sa.Connection) -> MessageRow:
        row = _row(conn, user_id, session_id, message_id)
        if row is None or row.role != "assistant":
            raise LookupError(message_id)
        if row.hidden == EDITED_AWAY:
            raise NotInChat
        first = str(row.version_of or row.id)
        column = ai_chat_logs.c
        siblings = sa.and_(
            column.user_id == user_id,
            column.session_id == session_id,
            sa.or_(column.id == first, column.version_of == first),
            sa.or_(column.hidden.is_(None), column.hidden == SHOWN_AWAY),
        )
        running = sa.select(column.id).where(siblings, column.status == "running")
        if conn.execute(running).first() is not None:
            raise VersionBusy
        conn.execute(ai_chat_logs.update().where(siblings, VISIBLE).values(hidden=SHOWN_AWAY))
        conn.execute(ai_chat_logs.update().where(column.id == message_id).values(hidden=None))
        return message_row(row)

    return write(engine, work)


def asked_question(engine: Engine, user_id: int, session_id: str, answer_id: str) -> str | None:
    """Return the id of the question just asked with `answer_id` (stored with it, at once)."""
    column = ai_chat_logs.c
    answer = (
        sa.select(column.created_at)
        .where(column.id == answer_id, column.user_id == user_id)
        .scalar_subquery()
    )
    query = (
        sa.select(column.id)
        .where(
            column.session_id == session_id,
            column.user_id == user_id,
            column.role == "user",
            column.created_at < answer,
            VISIBLE,
        )
        .order_by(column.created_at.desc())
        .limit(1)
    )
    with engine.connect() as conn:
        found = conn.execute(query).scalar()
    return None if found is None else str(found)
