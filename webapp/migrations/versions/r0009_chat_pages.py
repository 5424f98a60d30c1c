"""Keyset pages of chats and messages, and a log of when each user made a chat.

Revision ID: 0009
Revises: 0008

The API lists a user's chats newest first by (updated_at, id) and a chat's messages by
(created_at, role descending, id), a page at a time from a cursor (webapp/chat/pages.py).
The indexes here hold rows in exactly those orders, so each page is one range read, read
backwards, however deep. They replace 0003's two-column indexes, whose leading columns they
keep. `chat_creations` counts the chats a user made lately (deleted ones too) for the
per-user creation rate.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Replace the chat list indexes with keyset ones; create `chat_creations`."""
    op.create_index("ix_chat_sessions_user_page", "chat_sessions", ["user_id", "updated_at", "id"])
    op.drop_index("ix_chat_sessions_user", table_name="chat_sessions")
    op.create_index(
        "ix_ai_chat_logs_session_page",
        "ai_chat_logs",
        ["session_id", "created_at", sa.text("role DESC"), "id"],
    )
    op.drop_index("ix_ai_chat_logs_session", table_name="ai_chat_logs")
    op.create_table(
        "chat_creations",
        sa.Column("session_id", sa.String(32), primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_chat_creations_user", "chat_creations", ["user_id", "created_at"])


def downgrade() -> None:
    """Drop `chat_creations`; put 0003's indexes back."""
    op.drop_table("chat_creations")
    op.create_index("ix_ai_chat_logs_session", "ai_chat_logs", ["session_id", "created_at"])
    op.drop_index("ix_ai_chat_logs_session_page", table_name="ai_chat_logs")
    op.create_index("ix_chat_sessions_user", "chat_sessions", ["user_id", "updated_at"])
    op.drop_index("ix_chat_sessions_user_page", table_name="chat_sessions")
