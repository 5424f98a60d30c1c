"""Browser tests: the app as the Procfile serves it (gunicorn, gevent workers), Debian's
chromium through Playwright."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.support.fake_claude import FakeClaude
from tests.support.gunicorn import gunicorn
from webapp import create_app
from webapp.store.app_db import close_engine

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@dataclass(frozen=True)
class LiveServer:
    """A running gunicorn and, for the tests that read or write what it stores, an app
    object in this process on the same database (it serves nothing)."""

    app: Flask
    url: str


def _serve(folder: Path, template: Path, secret: str, **env: str) -> Iterator[LiveServer]:
    """Copy the migrated, seeded database into `folder` and serve it with the Procfile's
    command, configured only through the environment, until the session ends."""
    database = folder / "webapp.sqlite"
    shutil.copyfile(template, database)
    url = f"sqlite:///{database}"
    settings = {
        "DATABASE_URL": url,
        "SECRET_KEY": secret,
        "ANTHROPIC_API_KEY": "",
        "ANTHROPIC_BASE_URL": "",
        "REDIS_URL": "",
        "WEB_CONCURRENCY": "2",  # gunicorn.conf.py's default, said out loud
        # Never resolve or fetch a site's icon: every web source gets the generic one.
        "FAVICON_FETCH": "off",
        **env,
    }
    with gunicorn(settings, folder) as server:
        app = create_app({"DATABASE_URL": url, "SECRET_KEY": secret, "ANTHROPIC_API_KEY": None})
        try:
            yield LiveServer(app, server.url)
        finally:
            close_engine(app)


@pytest.fixture(scope="session")
def live_server(
    tmp_path_factory: pytest.TempPathFactory, seeded_sqlite_template: Path
) -> Iterator[LiveServer]:
    """Serve the app with the offline engine (no ANTHROPIC_API_KEY) on a seeded SQLite file."""
    yield from _serve(tmp_path_factory.mktemp("e2e"), seeded_sqlite_template, "e2e")


@pytest.fixture(scope="session")
def slow_model() -> Iterator[FakeClaude]:
    """A fake Claude API for the slow-model server: each test scripts its replies."""
    with FakeClaude() as fake:
        yield fake


@pytest.fixture(scope="session")
def slow_server(
    tmp_path_factory: pytest.TempPathFactory, seeded_sqlite_template: Path, slow_model: FakeClaude
) -> Iterator[LiveServer]:
    """Serve the app with Claude answering from `slow_model`, as slowly as it writes."""
    yield from _serve(
        tmp_path_factory.mktemp("e2e-slow"),
        seeded_sqlite_template,
        "e2e-slow",
        ANTHROPIC_API_KEY="sk-e2e",
        ANTHROPIC_BASE_URL=slow_model.url,
    )


@pytest.fixture(scope="session")
def base_url(live_server: LiveServer) -> str:
    return live_server.url


@pytest.fixture(scope="session")
def a11y_screenshots() -> Path:
    """The folder for a screenshot of each page and state checked: A11Y_SCREENSHOTS, chosen
    at start-up when not given (tests/conftest.py names it at the end of the run)."""
    folder = Path(os.environ["A11Y_SCREENSHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}
