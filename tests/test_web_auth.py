"""Signing in and out: labelled form, CSRF on every form, no user enumeration, safe redirects,
sign-out that ends the session on the server."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from webapp.store.app_db import get_engine
from webapp.store.users import authenticate, create_api_token
from webapp.web.auth import BAD_LOGIN


def soup(response: TestResponse) -> BeautifulSoup:
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def csrf_from(client: FlaskClient, path: str = "/login") -> str:
    field = soup(client.get(path)).select_one('input[name="csrf_token"]')
    assert field is not None
    return str(field["value"])


def login(
    client: FlaskClient, username: str = "demo", password: str = "demo", **extra: str
) -> TestResponse:
    data = {"username": username, "password": password, "csrf_token": csrf_from(client), **extra}
    return client.post("/login", data=data)


def test_the_sign_in_form_is_labelled_and_carries_a_csrf_token(client: FlaskClient) -> None:
    page = soup(client.get("/login"))
    labels = {str(label.get_text()): str(label["for"]) for label in page.select("label")}
    assert page.select_one(f"#{labels['Username']}")["name"] == "username"
    assert page.select_one(f"#{labels['Password']}")["type"] == "password"
    button = page.select_one('button[type="submit"]')
    assert button is not None and button.get_text() == "Sign in"
    assert page.select_one('form input[name="csrf_token"]')["value"]


def test_signing_in_sets_a_protected_session_cookie(client: FlaskClient) -> None:
    response = login(client)
    assert response.status_code == 302 and response.location == "/"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert client.get("/accounts").status_code == 200


@pytest.mark.parametrize(
    ("username", "password"),
    [("demo", "wrong"), ("nobody", "demo"), ("", ""), ("demo", "x" * 2000), ("<script>", "demo")],
    ids=["wrong-password", "unknown-user", "empty", "huge-password", "markup-username"],
)
def test_a_failed_sign_in_says_the_same_thing_whatever_was_wrong(
    client: FlaskClient, username: str, password: str
) -> None:
    response = login(client, username, password)
    assert response.status_code == 401
    page = soup(response)
    assert page.select_one('[role="alert"]').get_text() == BAD_LOGIN
    assert "<script>" not in response.get_data(as_text=True)
    assert client.get("/accounts").status_code == 302


@pytest.mark.parametrize(
    "token",
    [None, "", "forged", "ImFiYyI.Zx.abc"],
    ids=["missing", "empty", "forged", "signed-looking"],
)
def test_sign_in_without_a_valid_csrf_token_is_refused(
    client: FlaskClient, token: str | None
) -> None:
    client.get("/login")
    data = {"username": "demo", "password": "demo"}
    if token is not None:
        data["csrf_token"] = token
    response = client.post("/login", data=data)
    assert response.status_code == 400
    assert "expired" in soup(response).get_text()
    assert client.get("/accounts").status_code == 302


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/chat/abc",
        "/accounts",
        "/accounts/AtVPgKt5aF8ZFKGcCMHn2zgT",
        "/portfolio",
        "/markets/AAPL",
        "/favicon/irs.gov",
        "/chat/abc/messages/def/events",
    ],
    ids=["home", "chat", "accounts", "account", "portfolio", "market", "favicon", "events"],
)
def test_pages_send_strangers_to_the_sign_in_page(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response.location.startswith("/login?next=")


def test_htmx_requests_of_strangers_are_redirected_by_htmx(client: FlaskClient) -> None:
    response = client.post(
        "/chat/abc/messages",
        headers={"HX-Request": "true"},
        data={"csrf_token": csrf_from(client), "message": "hi"},
    )
    assert response.status_code == 401
    assert response.headers["HX-Redirect"] == "/login"


@pytest.mark.parametrize(
    ("next_url", "landing"),
    [
        ("/accounts", "/accounts"),
        ("/portfolio?x=1", "/portfolio?x=1"),
        ("//evil.com/", "/"),
        ("https://evil.com/", "/"),
        ("/\\evil.com", "/"),
        ("javascript:alert(1)", "/"),
        ("", "/"),
        ("/%0d%0aSet-Cookie:x=1", "/%0d%0aSet-Cookie:x=1"),
    ],
    ids=[
        "page",
        "query",
        "protocol-relative",
        "absolute",
        "backslash",
        "javascript",
        "empty",
        "encoded-crlf-stays-a-path",
    ],
)
def test_sign_in_returns_only_to_pages_of_this_site(
    client: FlaskClient, next_url: str, landing: str
) -> None:
    response = login(client, next=next_url)
    assert response.status_code == 302 and response.location == landing


def test_a_signed_in_user_skips_the_sign_in_page(client: FlaskClient) -> None:
    login(client)
    response = client.get("/login?next=/portfolio")
    assert response.status_code == 302 and response.location == "/portfolio"


def test_sign_out_needs_the_csrf_token_and_ends_the_session(client: FlaskClient) -> None:
    login(client)
    assert client.post("/logout").status_code == 400
    assert client.get("/accounts").status_code == 200
    response = client.post("/logout", data={"csrf_token": csrf_from(client, "/accounts")})
    assert response.status_code == 302 and response.location == "/login"
    assert client.get("/accounts").status_code == 302


def _copy_of(app: Flask, client: FlaskClient) -> FlaskClient:
    """Return another browser holding a copy of `client`'s session cookie."""
    cookie = client.get_cookie("session")
    assert cookie is not None
    thief = app.test_client()
    thief.set_cookie("session", cookie.value)
    return thief


