"""How the model ended each answer: `stop_reason` on `ai_chat_logs`.

Revision ID: 0008
Revises: 0007

A finished answer can be whole ("end_turn"), cut short at the most one answer may write
("max_tokens"), or the app's own refusal in place of a reply the model declined
("refusal"). The last must stay out of the history later turns send (the streaming-refusals
guide: a refused exchange sent back invites more refusals), so the row says which it was.
NULL for answers written before this revision and for questions.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("ai_chat_logs") as batch:
        batch.add_column(sa.Column("stop_reason", sa.String(40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ai_chat_logs") as batch:
        batch.drop_column("stop_reason")
