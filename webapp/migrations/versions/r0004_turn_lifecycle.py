"""A turn's whole life: a stopped answer is `cancelled`; a question is asked once per key.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

_RUNNING = sa.text("status = 'running'")


def _statuses(allowed: str) -> None:
    # SQLite rebuilds the table to change a CHECK; its partial index is made again after.
    op.drop_index("ux_ai_chat_logs_one_running", table_name="ai_chat_logs")
    with op.batch_alter_table("ai_chat_logs") as batch:
        batch.drop_constraint("ck_ai_chat_logs_status", type_="check")
        batch.create_check_constraint("ck_ai_chat_logs_status", f"status IN ({allowed})")
    op.create_index(
        "ux_ai_chat_logs_one_running",
        "ai_chat_logs",
        ["session_id"],
        unique=True,
        sqlite_where=_RUNNING,
        postgresql_where=_RUNNING,
    )


def upgrade() -> None:
    """Allow `cancelled`; remember idempotency keys."""
    _statuses("'running', 'complete', 'error', 'cancelled'")
    op.create_table(
        "chat_idempotency_keys",
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column(
            "session_id",
            sa.String(32),
            sa.ForeignKey("chat_sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "message_id",
            sa.String(32),
            sa.ForeignKey("ai_chat_logs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    """Forget idempotency keys; a cancelled answer becomes an error."""
    op.drop_table("chat_idempotency_keys")
    op.execute("UPDATE ai_chat_logs SET status = 'error' WHERE status = 'cancelled'")
    _statuses("'running', 'complete', 'error'")
