"""Sign-in throttling under the Procfile's gunicorn: both workers share the counts.

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


def _sign_in(server: Server, browser: tuple[str, str], password: str) -> httpx.Response:
    cookie, token = browser
    # A new client each time: a fresh connection, taken by whichever worker is running.
    with httpx.Client(base_url=server.url, timeout=30) as client:
        return client.post(
            "/login",
            headers={"Cookie": cookie},
            data={"username": "demo", "password": password, "csrf_token": token},
        )


def test_the_eleventh_failed_sign_in_is_refused_by_both_workers_with_retry_after(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    env = {
        "DATABASE_URL": f"sqlite:///{database}",
        "SECRET_KEY": "test",
        "ANTHROPIC_API_KEY": "",
        "REDIS_URL": "",
        "WEB_CONCURRENCY": "2",
    }
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
