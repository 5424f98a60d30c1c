"""Sign-in throttling at POST /login: 429 + Retry-After after 10 failures for a username in 15
minutes from browsers that have not signed in as it before, with no password check; a browser
that has (its device cookie) keeps signing in; an address is refused only far past one
office's failures; successes do not count; the counts are shared."""

from __future__ import annotations

import secrets
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import sqlalchemy as sa
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous import URLSafeTimedSerializer
from werkzeug.test import TestResponse

from webapp import create_app
from webapp.store.app_db import close_engine, get_engine
from webapp.store.throttle import sign_in_failures, throttle_key
from webapp.web import auth
from webapp.web.auth import BAD_LOGIN

REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_reachable() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True


def sign_in(
    client: FlaskClient, username: str = "demo", password: str = "wrong", address: str = "127.0.0.1"
) -> TestResponse:
    page = BeautifulSoup(client.get("/login").get_data(as_text=True), "html.parser")
    token = page.select_one('input[name="csrf_token"]')
    assert token is not None
    return client.post(
        "/login",
        environ_base={"REMOTE_ADDR": address},
        data={"username": username, "password": password, "csrf_token": str(token["value"])},
    )


def alert(response: TestResponse) -> str:
    found = BeautifulSoup(response.get_data(as_text=True), "html.parser").select_one(
        '[role="alert"]'
    )
    return "" if found is None else found.get_text()


def test_the_eleventh_failure_for_a_username_gets_429_with_retry_after(client: FlaskClient) -> None:
    # Ten different addresses: only the username's count can refuse the eleventh.
    for i in range(10):
        assert sign_in(client, address=f"203.0.113.{i}").status_code == 401
    response = sign_in(client, address="198.51.100.1")
    assert response.status_code == 429
    assert 1 <= int(response.headers["Retry-After"]) <= 900
    assert alert(response).startswith("Too many failed sign-ins.")
    assert "minutes" in alert(response) and "Exception" not in response.get_data(as_text=True)
    assert sign_in(client, "alex", address="198.51.100.1").status_code == 401  # another user


def test_the_eleventh_failure_from_an_address_gets_429_whatever_the_username(
    app: Flask, tmp_path: Path
) -> None:
    strict = _second_app(app, tmp_path, MAX_SIGN_IN_FAILURES_PER_ADDRESS=10)
    client = strict.test_client()
    for i in range(10):
        assert sign_in(client, f"nobody{i}", address="203.0.113.50").status_code == 401
    refused = sign_in(client, "alex", "demo", address="203.0.113.50")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert sign_in(client, "alex", "demo", address="203.0.113.51").status_code == 302
    close_engine(strict)


def test_by_default_an_offices_failures_from_one_address_are_all_checked(
    app: Flask, client: FlaskClient
) -> None:
    # Forty people behind one address mistype once each: none of them is refused.
    for i in range(40):
        assert sign_in(app.test_client(), f"nobody{i}", address="203.0.113.60").status_code == 401
    assert sign_in(client, "alex", "demo", address="203.0.113.60").status_code == 302


def test_the_victims_own_browser_keeps_signing_in_while_others_are_throttled(
    app: Flask,
) -> None:
    victim = app.test_client()
    assert sign_in(victim, "demo", "demo").status_code == 302  # signed in here before
    victim.delete_cookie("session")  # signed out; its device cookie stays
    for i in range(10):  # someone guessing from elsewhere, a fresh browser each time
        assert sign_in(app.test_client(), address=f"203.0.113.{i}").status_code == 401
    assert sign_in(app.test_client(), "demo", "demo", address="203.0.113.70").status_code == 429
    assert sign_in(victim, "demo", "wrong", address="198.51.100.7").status_code == 401
    assert sign_in(victim, "demo", "demo", address="198.51.100.7").status_code == 302


def test_a_device_cookie_counts_only_for_its_own_user_and_only_signed(app: Flask) -> None:
    for i in range(10):
        assert sign_in(app.test_client(), address=f"203.0.113.{i}").status_code == 401
    alexs = app.test_client()
    assert sign_in(alexs, "alex", "demo").status_code == 302
    alexs.delete_cookie("session")
    # alex's device cookie says nothing about demo: that browser is throttled for demo.
    assert sign_in(alexs, "demo", "demo").status_code == 429
    forged = app.test_client()
    cookie = alexs.get_cookie(auth.DEVICE_COOKIE, path="/login")
    assert cookie is not None and cookie.http_only and cookie.path == "/login"
    # A cookie for demo signed with another key is no device cookie.
    fake = URLSafeTimedSerializer("not-the-key", salt="sign-in-device").dumps([["demo", "0" * 32]])
    forged.set_cookie(auth.DEVICE_COOKIE, fake, path="/login")
    assert sign_in(forged, "demo", "demo").status_code == 429


