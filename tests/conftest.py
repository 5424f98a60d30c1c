"""Shared fixtures: a fresh app on its own seeded SQLite file per test, and PostgreSQL when
reachable (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/test)."""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from hypothesis import HealthCheck, settings
from psycopg import sql
from sqlalchemy.engine import Engine, make_url

from tests.support.apps import app_on_copy, shared_template
from tests.support.fake_claude import FakeClaude
from webapp import create_app
from webapp.store.app_db import close_engine, get_engine
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import User

DEFAULT_TEST_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/test"


# Hypothesis: a few examples per property while working (`dev`, the default), the full
# count in CI (`ci`, .ci/run), chosen by HYPOTHESIS_PROFILE. Neither has a deadline: a busy
# machine must not fail a property, and speed is the benchmarks' to measure. CI's examples
# are derandomized so that a failure there is the same failure on the next run.
settings.register_profile(
    "dev", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    derandomize=True,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "dev")


# Test files that look at every process on the machine (sandbox launchers left behind, the
# processes of a sandbox uid, the start-up sweep of other runs' leftovers): another worker's
# sandbox runs would show up there, so `dev.py test` runs these alone, after the others.
_MACHINE_WIDE = {
    "test_python_sandbox.py",
    "test_python_sandbox_ipc.py",
    "test_python_sandbox_lifetime.py",
    "test_python_sandbox_serving.py",
    "test_python_sandbox_sweep.py",
}


# The browser tests' screenshots of each page and state: the folder is chosen once, by the
# process that reports (xdist workers inherit it from the environment), and named at the end.
SCREENSHOTS = "A11Y_SCREENSHOTS"
_made_screenshots: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and not os.environ.get(SCREENSHOTS):
        folder = Path(tempfile.mkdtemp(prefix="a11y-screenshots-"))
        os.environ[SCREENSHOTS] = str(folder)
        _made_screenshots.append(folder)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    folder = Path(os.environ.get(SCREENSHOTS) or "")
    if folder.is_dir() and any(folder.iterdir()):
        terminalreporter.write_line(f"Accessibility screenshots: {folder}")


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _made_screenshots:  # a run with no browser test leaves no empty folder
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the machine-wide tests, and keep the browser tests on one xdist worker (they share
    one served app per session); the group mark exists only while xdist is loaded."""
    xdist = config.pluginmanager.hasplugin("xdist")
    for item in items:
        if item.path.name in _MACHINE_WIDE:
            item.add_marker(pytest.mark.machine)
        if xdist and "e2e" in item.keywords:
            item.add_marker(pytest.mark.xdist_group("e2e"))


@pytest.fixture(scope="session")
def seeded_sqlite_template() -> Path:
    """Return a SQLite file migrated to head and seeded with the demo users, made once per
    process (each xdist worker has its own)."""
    return shared_template()


@pytest.fixture
def app(tmp_path: Path, seeded_sqlite_template: Path) -> Iterator[Flask]:
    """Return an app on its own copy of the seeded database (users demo/alex, password demo)."""
    app = app_on_copy(seeded_sqlite_template, tmp_path / "webapp.sqlite")
    yield app
    close_engine(app)


@pytest.fixture
def claude_app(tmp_path: Path, seeded_sqlite_template: Path) -> Iterator[tuple[Flask, FakeClaude]]:
    """Return an app whose model is Claude, answered by a fake Claude on loopback that the
    test scripts, on its own copy of the seeded database."""
    with FakeClaude() as fake:
        app = app_on_copy(
            seeded_sqlite_template,
            tmp_path / "webapp.sqlite",
            ANTHROPIC_API_KEY="sk-test",
            ANTHROPIC_BASE_URL=fake.url,
            ANTHROPIC_MODEL="claude-test",
        )
        try:
            yield app, fake
        finally:
            close_engine(app)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """Return a test client for `app`."""
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    """Return a runner for `app`'s CLI commands."""
    return app.test_cli_runner()


