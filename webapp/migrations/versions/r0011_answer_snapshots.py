"""A snapshot of each finished answer, so a chat page draws it without folding its events.

Revision ID: 0011
Revises: 0010

When a turn reaches its end (done, stopped, failed), what the page draws of its answer (the
answer's HTML, its choosers, the `Sources · N` bar and sheet) is written once, as JSON text,
into `snapshot`, with the format's version in `snapshot_version` (webapp/web/snapshots.py).
A page reads the snapshots of its answers in one query; an answer without one, or with one of
another version or that can't be read, is folded from its events as before. Both columns are
NULL for every row written before this revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add `ai_chat_logs.snapshot` and `snapshot_version`."""
    op.add_column("ai_chat_logs", sa.Column("snapshot", sa.Text, nullable=True))
    op.add_column("ai_chat_logs", sa.Column("snapshot_version", sa.Integer, nullable=True))


def downgrade() -> None:
    """Drop the two columns (SQLite 3.35 and later drop a column in place)."""
    op.drop_column("ai_chat_logs", "snapshot_version")
    op.drop_column("ai_chat_logs", "snapshot")
