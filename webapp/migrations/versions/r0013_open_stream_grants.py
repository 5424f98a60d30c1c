"""Counting a user's new open streams in one round trip on PostgreSQL: `chat_open_streams_grant`.

Revision ID: 0013
Revises: 0012

A stream's open counts it among its user's open streams under the cap (`chat/open_streams.py`).
That takes the user's row lock, a count and an insert: four round trips in a transaction of
its own (`BEGIN`, the lock, the insert, `COMMIT`), before the stream's headers can go out.
This function does the three in one statement, run in autocommit. Each statement of a
VOLATILE PL/pgSQL function takes a fresh snapshot, so the count after the lock sees every
stream counted by whoever held the lock before, as the separate statements did; the lock and
the rows are released and committed together when the statement ends. SQLite has no such
functions and needs none: a write there holds the whole file.
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None

_CREATE = """
CREATE FUNCTION chat_open_streams_grant(
    p_user integer,
    p_worker varchar,
    p_limit integer,
    p_alive_since timestamptz,
    p_at timestamptz,
    p_ids varchar[]
) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    room integer;
BEGIN
    PERFORM 1 FROM users WHERE id = p_user FOR UPDATE;
    SELECT p_limit - count(*) INTO room
      FROM chat_open_streams
     WHERE user_id = p_user
       AND (worker = p_worker
            OR worker IN (SELECT id FROM chat_workers WHERE seen_at > p_alive_since));
    room := greatest(0, least(room, cardinality(p_ids)));
    INSERT INTO chat_open_streams (id, user_id, worker, opened_at)
    SELECT granted, p_user, p_worker, p_at FROM unnest(p_ids[1:room]) AS granted;
    RETURN room;
END
$$
"""


def upgrade() -> None:
    """Create the function on PostgreSQL."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_CREATE)


def downgrade() -> None:
    """Drop it."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION chat_open_streams_grant")
