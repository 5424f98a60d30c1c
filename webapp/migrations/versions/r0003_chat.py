"""Chat sessions, message logs, their event streams and slice checkpoints.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def _when(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    """Create the chat tables."""
    op.create_table(
        "chat_sessions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("title", sa.String(200), nullable=False),
        _when("created_at"),
        _when("updated_at"),
    )
    op.create_index("ix_chat_sessions_user", "chat_sessions", ["user_id", "updated_at"])
    op.create_table(
        "ai_chat_logs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "session_id",
            sa.String(32),
            sa.ForeignKey("chat_sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("citations", sa.JSON, nullable=True),
        sa.Column("inline_citations", sa.JSON, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        _when("created_at"),
        _when("completed_at", nullable=True),
        _when("lease_until", nullable=True),
        sa.Column("lease_owner", sa.String(32), nullable=True),
        sa.CheckConstraint("role IN ('user', 'assistant')", name="ck_ai_chat_logs_role"),
        sa.CheckConstraint(
            "status IN ('running', 'complete', 'error')", name="ck_ai_chat_logs_status"
        ),
    )
    op.create_index("ix_ai_chat_logs_session", "ai_chat_logs", ["session_id", "created_at"])
    # One answer at a time per session, enforced by the database rather than a check-then-act.
    running = sa.text("status = 'running'")
    op.create_index(
        "ux_ai_chat_logs_one_running",
        "ai_chat_logs",
        ["session_id"],
        unique=True,
        sqlite_where=running,
        postgresql_where=running,
    )
    op.create_table(
        "chat_events",
        sa.Column(
            "message_id",
            sa.String(32),
            sa.ForeignKey("ai_chat_logs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_table(
        "chat_checkpoints",
        sa.Column(
            "message_id",
            sa.String(32),
            sa.ForeignKey("ai_chat_logs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("event_seq", sa.Integer, nullable=False),
        _when("updated_at"),
    )


def downgrade() -> None:
    """Drop the chat tables."""
    for table in ("chat_checkpoints", "chat_events", "ai_chat_logs", "chat_sessions"):
        op.drop_table(table)
