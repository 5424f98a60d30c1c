"""Behind an HTTPS proxy (FORWARDED_ALLOW_IPS): the client's address and scheme come from the
trusted proxy alone; over HTTPS the session cookie is Secure and HSTS is sent; plain HTTP on
localhost keeps working."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from webapp import create_app
from webapp.store.app_db import close_engine
from webapp.web.proxy import is_trusted, parse_allowed

PROXY = "10.0.0.5"


@pytest.fixture
def proxied(app: Flask) -> Iterator[Flask]:
    """Return an app on the same database that trusts the proxy at 10.0.0.5."""
    # An address's own limit low enough to reach here (its default is far above an office's).
    behind = create_app(
        {**app.config, "FORWARDED_ALLOW_IPS": PROXY, "MAX_SIGN_IN_FAILURES_PER_ADDRESS": 10}
    )
    yield behind
    close_engine(behind)


def post_login(
    client: FlaskClient,
    password: str = "wrong",
    *,
    username: str = "demo",
    peer: str = PROXY,
    headers: dict[str, str] | None = None,
    https: bool = False,
) -> TestResponse:
    base = "https://localhost" if https else "http://localhost"
    page = BeautifulSoup(
        client.get("/login", environ_base={"REMOTE_ADDR": peer}, headers=headers).get_data(
            as_text=True
        ),
        "html.parser",
    )
    token = str(page.select_one('input[name="csrf_token"]')["value"])
    # A browser sends its page as Referer; Flask-WTF checks it on HTTPS.
    more = {"Referer": f"{base}/login", **(headers or {})}
    return client.post(
        "/login",
        environ_base={"REMOTE_ADDR": peer},
        headers=more,
        data={"username": username, "password": password, "csrf_token": token},
    )


def test_a_trusted_proxy_names_the_client_address_that_sign_in_counts(proxied: Flask) -> None:
    client = proxied.test_client()
    for i in range(10):
        response = post_login(
            client, username=f"nobody{i}", headers={"X-Forwarded-For": "203.0.113.7"}
        )
        assert response.status_code == 401
    refused = post_login(client, username="alex", headers={"X-Forwarded-For": "203.0.113.7"})
    assert refused.status_code == 429
    other = post_login(client, username="alex", headers={"X-Forwarded-For": "203.0.113.8"})
    assert other.status_code == 401  # another client behind the same proxy


def test_a_peer_that_is_not_the_proxy_cannot_choose_its_address(proxied: Flask) -> None:
    client = proxied.test_client()
    for i in range(10):
        response = post_login(
            client,
            username=f"nobody{i}",
            peer="198.51.100.20",
            headers={"X-Forwarded-For": f"203.0.113.{i}"},
        )
        assert response.status_code == 401
    refused = post_login(
        client, username="alex", peer="198.51.100.20", headers={"X-Forwarded-For": "203.0.113.99"}
    )
    assert refused.status_code == 429  # counted by its own address all along


def test_https_through_the_proxy_marks_the_cookie_secure_and_sends_hsts(proxied: Flask) -> None:
    client = proxied.test_client()
    response = post_login(client, "demo", headers={"X-Forwarded-Proto": "https"}, https=True)
    assert response.status_code == 302
    assert "; Secure" in response.headers["Set-Cookie"]
    assert response.headers["Strict-Transport-Security"] == "max-age=31536000"
    page = client.get(
        "/login", environ_base={"REMOTE_ADDR": PROXY}, headers={"X-Forwarded-Proto": "https"}
    )
    assert "Strict-Transport-Security" in page.headers


def test_an_https_claim_from_another_peer_is_ignored(proxied: Flask) -> None:
    client = proxied.test_client()
    response = post_login(
        client, "demo", peer="198.51.100.20", headers={"X-Forwarded-Proto": "https"}
    )
    assert response.status_code == 302
    assert "Secure" not in response.headers["Set-Cookie"]
    assert "Strict-Transport-Security" not in response.headers


def test_plain_http_on_localhost_keeps_working(client: FlaskClient) -> None:
    response = post_login(
        client,
        "demo",
        peer="127.0.0.1",
        headers={"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"},
    )
    assert response.status_code == 302
    assert "Secure" not in response.headers["Set-Cookie"]
    assert "Strict-Transport-Security" not in response.headers
    assert client.get("/accounts").status_code == 200


def test_an_https_request_without_a_proxy_setting_still_gets_a_secure_cookie(
    client: FlaskClient,
) -> None:
    # As when gunicorn sets the scheme itself, for a proxy on its own host (its default).
    page = client.get("/login", base_url="https://localhost")
    assert page.headers["Strict-Transport-Security"] == "max-age=31536000"
    token = BeautifulSoup(page.get_data(as_text=True), "html.parser").select_one(
        'input[name="csrf_token"]'
    )["value"]
    response = client.post(
        "/login",
        base_url="https://localhost",
        headers={"Referer": "https://localhost/login"},
        data={"username": "demo", "password": "demo", "csrf_token": token},
    )
    assert response.status_code == 302
    assert "; Secure" in response.headers["Set-Cookie"]


@pytest.mark.parametrize(
    "value",
    ["proxy.example", "10.0.0.5, nonsense", "10.0.0.300"],
    ids=["host-name", "one-bad-item", "bad-address"],
)
def test_the_setting_must_name_addresses_or_networks(
    app: Flask, tmp_path: Path, value: str
) -> None:
    with pytest.raises(ValueError, match="FORWARDED_ALLOW_IPS"):
        create_app({**app.config, "FORWARDED_ALLOW_IPS": value})


@pytest.mark.parametrize(
    ("value", "peer", "trusted"),
    [
        ("10.0.0.5", "10.0.0.5", True),
        ("10.0.0.5", "10.0.0.6", False),
        ("10.0.0.0/8, ::1", "10.200.1.1", True),
        ("10.0.0.0/8, ::1", "::1", True),
        ("10.0.0.0/8", "192.168.0.1", False),
        ("*", "198.51.100.20", True),
        ("10.0.0.5", "", True),
    ],
    ids=["address", "other-address", "network", "ipv6", "outside", "any", "unix-socket"],
)
def test_which_peers_may_set_forwarded_headers(value: str, peer: str, trusted: bool) -> None:
    assert is_trusted(peer, parse_allowed(value)) is trusted


def test_networks_are_parsed_loosely_but_strictly_typed() -> None:
    assert parse_allowed(" 10.0.0.1/8 ,, ::1 ") == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    )
    assert parse_allowed("10.0.0.5,*") is None
