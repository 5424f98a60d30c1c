"""The chat tables, as SQLAlchemy Core objects (revision 0003 creates them)."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

chat_sessions = sa.Table(
    "chat_sessions",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

# One row a message. An assistant row is written whole when its turn ends: `content`,
# `citations` and `inline_citations` together, or `status = 'error'` with the reason.
ai_chat_logs = sa.Table(
    "ai_chat_logs",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("session_id", sa.String(32), nullable=False),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("citations", sa.JSON, nullable=True),
    sa.Column("inline_citations", sa.JSON, nullable=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
    # How the model ended a finished answer: "max_tokens" (cut short), "refusal" (the app's
    # own refusal, kept out of later history); NULL otherwise (revision 0008).
    sa.Column("stop_reason", sa.String(40), nullable=True),
    # Versions (revision 0012): a regenerated answer's `version_of` is the id of the answer's
    # first version, an edited question's the question it replaced. `hidden` is NULL for a
    # row of the conversation, "version" for a version not shown (it may be shown again),
    # "edited" for a row an edit left out for good.
    sa.Column("version_of", sa.String(32), nullable=True),
    sa.Column("hidden", sa.String(16), nullable=True),
    # While a turn runs, its runner (named by `lease_owner`) renews this lease; an expired
    # lease means the runner died, and a reader may take the turn over under a new owner.
    sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
    sa.Column("lease_owner", sa.String(32), nullable=True),
    # What a page draws of a finished answer, written once when its turn ends: JSON text in
    # the format `snapshot_version` names (revision 0011, webapp/web/snapshots.py).
    sa.Column("snapshot", sa.Text, nullable=True),
    sa.Column("snapshot_version", sa.Integer, nullable=True),
)

# Every event of an answer's stream, in order: replay, history and Last-Event-ID resume.
chat_events = sa.Table(
    "chat_events",
    metadata,
    sa.Column("message_id", sa.String(32), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("event", sa.String(32), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
)

# The slice checkpoint after the latest tool round (messages + citationTargets).
chat_checkpoints = sa.Table(
    "chat_checkpoints",
    metadata,
    sa.Column("message_id", sa.String(32), primary_key=True),
    sa.Column("data", sa.JSON, nullable=False),
    sa.Column("event_seq", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

# A question asked with an `Idempotency-Key` header: the same key again (24 h, same user)
# answers with the same message instead of asking twice.
chat_idempotency_keys = sa.Table(
    "chat_idempotency_keys",
    metadata,
    sa.Column("user_id", sa.Integer, primary_key=True),
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("session_id", sa.String(32), nullable=False),
    sa.Column("message_id", sa.String(32), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

# Every serving process that holds streams says it is alive here (its sweeper, every few
# seconds); the streams of a process that stopped saying so no longer count.
chat_workers = sa.Table(
    "chat_workers",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
)

# One row per open answer stream, so a user's cap holds across every worker and host.
chat_open_streams = sa.Table(
    "chat_open_streams",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Column("worker", sa.String(32), nullable=False),
    sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
)

# When each chat was made, by whom (revision 0009): the per-user creation rate counts these,
# so a chat made and deleted still counts until it leaves the window.
chat_creations = sa.Table(
    "chat_creations",
    metadata,
    sa.Column("session_id", sa.String(32), primary_key=True),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
