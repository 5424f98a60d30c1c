"""Long chats made fast: one real exchange copied many times, straight into the tables."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from webapp.chat.tables import ai_chat_logs, chat_events, chat_sessions

AT = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
_BATCH = 2_000


def question_text(n: int) -> str:
    """Return the question of copy `n` (0 is the oldest)."""
    return f"Question number {n}: what do I owe on my cards?"


def copy_exchange(
    engine: Engine, session_id: str, answer_id: str, count: int, start: datetime = AT
) -> list[str]:
    """Store `count` copies of the finished answer `answer_id` (row, events, snapshot), each
    after a question of its own (`question_text(n)`), a second apart from `start`, in
    `session_id`; return the copies' answer ids, oldest first."""
    with engine.connect() as conn:
        answer = dict(
            conn.execute(sa.select(ai_chat_logs).where(ai_chat_logs.c.id == answer_id))
            .one()
            ._mapping
        )
        events = [
            dict(r._mapping)
            for r in conn.execute(
                sa.select(chat_events).where(chat_events.c.message_id == answer_id)
            )
        ]
    rows: list[dict[str, Any]] = []
    copied: list[dict[str, Any]] = []
    ids: list[str] = []
    for n in range(count):
        at = start + timedelta(seconds=n)
        question = {
            **answer,
            "id": uuid.uuid4().hex,
            "session_id": session_id,
            "role": "user",
            "content": question_text(n),
            "citations": None,
            "inline_citations": None,
            "status": "complete",
            "error": None,
            "stop_reason": None,
            "snapshot": None,
            "snapshot_version": None,
            "created_at": at,
            "completed_at": at,
        }
        reply_id = uuid.uuid4().hex
        kept = answer["snapshot"]
        reply = {
            **answer,
            "id": reply_id,
            "session_id": session_id,
            # The snapshot names its answer in its elements' ids: each copy names its own.
            "snapshot": kept.replace(answer_id, reply_id) if kept else kept,
            "created_at": at + timedelta(microseconds=1),
            "completed_at": at + timedelta(milliseconds=500),
        }
        rows += [question, reply]
        ids.append(reply_id)
        copied += [{**e, "message_id": reply["id"]} for e in events]
    with engine.begin() as conn:
        for table, values in ((ai_chat_logs, rows), (chat_events, copied)):
            for i in range(0, len(values), _BATCH):
                conn.execute(table.insert(), values[i : i + _BATCH])
    return ids


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """Collect the SQL statements `engine` runs inside the block."""
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)


def store_chats(
    engine: Engine,
    user_id: int,
    chats: list[tuple[str, str, str]],
    at: datetime,
    step: timedelta = timedelta(seconds=1),
) -> list[str]:
    """Store chats of one finished exchange each (title, question, answer), the first at `at`
    and each next one `step` older; return their ids, newest first."""
    ids = [uuid.uuid4().hex for _ in chats]
    times = [at - step * n for n in range(len(chats))]
    sessions = [
        {"id": i, "user_id": user_id, "title": title, "created_at": t, "updated_at": t}
        for i, (title, _, _), t in zip(ids, chats, times, strict=True)
    ]
    messages = [
        {
            "id": uuid.uuid4().hex,
            "session_id": i,
            "user_id": user_id,
            "role": role,
            "content": content,
            "status": "complete",
            "created_at": t,
            "completed_at": t,
        }
        for i, (_, question, answer), t in zip(ids, chats, times, strict=True)
        for role, content in (("user", question), ("assistant", answer))
    ]
    with engine.begin() as conn:
        conn.execute(chat_sessions.insert(), sessions)
        conn.execute(ai_chat_logs.insert(), messages)
    return ids
