"""Hostile inputs through the Procfile's gunicorn: each is a clear 4xx (JSON under /api/) or
is drawn plainly; none is a 500, none is cut short and processed anyway."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import pytest

from tests.support.gunicorn import Server, gunicorn
from tests.test_serving import _ask, _client, _env, _stream, _token
from tests.test_serving_limits import _signed_in_browser

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory, seeded_sqlite_template: Path) -> Path:
    folder = tmp_path_factory.mktemp("inputs")
    shutil.copyfile(seeded_sqlite_template, folder / "webapp.sqlite")
    return folder / "webapp.sqlite"


@pytest.fixture(scope="module")
def server(database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = _env(f"sqlite:///{database}", MAX_TURNS_PER_USER="50", MAX_STREAMS_PER_USER="100")
    with gunicorn(env, tmp_path_factory.mktemp("logs")) as running:
        yield running


@pytest.fixture(scope="module")
def api(server: Server, database: Path) -> Iterator[httpx.Client]:
    with _client(server, _token(f"sqlite:///{database}")) as client:
        yield client


def _is_json_error(response: httpx.Response, status: int) -> bool:
    return (
        response.status_code == status
        and response.headers["content-type"] == "application/json"
        and bool(response.json()["error"])
    )


@contextmanager
def _accounts_changed(database: Path, assignment: str) -> Iterator[None]:
    """Set `assignment` on every Plaid account for the block, then put the rows back."""
    with closing(sqlite3.connect(database)) as connection, connection:
        kept = connection.execute(
            "SELECT id, current_balance, synced_at FROM plaid_accounts"
        ).fetchall()
        connection.execute(f"UPDATE plaid_accounts SET {assignment}")
    try:
        yield
    finally:
        with closing(sqlite3.connect(database)) as connection, connection:
            connection.executemany(
                "UPDATE plaid_accounts SET current_balance = ?, synced_at = ? WHERE id = ?",
                [(balance, synced, row_id) for row_id, balance, synced in kept],
            )


def test_a_last_event_id_of_4301_digits_is_a_400(api: httpx.Client) -> None:
    _, stream_url = _ask(api)
    response = api.get(stream_url, headers={"Last-Event-ID": "9" * 4301})
    assert _is_json_error(response, 400)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/chat/sessions"),
        ("PATCH", "/api/chat/sessions/{sid}"),
        ("POST", "/api/chat/sessions/{sid}/messages"),
    ],
)
@pytest.mark.parametrize("body", ["[" * 1000, '{"a":' * 1000, "[" * 100_000])
def test_json_nested_past_any_sense_is_a_400(
    api: httpx.Client, method: str, path: str, body: str
) -> None:
    session_id = api.post("/api/chat/sessions", json={}).json()["id"]
    response = api.request(method, path.format(sid=session_id), content=body, headers=JSON)
    # A body past the size limit is a 413 before it is parsed at all.
    assert _is_json_error(response, 413 if len(body) > 65536 else 400)


def test_a_chunked_body_over_the_limit_is_a_413_not_cut_and_processed(
    api: httpx.Client,
) -> None:
    title = "x" * 40
    body = json.dumps({"title": title, "pad": "y" * 70_000}).encode()

    def chunks() -> Iterator[bytes]:  # no content-length: sent chunked
        for i in range(0, len(body), 4096):
            yield body[i : i + 4096]

    before = len(api.get("/api/chat/sessions").json()["sessions"])
    response = api.post("/api/chat/sessions", content=chunks(), headers=JSON)
    assert _is_json_error(response, 413)
    assert len(api.get("/api/chat/sessions").json()["sessions"]) == before


@pytest.mark.parametrize("title", ["\u200b", "\u00ad", "\ufeff", "\u200b\u00ad\ufeff \u2060"])
def test_a_title_of_invisible_characters_is_refused_as_blank(api: httpx.Client, title: str) -> None:
    created = api.post("/api/chat/sessions", json={"title": title})
    session_id = api.post("/api/chat/sessions", json={}).json()["id"]
    renamed = api.patch(f"/api/chat/sessions/{session_id}", json={"title": title})
    assert _is_json_error(created, 400) and _is_json_error(renamed, 400)
    # A visible title that joins or hyphenates with them is still a title.
    kept = api.patch(f"/api/chat/sessions/{session_id}", json={"title": f"Card\u00addebts{title}"})
    assert kept.status_code == 200


def test_a_csrf_failure_under_the_api_is_json(server: Server) -> None:
    # A signed-in browser's cookie, no bearer token and no CSRF token: refused, as JSON.
    with _signed_in_browser(server) as browser:
        response = browser.post("/api/chat/sessions", json={})
    assert _is_json_error(response, 400)


def test_a_huge_balance_in_the_database_is_drawn_not_a_500(
    server: Server, api: httpx.Client, database: Path
) -> None:
    with _accounts_changed(database, "current_balance = '1e1000000'"):
        _, stream_url = _ask(api, "What is my Chase checking balance?")
        events = _stream(api, stream_url)
        assert json.loads(events[-1].data) == {"status": "complete"}
        with _signed_in_browser(server) as browser:
            pages = [browser.get(path, follow_redirects=True) for path in ("/accounts", "/")]
        assert [page.status_code for page in pages] == [200, 200]


def test_a_sync_time_at_the_edge_of_the_calendar_is_no_tool_error(
    server: Server, api: httpx.Client, database: Path
) -> None:
    with _accounts_changed(database, "synced_at = '0001-01-01T00:00:00+14:00'"):
        _, stream_url = _ask(api, "What is my Chase checking balance?")
        events = _stream(api, stream_url)
        with _signed_in_browser(server) as browser:
            pages = [browser.get(path, follow_redirects=True) for path in ("/accounts", "/")]
    message = next(e for e in events if e.event == "message")
    text = json.dumps(json.loads(message.data))
    assert "4,820.33" in text and "couldn" not in text
    assert [page.status_code for page in pages] == [200, 200]
