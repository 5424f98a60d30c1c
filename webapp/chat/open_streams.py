"""Open answer streams and the workers that hold them: counted per user, and forgotten
with a worker once its heartbeat stops."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..store.writes import write, write_one
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


def open_streams(
    engine: Engine, user_id: int, worker: str, limit: int, wanted: int, lease: timedelta
) -> list[str | None]:
    """Count `wanted` new open streams of the user's at once, in one transaction: an id for
    each while they stay under `limit`, None for the rest (see `open_stream`)."""
    ids = [new_id() for _ in range(wanted)]

    def work(conn: sa.Connection) -> list[str | None]:
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
        at = now()
        if wanted > 1:
            room = max(0, limit - int(conn.execute(held).scalar() or 0))
            granted: list[str | None] = [*ids[:room], *[None] * (wanted - room)]
            rows = [{"id": i, "user_id": user_id, "worker": worker, "opened_at": at} for i in ids]
            if room:
                conn.execute(chat_open_streams.insert(), rows[:room])
            return granted
        # One stream: counted and stored in one statement, after the lock.
        values = {"id": ids[0], "user_id": user_id, "worker": worker, "opened_at": at}
        c = chat_open_streams.c
        row = sa.select(*(sa.literal(v, c[k].type) for k, v in values.items())).where(
            held.scalar_subquery() < limit
        )
        inserted = conn.execute(chat_open_streams.insert().from_select(list(values), row))
        return [ids[0] if inserted.rowcount else None]

    return write(engine, work)


def close_stream(engine: Engine, stream_id: str) -> None:
    """Stop counting a stream that ended."""
    write_one(engine, chat_open_streams.delete().where(chat_open_streams.c.id == stream_id))


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
