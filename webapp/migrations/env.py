"""Alembic's entry point: migrate the connection that `webapp.store` hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection


def run_migrations_online() -> None:
    """Run the pending revisions on the caller's connection, inside its transaction."""
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError("run migrations through webapp.store.upgrade_database(engine)")
    context.configure(
        connection=connection,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) migrations are not supported")
run_migrations_online()
