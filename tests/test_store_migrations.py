"""The Alembic chain: one head, idempotent upgrades, down and up again, Core tables in step."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory

import webapp
from webapp.store.engine import create_store_engine
from webapp.store.migrate import (
    MIGRATIONS_DIR,
    alembic_config,
    current_revision,
    downgrade_database,
    head_revision,
    upgrade_database,
)
from webapp.store.schema import QUERY_VIEWS, metadata


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'fresh.sqlite'}"


def _names(engine: sa.Engine) -> tuple[set[str], set[str]]:
    inspector = sa.inspect(engine)
    return set(inspector.get_table_names()), set(inspector.get_view_names())


def test_the_scripts_ship_inside_the_package() -> None:
    package = Path(webapp.__file__).parent
    assert MIGRATIONS_DIR.parent == package
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert not (package.parent / "alembic.ini").exists()


def test_the_chain_is_linear_with_one_head() -> None:
    scripts = ScriptDirectory.from_config(alembic_config())
    assert len(scripts.get_heads()) == 1
    revisions = list(scripts.walk_revisions())
    assert revisions[-1].down_revision is None
    assert [r.revision for r in revisions][-2:] == ["0002", "0001"]
    assert all(not r.is_merge_point and not r.is_branch_point for r in revisions)


@pytest.mark.parametrize(
    "url_fixture", ["sqlite_url", pytest.param("pg_url", marks=pytest.mark.postgres)]
)
def test_upgrade_is_idempotent_and_goes_down_and_up(
    request: pytest.FixtureRequest, url_fixture: str
) -> None:
    engine = create_store_engine(request.getfixturevalue(url_fixture))
    try:
        assert current_revision(engine) is None
        assert upgrade_database(engine) == head_revision()
        tables, views = _names(engine)
        assert set(QUERY_VIEWS) <= views
        assert {t.name for t in metadata.sorted_tables} <= tables
        assert upgrade_database(engine) == head_revision()
        assert _names(engine) == (tables, views)

        assert downgrade_database(engine, "0001") == "0001"
        assert _names(engine) == ({"alembic_version", "users", "api_tokens"}, set())
        assert downgrade_database(engine, "base") is None
        assert upgrade_database(engine) == head_revision()
        assert _names(engine) == (tables, views)
    finally:
        engine.dispose()


def test_a_new_revision_is_written_from_the_template(tmp_path: Path) -> None:
    scripts = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    config = alembic_config()
    config.set_main_option("script_location", str(scripts))
    head = head_revision()
    command.revision(config, message="add widgets", rev_id="9999")
    (written,) = (scripts / "versions").glob("r9999_*.py")
    assert written.name == "r9999_add_widgets.py"
    revision = ScriptDirectory.from_config(config).get_revision("9999")
    assert revision is not None and revision.down_revision == head
    assert "def upgrade() -> None:" in written.read_text()


def test_core_tables_match_the_migrated_schema(sqlite_url: str) -> None:
    engine = create_store_engine(sqlite_url)
    try:
        upgrade_database(engine)
        inspector = sa.inspect(engine)
        for table in metadata.sorted_tables:
            migrated = {c["name"]: c["nullable"] for c in inspector.get_columns(table.name)}
            described = {c.name: c.nullable for c in table.columns}
            assert migrated == described, table.name
    finally:
        engine.dispose()
