"""Sign-in safety: failed sign-ins counted for throttling; sign-out ends a session for good.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create `sign_in_failures` and `session_versions`."""
    op.create_table(
        "sign_in_failures",
        sa.Column("attempt", sa.String(32), nullable=False),
        # SHA-256 of the username or the client address; rows older than the window go.
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("at", sa.Double, nullable=False),
        sa.PrimaryKeyConstraint("attempt", "key", name="pk_sign_in_failures"),
    )
    op.create_index("ix_sign_in_failures_key_at", "sign_in_failures", ["key", "at"])
    op.create_index("ix_sign_in_failures_at", "sign_in_failures", ["at"])
    op.create_table(
        "session_versions",
        sa.Column("user_id", sa.Integer, nullable=False),
        # Bumped at sign-out: a session signed in at an older version is no longer valid.
        sa.Column("version", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("user_id", name="pk_session_versions"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_session_versions_user_id", ondelete="CASCADE"
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        # As for users and tokens (r0002): the model's query role must never read these, even
        # where default privileges were widened.
        op.execute("REVOKE ALL ON sign_in_failures, session_versions FROM PUBLIC")


def downgrade() -> None:
    """Drop `session_versions` and `sign_in_failures`."""
    op.drop_table("session_versions")
    op.drop_index("ix_sign_in_failures_at", table_name="sign_in_failures")
    op.drop_index("ix_sign_in_failures_key_at", table_name="sign_in_failures")
    op.drop_table("sign_in_failures")
