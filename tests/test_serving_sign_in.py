"""Sign-in under the Procfile's gunicorn: both workers share the throttle's counts; guessing a
user's password never locks them out of a browser they signed in with before, and an office
behind one address is not refused for its people's few failures; with FORWARDED_ALLOW_IPS
unset no peer, loopback included, can claim HTTPS.

One worker at a time is paused (SIGSTOP), so the other is sure to take each fresh connection:
each worker sees only half of the failures itself, and still refuses the eleventh attempt.
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from bs4 import BeautifulSoup

from tests.support.gunicorn import Server, gunicorn
from tests.support.waiting import wait_for


def _state(pid: int) -> str:
    # /proc/<pid>/stat: "pid (comm) state ..."; the command may hold spaces, the state follows ")".
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@contextmanager
def paused(pid: int) -> Iterator[None]:
    """Stop a worker until the block ends: it accepts no connection meanwhile."""
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_for(lambda: _state(pid) in ("T", "t"), "the worker did not stop")
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def _workers(server: Server) -> list[int]:
    return wait_for(
        lambda: workers if len(workers := server.workers()) >= 2 else None,
        "gunicorn did not start two workers",
    )


def _browser(server: Server) -> tuple[str, str]:
    """Return a session cookie and its CSRF token, as one browser's sign-in page has them."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/login")
        token = BeautifulSoup(page.text, "html.parser").select_one('input[name="csrf_token"]')
        assert token is not None
        return f"session={client.cookies['session']}", str(token["value"])


def _sign_in(
    server: Server, browser: tuple[str, str], password: str, username: str = "demo"
) -> httpx.Response:
    cookie, token = browser
    # A new client each time: a fresh connection, taken by whichever worker is running.
    with httpx.Client(base_url=server.url, timeout=30) as client:
        return client.post(
            "/login",
            headers={"Cookie": cookie},
            data={"username": username, "password": password, "csrf_token": token},
        )


def _env(tmp_path: Path, seeded_sqlite_template: Path) -> dict[str, str]:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    return {
        "DATABASE_URL": f"sqlite:///{database}",
        "SECRET_KEY": "test",
        "ANTHROPIC_API_KEY": "",
        "REDIS_URL": "",
        "WEB_CONCURRENCY": "2",
    }


def test_the_eleventh_failed_sign_in_is_refused_by_both_workers_with_retry_after(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    env = _env(tmp_path, seeded_sqlite_template)
    with gunicorn(env, tmp_path) as server:
        first, second = _workers(server)
        browser = _browser(server)
        statuses = []
        for stopped in (second, first):
            with paused(stopped):
                statuses += [_sign_in(server, browser, "wrong").status_code for _ in range(5)]
        assert statuses == [401] * 10  # five failures seen by each worker

        with paused(second):
            refused = _sign_in(server, browser, "wrong")
        with paused(first):
            right_password = _sign_in(server, browser, "demo")
        assert server.workers() == [first, second]  # no worker was replaced meanwhile
    for response in (refused, right_password):
        assert response.status_code == 429
        assert 1 <= int(response.headers["Retry-After"]) <= 900
        alert = BeautifulSoup(response.text, "html.parser").select_one('[role="alert"]')
        assert alert is not None and alert.get_text().startswith("Too many failed sign-ins.")
        assert "session=" not in response.headers.get("Set-Cookie", "")
    assert "Traceback" not in server.log_text()


def _signed_in_browser(server: Server, username: str) -> httpx.Client:
    """Return a browser (a client keeping its cookies) that has signed in as `username`."""
    client = httpx.Client(base_url=server.url, timeout=30)
    page = client.get("/login")
    token = BeautifulSoup(page.text, "html.parser").select_one('input[name="csrf_token"]')
    assert token is not None
    data = {"username": username, "password": "demo", "csrf_token": str(token["value"])}
    assert client.post("/login", data=data).status_code == 302
    return client


def _sign_in_again(browser: httpx.Client, password: str) -> httpx.Response:
    """Sign in once more from a browser whose session has ended (its other cookies kept)."""
    browser.cookies.delete("session")
    page = browser.get("/login")
    token = BeautifulSoup(page.text, "html.parser").select_one('input[name="csrf_token"]')
    assert token is not None
    data = {"username": "demo", "password": password, "csrf_token": str(token["value"])}
    return browser.post("/login", data=data)


def test_guessing_a_password_never_locks_its_owner_out_of_their_own_browser(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    with gunicorn(_env(tmp_path, seeded_sqlite_template), tmp_path) as server:
        victim = _signed_in_browser(server, "demo")
        # The attacker: ten wrong passwords for demo, each from a fresh browser.
        attacks = [_sign_in(server, _browser(server), "wrong").status_code for _ in range(10)]
        assert attacks == [401] * 10
        refused = _sign_in(server, _browser(server), "demo")  # even with the right password
        assert refused.status_code == 429 and 1 <= int(refused.headers["Retry-After"]) <= 900
        # The owner, from the browser they signed in with before: a typo, then in.
        assert _sign_in_again(victim, "wrong").status_code == 401
        welcomed = _sign_in_again(victim, "demo")
        assert welcomed.status_code == 302
        assert victim.get("/accounts").status_code == 200
        victim.close()
    assert "Traceback" not in server.log_text()


def test_an_offices_failures_from_one_address_refuse_no_one(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    # Every request here comes from 127.0.0.1: thirty people behind one address, each once.
    with gunicorn(_env(tmp_path, seeded_sqlite_template), tmp_path) as server:
        statuses = [
            _sign_in(server, _browser(server), "wrong", f"colleague{i}").status_code
            for i in range(30)
        ]
        assert statuses == [401] * 30
        assert _sign_in(server, _browser(server), "demo", "alex").status_code == 302


def _set_cookies(response: httpx.Response) -> list[str]:
    return response.headers.get_list("set-cookie")


@pytest.mark.parametrize("trusted", ["unset", "127.0.0.1"])
def test_without_forwarded_allow_ips_a_loopback_peer_cannot_claim_https(
    tmp_path: Path, seeded_sqlite_template: Path, monkeypatch: pytest.MonkeyPatch, trusted: str
) -> None:
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    env = _env(tmp_path, seeded_sqlite_template)
    if trusted != "unset":
        env["FORWARDED_ALLOW_IPS"] = trusted
    https = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}
    with (
        gunicorn(env, tmp_path) as server,
        httpx.Client(base_url=server.url, headers=https, timeout=30) as client,
    ):
        page = client.get("/login")
        if trusted != "unset":
            # The control: a named proxy's word is taken, and the test sees it.
            assert page.headers["Strict-Transport-Security"] == "max-age=31536000"
            assert all("; Secure" in cookie for cookie in _set_cookies(page))
            return
        token = BeautifulSoup(page.text, "html.parser").select_one('input[name="csrf_token"]')
        assert token is not None
        data = {"username": "demo", "password": "demo", "csrf_token": str(token["value"])}
        signed_in = client.post("/login", data=data)
    assert signed_in.status_code == 302
    cookies = _set_cookies(page) + _set_cookies(signed_in)
    assert len(cookies) >= 2  # the session's, and the device cookie
    assert "Strict-Transport-Security" not in page.headers
    assert "Strict-Transport-Security" not in signed_in.headers
    assert not [cookie for cookie in cookies if "secure" in cookie.lower()]
