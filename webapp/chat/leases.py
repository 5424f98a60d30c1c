"""Answers being written: the question and its running answer stored at once, the lease
that says which runner writes it, and how it ends (done, failed, stopped, handed over)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.engine import autocommit
from ..store.writes import write
from .conversations import short_title
from .event_log import (
    SEQ_SKIP,
    LeaseLost,
    announce,
    events_after_on,
    hold,
    insert_checkpoint,
    insert_events,
    written_so_far,
)
from .notes import StoredEvent as StoredEvent  # where readers and writers import it
from .records import RunningAnswer, aware, new_id, now
from .tables import (
    ai_chat_logs,
    chat_sessions,
)
from .titles import distinct_title


class SessionBusy(Exception):
    """The session is still answering its previous question."""


class TooManyTurns(Exception):
    """The user already has as many answers being written as one user may."""


def start_message(
    engine: Engine,
    user_id: int,
    session_id: str,
    question: str,
    lease: timedelta,
    owner: str,
    checkpoint: dict[str, Any] | None = None,
    max_running: int | None = None,
    also: Callable[[sa.Connection, str], None] | None = None,
) -> tuple[str, str]:
    """Store the question, a running answer row owned by `owner` and its first checkpoint.

    One transaction, with `also(conn, answer_id)` when given (the request's idempotency
    key); returns both message ids. SessionBusy while the session is answering;
    TooManyTurns when the user would have more than `max_running` answers being written.
    """
    user_id_msg, answer_id = new_id(), new_id()
    at = now()

    def work(conn: sa.Connection) -> None:
        if conn.dialect.name == "postgresql":
            # One user's questions queue here, so concurrent ones cannot both pass the count.
            conn.execute(sa.text("SELECT 1 FROM users WHERE id = :id FOR UPDATE"), {"id": user_id})
        insert_exchange(
            conn, user_id, session_id, question, user_id_msg, answer_id, at, at + lease, owner
        )
        if max_running is not None and running_count(conn, user_id) > max_running:
            raise TooManyTurns
        if checkpoint is not None:  # a new answer's first: nothing to replace
            insert_checkpoint(conn, answer_id, checkpoint, 0)
        if also is not None:
            also(conn, answer_id)

    try:
        write(engine, work)
    except sa.exc.IntegrityError:
        if running_message(engine, user_id, session_id) is not None:
            raise SessionBusy from None
        raise
    return user_id_msg, answer_id


def insert_exchange(
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
    update = chat_sessions.update().where(chat_sessions.c.id == session_id)
    was = conn.execute(update.values(updated_at=at).returning(chat_sessions.c.title)).first()
    if was is not None and was.title == "New chat":  # its first question names it
        title = short_title(question)
        if title:
            conn.execute(update.values(title=distinct_title(conn, user_id, session_id, title)))


def running_count(conn: sa.Connection, user_id: int) -> int:
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
    with autocommit(engine) as conn:
        row = conn.execute(query).first()
    return RunningAnswer(str(row.id), aware(row.lease_until)) if row else None


def message_state(
    engine: Engine, user_id: int, session_id: str, message_id: str
) -> tuple[str, datetime | None] | None:
    """Return one of the user's messages' status and lease, in one cheap query."""
    query = sa.select(ai_chat_logs.c.status, ai_chat_logs.c.lease_until).where(
        ai_chat_logs.c.id == message_id,
        ai_chat_logs.c.session_id == session_id,
        ai_chat_logs.c.user_id == user_id,
    )
    with autocommit(engine) as conn:
        row = conn.execute(query).first()
    return (str(row.status), aware(row.lease_until)) if row else None


def lease_of(engine: Engine, message_id: str) -> datetime | None:
    """Return a running answer's lease (None when it is not running)."""
    query = sa.select(ai_chat_logs.c.lease_until).where(
        ai_chat_logs.c.id == message_id, ai_chat_logs.c.status == "running"
    )
    with autocommit(engine) as conn:
        return aware(conn.execute(query).scalar())


def stale_messages(engine: Engine) -> list[tuple[int, str]]:
    """Return (user id, message id) of every running answer whose lease has run out."""
    query = sa.select(ai_chat_logs.c.user_id, ai_chat_logs.c.id).where(
        ai_chat_logs.c.status == "running", ai_chat_logs.c.lease_until < now()
    )
    with engine.connect() as conn:
        return [(int(r.user_id), str(r.id)) for r in conn.execute(query)]


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
        insert_events(conn, message_id, [*events, done])

    write(engine, work)


def end_running(
    engine: Engine,
    message_id: str,
    *,
    status: str,
    error: str | None,
    stop_reason: str | None,
    live: bool = False,
    withdraw: bool = False,
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
        written = events_after_on(conn, message_id, 0)
        content, citations = written_so_far(written)
        conn.execute(
            ai_chat_logs.update()
            .where(ai_chat_logs.c.id == message_id)
            .values(content=content, citations=citations, inline_citations=[])
        )
        stored = written[-1].seq if written else 0
        # Past any id its runner handed out `live` (`event_log.SEQ_SKIP`); what it did not
        # store is withdrawn, when asked, as the stored answer has none of it.
        seq = stored + SEQ_SKIP - 1 if live else stored
        place = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
        closing = ([{"type": "error", "error": error}] if error else []) + [
            {"type": "stop", "stop_reason": stop_reason}
        ]
        events = [StoredEvent(seq + 1, "reset", json.dumps({"after": stored}))] if withdraw else []
        seq += len(events)
        events += [
            StoredEvent(seq + i + 1, "packet", json.dumps({"placement": place, "obj": obj}))
            for i, obj in enumerate(closing)
        ]
        # Right after the last of them: `seq` already counts the reset (a reader handed an id
        # skipped here would hold `done` past a gap).
        events.append(StoredEvent(seq + len(closing) + 1, "done", json.dumps({"status": status})))
        insert_events(conn, message_id, events)
        announce(conn, stop_key(message_id))  # its runner, wherever it is, stops now
        return True

    return write(engine, work)


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
    write(engine, lambda conn: hold(conn, message_id, owner, lease))