def test_a_device_that_fails_ten_times_is_throttled_like_any_other_browser(app: Flask) -> None:
    mine = app.test_client()
    assert sign_in(mine, "demo", "demo").status_code == 302
    mine.delete_cookie("session")
    statuses = [sign_in(mine).status_code for _ in range(21)]
    # Ten against the device, ten more against the username's untrusted count, then refused.
    assert statuses == [401] * 20 + [429]
    assert sign_in(app.test_client(), "demo", "demo").status_code == 429


def test_a_throttled_sign_in_is_refused_without_checking_the_password(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[str] = []
    real = auth.authenticate  # type: ignore[attr-defined]

    def counting(engine: sa.Engine, username: object, password: object) -> object:
        checked.append(str(username))
        return real(engine, username, password)

    monkeypatch.setattr(auth, "authenticate", counting)
    for _ in range(10):
        sign_in(client)
    assert len(checked) == 10
    response = sign_in(client, "demo", "demo")  # the right password, all the same
    assert response.status_code == 429 and len(checked) == 10
    assert client.get("/accounts").status_code == 302  # not signed in


def test_successful_sign_ins_do_not_count(app: Flask, client: FlaskClient) -> None:
    for _ in range(9):
        assert sign_in(client).status_code == 401
    for _ in range(15):  # each in its own browser: a signed-in one skips the sign-in page
        assert sign_in(app.test_client(), "demo", "demo").status_code == 302
    assert sign_in(client).status_code == 401  # the tenth failure is still checked
    assert sign_in(client, "demo", "demo").status_code == 429


def test_a_refused_sign_in_keeps_the_form_and_what_was_typed(client: FlaskClient) -> None:
    for _ in range(10):
        sign_in(client)
    response = sign_in(client)
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    assert page.select_one('input[name="username"]')["value"] == "demo"
    assert alert(response) != BAD_LOGIN
    assert response.headers["Cache-Control"] == "no-store"


def _second_app(app: Flask, tmp_path: Path, **config: object) -> Flask:
    return create_app({**app.config, "TESTING": True, "SECRET_KEY": "test", **config})


def test_workers_on_one_database_share_the_counts(app: Flask, tmp_path: Path) -> None:
    # Two apps on one database file stand for two workers (see test_serving_sign_in for gunicorn).
    other = _second_app(app, tmp_path)
    try:
        first, second = app.test_client(), other.test_client()
        for i in range(10):
            assert sign_in(first if i % 2 else second).status_code == 401
        assert sign_in(first).status_code == 429 and sign_in(second).status_code == 429
    finally:
        close_engine(other)


@pytest.fixture
def redis_apps(
    app: Flask, tmp_path: Path, seeded_sqlite_template: Path
) -> Iterator[tuple[Flask, Flask, str, str]]:
    """Two apps on different databases sharing one Redis, with a fresh username and address."""
    if not redis_reachable():
        pytest.skip("no Redis at 127.0.0.1:6379")
    database = tmp_path / "host2.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    strict = {"REDIS_URL": REDIS_URL, "MAX_SIGN_IN_FAILURES_PER_ADDRESS": 10}
    first = _second_app(app, tmp_path, **strict)
    second = _second_app(app, tmp_path, **strict, DATABASE_URL=f"sqlite:///{database}")
    username, address = f"nobody-{secrets.token_hex(6)}", f"10.{secrets.randbelow(250)}.3.4"
    yield first, second, username, address
    client = redis.Redis.from_url(REDIS_URL)
    client.delete(
        *(
            f"webapp:sign-in:{throttle_key(kind, value)}"
            for kind, value in (("user", username), ("addr", address))
        )
    )
    client.close()
    close_engine(first)
    close_engine(second)


def test_with_redis_url_hosts_on_different_databases_share_the_counts(
    redis_apps: tuple[Flask, Flask, str, str],
) -> None:
    first, second, username, address = redis_apps
    for i in range(10):
        client = (first if i % 2 else second).test_client()
        assert sign_in(client, username, address=address).status_code == 401
    assert sign_in(second.test_client(), username, address="192.0.2.1").status_code == 429
    assert sign_in(first.test_client(), "nobody", address=address).status_code == 429
    with get_engine(first).connect() as connection:  # nothing was counted in the database
        assert (
            connection.execute(
                sa.select(sa.func.count()).select_from(sign_in_failures)
            ).scalar_one()
            == 0
        )
