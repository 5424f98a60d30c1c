"""Versioned schema migrations (Alembic), run by `flask --app webapp init-db`.

There is no alembic.ini: `webapp.store.upgrade_database(engine)` points Alembic at this
folder and hands `env.py` an open connection, so the scripts ship inside the package.

The chain is linear; each revision names the one before it in `down_revision`:

    0001  users, api_tokens                          versions/r0001_users.py
    0002  accounts, holdings, the query views, and   versions/r0002_accounts.py
          (PostgreSQL) the roles and row-level security behind them
    0003  chat sessions, logs, events, checkpoints   versions/r0003_chat.py

To add a revision, create `versions/r0004_<slug>.py` with `revision = "0004"` and
`down_revision` set to the current head, plus `upgrade()` and `downgrade()` written
with `alembic.op` (copy the shape of r0001). Or let Alembic write it from
`script.py.mako`, named the same way:

    .venv/bin/python -c "from alembic import command; from webapp.store import alembic_config; \
        command.revision(alembic_config(), message='widgets', rev_id='0004')"

Keep every script self-contained (no imports from `webapp`): a revision is a snapshot
of the schema at its time, and must still run after the code around it has moved on.
Where SQLite cannot ALTER a table, use `op.batch_alter_table` (env.py enables batch
mode for SQLite). `init-db` then migrates any database to the new head, and the test
`tests/test_store_migrations.py` checks that the chain has one head and goes up and down.
"""
