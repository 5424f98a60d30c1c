"""Run the Alembic migrations in `webapp/migrations` programmatically (no alembic.ini)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    """Return an Alembic config for the packaged scripts, bound to `connection` if given."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # New scripts are named like the others (`r0004_slug.py`): a valid module name.
    config.set_main_option("file_template", "r%%(rev)s_%%(slug)s")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    """Return the revision the scripts end at."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """Return the revision the database is at, or None before the first migration."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade_database(engine: Engine, revision: str = "head") -> str | None:
    """Create or migrate the schema to `revision` (idempotent) and return where it is now."""
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)
    return current_revision(engine)


def downgrade_database(engine: Engine, revision: str) -> str | None:
    """Migrate the schema down to `revision` ("base" for none) and return where it is now."""
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), revision)
    return current_revision(engine)
