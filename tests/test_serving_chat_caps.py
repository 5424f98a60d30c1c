"""Issue 18's "unbounded per user", repeated through the Procfile's gunicorn (two workers):
a burst of new chats stops at the per-user rate, and thousands of chats come a page at a time."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.support.gunicorn import gunicorn
from tests.test_serving import _client, _env, _migrate, _sqlite, _token
from webapp.chat.tables import chat_sessions
from webapp.store.engine import create_store_engine
from webapp.store.users import authenticate


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_a_burst_of_new_chats_stops_at_the_rate_across_both_workers(
    tmp_path: Path, seeded_sqlite_template: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "postgres":
        url = request.getfixturevalue("pg_url")
        _migrate(url)
    else:
        url = _sqlite(tmp_path, seeded_sqlite_template)
    env = _env(url, MAX_NEW_CHATS_PER_MINUTE="5")
    with gunicorn(env, tmp_path) as server, _client(server, _token(url)) as client:

        def create(_: int) -> httpx.Response:
            return client.post("/api/chat/sessions", json={})

        with ThreadPoolExecutor(max_workers=16) as pool:
            made = list(pool.map(create, range(40)))
        listed = client.get("/api/chat/sessions").json()
        log = server.log_text()
    assert sorted(r.status_code for r in made) == [201] * 5 + [429] * 35
    for refused in (r for r in made if r.status_code == 429):
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert refused.headers["content-type"] == "application/json"
        assert refused.json()["error"]
    assert len(listed["sessions"]) == 5 and listed["next"] is None
    assert "Traceback" not in log


def test_three_thousand_chats_come_fifty_at_a_time(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    engine = create_store_engine(url)
    try:
        user = authenticate(engine, "demo", "demo")
        assert user is not None
        at = datetime(2026, 1, 1, tzinfo=UTC)
        rows = [
            {
                "id": uuid.uuid4().hex,
                "user_id": user.id,
                "title": f"chat {n}",
                "created_at": at,
                "updated_at": at + timedelta(seconds=n // 3),  # ties, three by three
            }
            for n in range(3001)
        ]
        with engine.begin() as conn:
            conn.execute(chat_sessions.insert(), rows)
    finally:
        engine.dispose()
    with gunicorn(_env(url), tmp_path) as server, _client(server, _token(url)) as client:
        first = client.get("/api/chat/sessions")
        seen: list[str] = []
        next_url: str | None = "/api/chat/sessions?limit=200"
        pages = 0
        while next_url is not None:
            body = client.get(next_url).json()
            seen += [s["id"] for s in body["sessions"]]
            next_url = body["next"]
            pages += 1
    assert first.status_code == 200 and len(first.json()["sessions"]) == 50
    assert first.json()["next"].startswith("/api/chat/sessions?")
    assert pages == 16 and len(seen) == len(set(seen)) == 3001
    assert set(seen) == {r["id"] for r in rows}