def sign_out(client: FlaskClient) -> TestResponse:
    return client.post("/logout", data={"csrf_token": csrf_from(client, "/accounts")})


def test_sign_out_ends_the_session_on_the_server_so_a_copied_cookie_stops_working(
    app: Flask, client: FlaskClient
) -> None:
    login(client)
    thief = _copy_of(app, client)
    assert thief.get("/accounts").status_code == 200
    assert sign_out(client).status_code == 302
    assert thief.get("/accounts").status_code == 302
    assert thief.get("/api/chat/sessions").status_code == 401
    assert thief.get("/login").status_code == 200  # the sign-in page, not a redirect past it


def test_sign_out_ends_every_session_of_the_user_and_only_that_user(
    app: Flask, client: FlaskClient
) -> None:
    login(client)
    laptop = _copy_of(app, client)  # stands for a second sign-in: same user, same version
    other = app.test_client()
    login(other, "alex")
    sign_out(client)
    assert laptop.get("/accounts").status_code == 302
    assert other.get("/accounts").status_code == 200


def test_signing_in_again_after_sign_out_works_and_old_cookies_stay_ended(
    app: Flask, client: FlaskClient
) -> None:
    login(client)
    old = _copy_of(app, client)
    sign_out(client)
    assert login(client).status_code == 302
    assert client.get("/accounts").status_code == 200
    assert old.get("/accounts").status_code == 302


def test_a_session_signed_in_before_session_versions_works_until_sign_out(
    app: Flask, client: FlaskClient
) -> None:
    # A cookie made by the code before this change names only the user id.
    demo = authenticate(get_engine(app), "demo", "demo")
    assert demo is not None
    with client.session_transaction() as session:
        session["user_id"] = demo.id
    assert client.get("/accounts").status_code == 200
    thief = _copy_of(app, client)
    sign_out(client)
    assert thief.get("/accounts").status_code == 302


def test_oversize_bodies_are_refused(client: FlaskClient) -> None:
    response = client.post("/login", data={"username": "demo", "password": "x" * 200_000})
    assert response.status_code == 413


def test_the_api_with_a_bearer_token_needs_no_csrf_token(app: Flask, client: FlaskClient) -> None:
    token = create_api_token(get_engine(app), "demo")
    response = client.post(
        "/api/chat/sessions", json={"title": "t"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 201


@pytest.mark.parametrize(
    "header",
    [None, "Bearer wat_" + "x" * 40, "Basic abc"],
    ids=["cookie-only", "bad-bearer", "other-scheme"],
)
def test_the_api_with_only_a_session_cookie_needs_the_csrf_token(
    client: FlaskClient, header: str | None
) -> None:
    login(client)
    headers = {"Authorization": header} if header else {}
    response = client.post("/api/chat/sessions", json={"title": "t"}, headers=headers)
    assert response.status_code == 400
    token = csrf_from(client, "/accounts")
    response = client.post(
        "/api/chat/sessions", json={"title": "t"}, headers={**headers, "X-CSRFToken": token}
    )
    assert response.status_code == 201


def test_a_bearer_token_does_not_switch_off_csrf_on_browser_forms(
    app: Flask, client: FlaskClient
) -> None:
    login(client)
    token = create_api_token(get_engine(app), "demo")
    response = client.post("/chat", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 400  # the form route wants its CSRF token all the same
    response = client.post("/logout", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 400


def test_pages_carry_a_strict_content_security_policy(client: FlaskClient) -> None:
    policy = client.get("/login").headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy


def _token_lookups(app: Flask) -> list[str]:
    """Record each statement that reads `api_tokens` on the app's engine from now on."""
    seen: list[str] = []

    def before(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if "api_tokens" in statement:
            seen.append(statement)

    sa.event.listen(get_engine(app), "before_cursor_execute", before)
    return seen


def test_an_api_clients_token_is_looked_up_once_not_per_request(
    app: Flask, client: FlaskClient
) -> None:
    with app.app_context():
        token = create_api_token(get_engine(), "demo")
    lookups = _token_lookups(app)
    bearer = {"Authorization": f"Bearer {token}"}
    for _ in range(3):
        assert client.get("/api/chat/sessions", headers=bearer).status_code == 200
    assert len(lookups) == 1
    other = {"Authorization": f"Bearer {token[:-1]}{'A' if token[-1] != 'A' else 'B'}"}
    assert client.get("/api/chat/sessions", headers=other).status_code == 401


def test_a_token_unknown_once_is_not_remembered_as_unknown(app: Flask, client: FlaskClient) -> None:
    # A miss is never kept: a client that asked before its token existed is served once it does.
    with app.app_context():
        token = create_api_token(get_engine(), "alex")
    bearer = {"Authorization": f"Bearer {token}"}
    wrong = {"Authorization": f"Bearer {token[:-2]}zz"}
    lookups = _token_lookups(app)
    assert client.get("/api/chat/sessions", headers=wrong).status_code == 401
    assert client.get("/api/chat/sessions", headers=wrong).status_code == 401
    assert len(lookups) == 2
    assert client.get("/api/chat/sessions", headers=bearer).status_code == 200