def _conninfo(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    """Return TEST_DATABASE_URL once the server answers; skip, saying why, when it does not."""
    base = os.environ.get("TEST_DATABASE_URL") or DEFAULT_TEST_DATABASE_URL
    try:
        psycopg.connect(_conninfo(base), connect_timeout=3).close()
    except psycopg.Error as exc:
        shown = make_url(base).render_as_string(hide_password=True)
        pytest.skip(f"PostgreSQL is not reachable at {shown}: {' '.join(str(exc).split())}")
    return base


# The app connects as this role in every PostgreSQL test, as in production: it owns its
# database, and is no superuser, cannot bypass row-level security, and cannot make roles.
APP_ROLE = "webapp_app_owner"
_ROLES = f"""
DO $$
BEGIN
  BEGIN CREATE ROLE webapp_views NOLOGIN;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  BEGIN CREATE ROLE webapp_query NOLOGIN;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  BEGIN CREATE ROLE {APP_ROLE} LOGIN;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  ALTER ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB;
  GRANT webapp_views, webapp_query TO {APP_ROLE};
END $$"""


@pytest.fixture(scope="module")
def pg_url(pg_admin_url: str) -> Iterator[str]:
    """Return the URL of a new, empty PostgreSQL database, dropped after the test module.

    The URL names the app's own login (`APP_ROLE`), which owns the database; an operator
    makes the roles once, as `_ROLES` does (README.md, "Security").
    """
    name = f"webapp_test_{secrets.token_hex(6)}"
    with psycopg.connect(_conninfo(pg_admin_url), autocommit=True) as admin:
        # Parallel workers make the roles at the same moment; one at a time, or GRANT can fail
        # with "tuple concurrently updated".
        admin.execute("SELECT pg_advisory_lock(4213)")
        admin.execute(_ROLES)
        admin.execute("SELECT pg_advisory_unlock(4213)")
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(APP_ROLE)
            )
        )
    try:
        yield (
            make_url(pg_admin_url)
            .set(database=name, username=APP_ROLE, password=None)
            .render_as_string(hide_password=False)
        )
    finally:
        with psycopg.connect(_conninfo(pg_admin_url), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def pg_app(pg_url: str) -> Iterator[Flask]:
    """The app on a new PostgreSQL database (`pg_url`), migrated and seeded with the demo users,
    the offline engine answering."""
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": pg_url, "ANTHROPIC_API_KEY": None}
    )
    upgrade_database(get_engine(app))
    seed_demo(get_engine(app), "demo")
    yield app
    close_engine(app)


@dataclass(frozen=True)
class SqlBackend:
    """A migrated, seeded database for the query-service tests."""

    name: str
    engine: Engine
    users: dict[str, User]


def _seeded_backend(name: str, url: str) -> Iterator[SqlBackend]:
    engine = create_store_engine(url)
    upgrade_database(engine)
    users = seed_demo(engine, "demo")
    yield SqlBackend(name, engine, users)
    engine.dispose()


@pytest.fixture(scope="module")
def sqlite_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlBackend]:
    """Return a seeded SQLite database shared by the test module."""
    path = tmp_path_factory.mktemp("sql") / "webapp.sqlite"
    yield from _seeded_backend("sqlite", f"sqlite:///{path}")


@pytest.fixture(scope="module")
def postgres_backend(pg_url: str) -> Iterator[SqlBackend]:
    """Return a seeded PostgreSQL database shared by the test module (skips when unreachable)."""
    yield from _seeded_backend("postgres", pg_url)


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def sql_backend(request: pytest.FixtureRequest) -> SqlBackend:
    """Return a seeded database on each backend: SQLite always, PostgreSQL when reachable."""
    backend = request.getfixturevalue(f"{request.param}_backend")
    assert isinstance(backend, SqlBackend)
    return backend
