"""Browser tests: the real app on a live local server, Debian's chromium through Playwright."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import make_server

from tests.support.fake_claude import FakeClaude
from webapp import create_app
from webapp.favicons.fetch import FaviconService, Fetched
from webapp.store.app_db import close_engine, get_engine
from webapp.store.demo import seed_demo
from webapp.store.migrate import upgrade_database
from webapp.web.extension import chat_service
from webapp.web.favicon import set_favicon_service

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


def _no_network(url: str, address: str, timeout: float, max_bytes: int) -> Fetched:
    raise AssertionError("the browser tests never fetch from the internet")


@dataclass(frozen=True)
class LiveServer:
    app: Flask
    url: str


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Serve the real app (offline engine, seeded SQLite) on 127.0.0.1 on a free port."""
    folder: Path = tmp_path_factory.mktemp("e2e")
    app = create_app(
        {
            "SECRET_KEY": "e2e",
            "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite'}",
            "ANTHROPIC_API_KEY": None,
        }
    )
    yield from _serve(app)


def _serve(app: Flask) -> Iterator[LiveServer]:
    """Seed `app`'s database and serve it on a free loopback port until the session ends."""
    upgrade_database(get_engine(app))
    seed_demo(get_engine(app), "demo")
    # No DNS and no fetch: every icon is the generic one, as on a machine without internet.
    set_favicon_service(app, FaviconService(resolver=lambda host: [], get=_no_network))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield LiveServer(app, f"http://127.0.0.1:{server.server_port}")
    server.shutdown()
    thread.join(10)
    server.server_close()
    with app.app_context():
        chat_service().wait_idle()
    close_engine(app)


@pytest.fixture(scope="session")
def slow_model() -> Iterator[FakeClaude]:
    """A fake Claude API for the slow-model server: each test scripts its replies."""
    with FakeClaude() as fake:
        yield fake


@pytest.fixture(scope="session")
def slow_server(
    tmp_path_factory: pytest.TempPathFactory, slow_model: FakeClaude
) -> Iterator[LiveServer]:
    """Serve the real app with Claude answering from `slow_model`, as slowly as it writes."""
    folder: Path = tmp_path_factory.mktemp("e2e-slow")
    app = create_app(
        {
            "SECRET_KEY": "e2e-slow",
            "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite'}",
            "ANTHROPIC_API_KEY": "sk-e2e",
            "ANTHROPIC_BASE_URL": slow_model.url,
        }
    )
    yield from _serve(app)


@pytest.fixture(scope="session")
def base_url(live_server: LiveServer) -> str:
    return live_server.url


@pytest.fixture(scope="session")
def a11y_screenshots(pytestconfig: pytest.Config) -> Iterator[Path]:
    """A folder for a screenshot of each page and state checked, named when the run ends:
    A11Y_SCREENSHOTS, or a new temporary folder that pytest's clean-up of old runs leaves be."""
    chosen = os.environ.get("A11Y_SCREENSHOTS")
    folder = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="a11y-screenshots-"))
    folder.mkdir(parents=True, exist_ok=True)
    yield folder
    # Printed past pytest's capture, so that it shows in any run.
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nAccessibility screenshots: {folder}")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}
