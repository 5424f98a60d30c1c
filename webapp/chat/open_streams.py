"""Open answer streams and the workers that hold them: counted per user, and forgotten
with a worker once its heartbeat stops."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.writes import write, write_one, write_scalar
from .notes import StoredEvent as StoredEvent  # where readers and writers import it
from .records import new_id, now
from .tables import (
    chat_open_streams,
    chat_workers,
)

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
    return open_streams(engine, user_id, worker, limit, 1, lease)[0]


# PostgreSQL: the user's row lock, the count and the insert, in one statement.
_GRANT = sa.text(
    "SELECT chat_open_streams_grant(:user_id, :worker, :limit, :alive_since, :at, :ids)"
).bindparams(
    sa.bindparam("alive_since", type_=sa.DateTime(timezone=True)),
    sa.bindparam("at", type_=sa.DateTime(timezone=True)),
    sa.bindparam("ids", type_=sa.ARRAY(sa.String(32))),
)
# The user's streams that count: on this worker, or on a worker whose lease still holds.
# Built once, their values bound as they run (building one costs more than running it).
_HELD = (
    sa.select(sa.func.count())
    .select_from(chat_open_streams)
    .where(
        chat_open_streams.c.user_id == sa.bindparam("user_id"),
        sa.or_(
            chat_open_streams.c.worker == sa.bindparam("worker"),
            chat_open_streams.c.worker.in_(
                sa.select(chat_workers.c.id).where(
                    chat_workers.c.seen_at > sa.bindparam("alive_since")
                )
            ),
        ),
    )
)
_STREAM_COLUMNS = ("id", "user_id", "worker", "opened_at")
# One stream: counted and stored in one statement, after the lock.
_OPEN_ONE = chat_open_streams.insert().from_select(
    list(_STREAM_COLUMNS),
    sa.select(
        *(sa.bindparam(f"new_{k}", type_=chat_open_streams.c[k].type) for k in _STREAM_COLUMNS)
    ).where(_HELD.scalar_subquery() < sa.bindparam("limit")),
)
_CLOSE = sa.text("DELETE FROM chat_open_streams WHERE id = :id")


def open_streams(
    engine: Engine, user_id: int, worker: str, limit: int, wanted: int, lease: timedelta
) -> list[str | None]:
    """Count `wanted` new open streams of the user's at once, in one transaction: an id for
    each while they stay under `limit`, None for the rest (see `open_stream`)."""
    ids = [new_id() for _ in range(wanted)]
    if engine.dialect.name == "postgresql":  # one round trip (revision 0013)
        at = now()
        values = {"user_id": user_id, "worker": worker, "limit": limit, "at": at, "ids": ids}
        granted = write_scalar(engine, _GRANT, {**values, "alive_since": at - lease})
        room = int(granted or 0)
        return [*ids[:room], *[None] * (wanted - room)]

    def work(conn: sa.Connection) -> list[str | None]:
        at = now()
        held = {"user_id": user_id, "worker": worker, "alive_since": at - lease}
        if wanted > 1:
            room = max(0, limit - int(conn.execute(_HELD, held).scalar() or 0))
            granted: list[str | None] = [*ids[:room], *[None] * (wanted - room)]
            rows = [{"id": i, "user_id": user_id, "worker": worker, "opened_at": at} for i in ids]
            if room:
                conn.execute(chat_open_streams.insert(), rows[:room])
            return granted
        new = {"new_id": ids[0], "new_user_id": user_id, "new_worker": worker, "new_opened_at": at}
        inserted = conn.execute(_OPEN_ONE, {**held, **new, "limit": limit})
        return [ids[0] if inserted.rowcount else None]

    return write(engine, work)


def close_stream(engine: Engine, stream_id: str) -> None:
    """Stop counting a stream that ended."""
    write_one(engine, _CLOSE.bindparams(id=stream_id))


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
