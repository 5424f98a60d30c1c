"""One `Services` per app: made once from the app's settings, even when many threads or
greenlets ask at once, and replaced part by part through one override point."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy.engine import Engine

import webapp.services
from webapp import create_app
from webapp.services import (
    Services,
    chat_service,
    close_services,
    installed,
    override_services,
    services,
)
from webapp.store.app_db import close_engine, get_engine
from webapp.store.engine import create_store_engine
from webapp.store.throttle import DatabaseFailureLog, RedisFailureLog
from webapp.store.users import authenticate
from webapp.tools.python.market import FinnhubLive, SnapshotMarket
from webapp.tools.runner import LocalTools
from webapp.tools.web_index import LocalWebIndex
from webapp.tools.web_search import ExaSearch

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def made(app: Flask) -> Iterator[list[Flask]]:
    """Apps a test makes on `app`'s database; their engines are closed afterwards."""
    apps: list[Flask] = []
    yield apps
    for each in apps:
        close_engine(each)


def configured(app: Flask, made: list[Flask], **config: object) -> Flask:
    new = create_app(
        {"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": app.config["DATABASE_URL"], **config}
    )
    made.append(new)
    return new


def test_the_parts_follow_the_settings(app: Flask, made: list[Flask]) -> None:
    plain = services(app)
    assert isinstance(plain.market, SnapshotMarket) and isinstance(plain.web, LocalWebIndex)
    assert isinstance(plain.sign_in_failures, DatabaseFailureLog) and plain.favicons is not None
    live = services(
        configured(
            app,
            made,
            FINNHUB_API_KEY="fh",
            EXA_API_KEY="exa",
            REDIS_URL="redis://127.0.0.1:9/0",  # nothing is connected to until used
            FAVICON_FETCH="off",
        )
    )
    assert isinstance(live.market, FinnhubLive) and isinstance(live.web, ExaSearch)
    assert isinstance(live.sign_in_failures, RedisFailureLog) and live.favicons is None


def test_one_services_object_per_app(app: Flask, made: list[Flask]) -> None:
    first = services(app)
    assert services(app) is first
    with app.app_context():
        assert services() is first and get_engine() is first.engine
    assert chat_service(app) is first.chat and installed(app)
    other = configured(app, made)
    assert services(other) is not first and services(other).engine is not first.engine
    assert not installed(Flask(__name__))
    with pytest.raises(RuntimeError, match="create_app"):
        services(Flask(__name__))


def test_closing_makes_them_again(app: Flask) -> None:
    first = services(app)
    close_services(app)
    again = services(app)
    assert again is not first and again.engine is not first.engine
    close_engine(app)  # the engine's own name for the same thing
    assert services(app) is not again


def test_the_override_replaces_a_part_made_later(app: Flask, made: list[Flask]) -> None:
    market = SnapshotMarket()
    fresh = configured(app, made, FINNHUB_API_KEY="fh")
    override_services(fresh, market=market)
    assert services(fresh).market is market
    # The chat service's tools use it too.
    tools = chat_service(fresh).tools(1)
    assert isinstance(tools, LocalTools) and tools.market is market


def test_the_override_replaces_a_part_already_made(app: Flask) -> None:
    before = services(app)
    web = LocalWebIndex([])  # empty, and so falsy: still the part used
    override_services(app, web=web)
    after = services(app)
    assert after.web is web and after.engine is before.engine and after.chat is before.chat
    tools = after.chat.tools(1)
    assert isinstance(tools, LocalTools) and tools.web is web
    # It outlives a close: the parts made again keep it.
    close_services(app)
    assert services(app).web is web


def test_the_override_knows_the_parts() -> None:
    made = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": "sqlite://"})
    with pytest.raises(TypeError, match="markets"):
        override_services(made, markets=SnapshotMarket())


def test_with_favicon_fetch_off_every_source_gets_the_generic_icon(
    app: Flask, made: list[Flask]
) -> None:
    off = configured(app, made, FAVICON_FETCH="off")
    assert services(off).favicons is None  # nothing that could resolve or fetch exists
    client: FlaskClient = off.test_client()
    user = authenticate(get_engine(off), "demo", "demo")
    assert user is not None
    with client.session_transaction() as session:
        session["user_id"] = user.id
    response = client.get("/favicon/www.irs.gov")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"


def test_threads_asking_at_once_make_the_services_once(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    made_engines: list[Engine] = []
    real = create_store_engine

    def slow_engine(url: str) -> Engine:
        time.sleep(0.05)  # a wide window for a second maker to slip in, were there no lock
        engine = real(url)
        made_engines.append(engine)
        return engine

    monkeypatch.setattr(webapp.services, "create_store_engine", slow_engine)
    start = threading.Barrier(32)
    got: list[Services] = []

    def ask() -> None:
        start.wait()
        got.append(services(app))

    threads = [threading.Thread(target=ask) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made_engines) == 1 and len(got) == 32
    assert all(each is got[0] for each in got)


GREENLETS = """
from gevent import monkey

monkey.patch_all()

import json, sys
import gevent
import webapp.services
from webapp import create_app
from webapp.services import services

real, made = webapp.services.create_store_engine, []

def slow_engine(url):
    gevent.sleep(0.05)  # yields to the other greenlets while the first one makes them
    made.append(real(url))
    return made[-1]

webapp.services.create_store_engine = slow_engine
app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": sys.argv[1]})
got = [gevent.spawn(services, app) for _ in range(50)]
gevent.joinall(got, raise_error=True)
print(json.dumps({"made": len(made), "distinct": len({id(g.value) for g in got})}))
"""


def test_greenlets_asking_at_once_make_the_services_once(app: Flask) -> None:
    done = subprocess.run(
        [sys.executable, "-c", GREENLETS, app.config["DATABASE_URL"]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"made": 1, "distinct": 1}
