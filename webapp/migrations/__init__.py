"""Versioned schema migrations (Alembic), run by `flask --app webapp init-db`.

There is no alembic.ini: `webapp.store.upgrade_database(engine)` points Alembic at this
folder and hands `env.py` an open connection, so the scripts ship inside the package.

The chain is linear; each revision names the one before it in `down_revision`:

    0001  users, api_tokens                          versions/r0001_users.py
    0002  accounts, holdings, the query views, and   versions/r0002_accounts.py
          (PostgreSQL) the roles and row-level security behind them

To add a revision (say, the chat tables), create `versions/r0003_chat.py` with
`revision = "0003"` and `down_revision = "0002"`, plus `upgrade()` and `downgrade()`
written with `alembic.op` (copy the shape of r0001). Or let Alembic write the file:

    .venv/bin/python -c "from alembic import command; from webapp.store import alembic_config; \
        command.revision(alembic_config(), message='chat', rev_id='0003')"

Keep every script self-contained (no imports from `webapp`): a revision is a snapshot
of the schema at its time, and must still run after the code around it has moved on.
Where SQLite cannot ALTER a table, use `op.batch_alter_table` (env.py enables batch
mode for SQLite). `init-db` then migrates any database to the new head, and the test
`tests/test_store_migrations.py` checks that the chain has one head and goes up and down.
"""
