"""Open answer streams per user, and the serving processes that hold them.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create `chat_workers` and `chat_open_streams`."""
    op.create_table(
        "chat_workers",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "chat_open_streams",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("worker", sa.String(32), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_chat_open_streams_user", "chat_open_streams", ["user_id"])


def downgrade() -> None:
    """Drop them."""
    op.drop_table("chat_open_streams")
    op.drop_table("chat_workers")
