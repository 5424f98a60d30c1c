"""Versions of an answer and edited questions: `version_of` and `hidden` on `ai_chat_logs`.

Revision ID: 0012
Revises: 0011

Regenerate writes a new answer row in the old one's place: its `version_of` names the first
version of that answer (the slot), and every version but the one shown is `hidden` as
"version", so a person may show it again. Editing a question writes a new question (its
`version_of` names the one it replaces) and leaves the old one and everything after it out of
the conversation for good: those rows are `hidden` as "edited". The conversation, its pages
and the history a turn sends the model are the rows with `hidden` NULL. Rows written before
this revision are their own first versions, shown.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add `version_of` (indexed: a slot's versions are read by it) and `hidden`."""
    with op.batch_alter_table("ai_chat_logs") as batch:
        batch.add_column(sa.Column("version_of", sa.String(32), nullable=True))
        batch.add_column(sa.Column("hidden", sa.String(16), nullable=True))
    op.create_index("ix_ai_chat_logs_version_of", "ai_chat_logs", ["version_of"])


def downgrade() -> None:
    """Drop them: every version and edited question shows again, in the order written."""
    op.drop_index("ix_ai_chat_logs_version_of", table_name="ai_chat_logs")
    with op.batch_alter_table("ai_chat_logs") as batch:
        batch.drop_column("hidden")
        batch.drop_column("version_of")
