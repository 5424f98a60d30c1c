"""A turn's life across workers and hosts, under the Procfile's gunicorn (issue 18, item 8).

Writes wait out a locked database; a cancel or a deadline met in one process ends the turn's
model stream and sandbox in the process that runs it; a dead worker's streams stop counting
when its lease lapses; a reload closes old workers' streams at once and hands their turns on
from the latest checkpoint.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import httpx
from bs4 import BeautifulSoup

from tests.support.gunicorn import Server, gunicorn
from tests.test_serving import _client, _env, _sqlite, _token

LOCK_SECONDS = 1.5  # longer than SQLite's own busy wait, far shorter than a write's retries


def _signed_in(server: Server, username: str) -> httpx.Client:
    """Return a browser-like client signed in as `username` (password demo)."""
    client = httpx.Client(base_url=server.url, timeout=30)
    page = client.get("/login")
    token = BeautifulSoup(page.text, "html.parser").select_one('input[name="csrf_token"]')
    assert token is not None
    signed = client.post(
        "/login",
        data={"username": username, "password": "demo", "csrf_token": str(token["value"])},
    )
    assert signed.status_code in (302, 303), signed.text
    return client


def _csrf(client: httpx.Client, path: str) -> str:
    token = BeautifulSoup(client.get(path).text, "html.parser").select_one(
        'input[name="csrf_token"]'
    )
    assert token is not None
    return str(token["value"])


def test_new_chats_wait_out_a_write_lock_instead_of_failing(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    with (
        gunicorn(_env(url), tmp_path) as server,
        _client(server, _token(url)) as api,
        closing(_signed_in(server, "demo")) as demo,
        closing(_signed_in(server, "alex")) as alex,
    ):
        token = _csrf(alex, "/accounts")
        # Another program holds the file's write lock past SQLite's own short busy wait.
        blocker = sqlite3.connect(url.removeprefix("sqlite:///"), check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")
        release = threading.Timer(LOCK_SECONDS, blocker.rollback)
        release.start()
        try:
            created = api.post("/api/chat/sessions", json={})
            opened = demo.get("/")  # no chat yet: the page makes one
            new = alex.post("/chat", data={"csrf_token": token})
        finally:
            release.join()
            blocker.close()
        listed = api.get("/api/chat/sessions").json()["sessions"]
    assert created.status_code == 201, created.text
    assert opened.status_code == 302 and "/chat/" in opened.headers["location"]
    assert new.status_code in (302, 303) and "/chat/" in new.headers["location"]
    assert created.json()["id"] in {s["id"] for s in listed}
    assert "Traceback" not in server.log_text()
