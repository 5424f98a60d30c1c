"""The API's lists a page at a time, and the per-user caps on chats, on SQLite and PostgreSQL.

Each test has a user of its own, so one database per backend serves the module.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from flask import Flask

from tests.support.apps import ApiClient, make_app
from tests.support.plans import query_plan
from tests.test_web_chat import csrf, soup
from webapp.chat.conversations import session_messages
from webapp.chat.pages import MAX_PAGE, message_query, session_query
from webapp.chat.tables import ai_chat_logs, chat_sessions
from webapp.store.app_db import close_engine, get_engine
from webapp.store.users import create_api_token, create_user

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def backend_app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Flask]:
    folder: Path = tmp_path_factory.mktemp("pages")
    config: dict[str, Any] = {}
    if request.param == "postgres":
        config["DATABASE_URL"] = request.getfixturevalue("pg_url")
    app = make_app(folder, **config)
    yield app
    close_engine(app)


@pytest.fixture
def person(backend_app: Flask) -> Iterator[tuple[ApiClient, int]]:
    """A fresh user of the module's app, its API client and id; the caps back to defaults."""
    engine = get_engine(backend_app)
    name = f"p{uuid.uuid4().hex[:12]}"
    user = create_user(engine, name, "a long password")
    saved = {k: backend_app.config[k] for k in ("MAX_CHATS_PER_USER", "MAX_NEW_CHATS_PER_MINUTE")}
    yield ApiClient(backend_app, create_api_token(engine, name)), user.id
    backend_app.config.update(saved)


def _chats(app: Flask, user_id: int, times: list[datetime]) -> list[str]:
    """Store chats last used at `times` straight in the table; return their ids."""
    ids = [uuid.uuid4().hex for _ in times]
    rows = [
        {"id": i, "user_id": user_id, "title": f"chat {n}", "created_at": t, "updated_at": t}
        for n, (i, t) in enumerate(zip(ids, times, strict=True))
    ]
    with get_engine(app).begin() as conn:
        conn.execute(chat_sessions.insert(), rows)
    return ids


def _messages(app: Flask, user_id: int, session_id: str, times: list[datetime]) -> None:
    """Store a question and its answer at each of `times`, both at the same instant."""
    rows = [
        {
            "id": uuid.uuid4().hex,
            "session_id": session_id,
            "user_id": user_id,
            "role": role,
            "content": f"{role} {n}",
            "status": "complete",
            "created_at": t,
            "completed_at": t,
        }
        for n, t in enumerate(times)
        for role in ("assistant", "user")
    ]
    with get_engine(app).begin() as conn:
        conn.execute(ai_chat_logs.insert(), rows)


def _walk(http: httpx.Client, url: str) -> list[dict[str, Any]]:
    """Follow `next` from `url` to the oldest page; return every page's body."""
    pages: list[dict[str, Any]] = []
    next_url: str | None = url
    while next_url is not None:
        response = http.get(next_url)
        assert response.status_code == 200, response.text
        pages.append(response.json())
        next_url = pages[-1]["next"]
        assert len(pages) < 100
    return pages


def test_chats_come_newest_first_a_page_at_a_time_with_ties_broken_by_id(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, user_id = person
    # Seven chats, four of them last used at one instant: the cursor must not skip or repeat.
    times = [AT, AT + timedelta(seconds=1)] + [AT + timedelta(seconds=2)] * 4 + [AT]
    ids = _chats(backend_app, user_id, times)
    pages = _walk(client.http, "/api/chat/sessions?limit=3")
    assert [len(p["sessions"]) for p in pages] == [3, 3, 1]
    listed = [s["id"] for p in pages for s in p["sessions"]]
    expected = sorted(zip(times, ids, strict=True), reverse=True)
    assert listed == [i for _, i in expected]
    assert set(pages[0]["sessions"][0]) == {"id", "title", "created_at", "updated_at"}
    assert pages[-1]["next"] is None


def test_a_chats_messages_come_latest_first_by_page_oldest_first_within_one(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, user_id = person
    (session_id,) = _chats(backend_app, user_id, [AT])
    # Questions and answers stored at one instant, and two exchanges at one instant too.
    times = [AT, AT + timedelta(seconds=1), AT + timedelta(seconds=1), AT + timedelta(seconds=2)]
    _messages(backend_app, user_id, session_id, times)
    whole = [m.id for m in session_messages(get_engine(backend_app), user_id, session_id)]
    pages = _walk(client.http, f"/api/chat/sessions/{session_id}?limit=3")
    assert [len(p["messages"]) for p in pages] == [3, 3, 2]
    assert [m["id"] for p in reversed(pages) for m in p["messages"]] == whole
    first = pages[0]
    assert first["id"] == session_id and first["messages"][-1]["id"] == whole[-1]
    # A question comes before its answer stored at the same instant, within a page too.
    assert [m["role"] for m in pages[-1]["messages"]] == ["user", "assistant"]
    assert pages[-1]["next"] is None


def test_the_default_pages_are_50_chats_and_100_messages(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [AT + timedelta(seconds=n) for n in range(51)])
    _messages(backend_app, user_id, ids[0], [AT + timedelta(seconds=n) for n in range(51)])
    chats = client.http.get("/api/chat/sessions").json()
    assert len(chats["sessions"]) == 50 and chats["next"]
    older = client.http.get(chats["next"]).json()
    assert [s["id"] for s in older["sessions"]] == [ids[0]] and older["next"] is None
    messages = client.http.get(f"/api/chat/sessions/{ids[0]}").json()
    assert len(messages["messages"]) == 100 and messages["next"]
    most = client.http.get(f"/api/chat/sessions/{ids[0]}?limit={MAX_PAGE}").json()
    assert len(most["messages"]) == 102 and most["next"] is None


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        f"limit={MAX_PAGE + 1}",
        "limit=ten",
        "limit=-1",
        "limit=1e2",
        "limit=%EF%BC%91",  # a fullwidth digit one
        "limit=" + "9" * 4301,
        "before=not-a-cursor",
        "before=W10",  # base64 of []
        "before=" + "A" * 5000,
        "before=WyJzIiwieCIsInkiXQ",  # ["s","x","y"]: no time
        "before=WyJzIiwiMjAyNi0wMS0wMVQwMDowMDowMCIsIngiXQ",  # a time without its zone
    ],
)
def test_a_bad_limit_or_cursor_is_a_400_in_json(
    backend_app: Flask, person: tuple[ApiClient, int], query: str
) -> None:
    client, user_id = person
    (session_id,) = _chats(backend_app, user_id, [AT])
    for path in ("/api/chat/sessions", f"/api/chat/sessions/{session_id}"):
        response = client.http.get(f"{path}?{query}")
        assert response.status_code == 400, (path, response.text)
        assert response.headers["content-type"] == "application/json"
        assert response.json()["error"]


def test_one_lists_cursor_is_refused_by_the_other(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [AT, AT + timedelta(seconds=1)])
    _messages(backend_app, user_id, ids[0], [AT, AT + timedelta(seconds=1)])
    chats_next = client.http.get("/api/chat/sessions?limit=1").json()["next"]
    messages_next = client.http.get(f"/api/chat/sessions/{ids[0]}?limit=1").json()["next"]
    chats_cursor = httpx.URL(chats_next).params["before"]
    messages_cursor = httpx.URL(messages_next).params["before"]
    assert client.http.get(f"/api/chat/sessions/{ids[0]}?before={chats_cursor}").status_code == 400
    assert client.http.get(f"/api/chat/sessions?before={messages_cursor}").status_code == 400


def test_the_total_of_chats_is_capped_with_429_and_retry_after(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, _ = person
    backend_app.config["MAX_CHATS_PER_USER"] = 3
    made = [client.http.post("/api/chat/sessions", json={}) for _ in range(4)]
    assert [r.status_code for r in made] == [201, 201, 201, 429]
    refused = made[-1]
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.headers["content-type"] == "application/json"
    assert "delete" in refused.json()["error"]
    assert len(client.http.get("/api/chat/sessions").json()["sessions"]) == 3
    assert client.http.delete(f"/api/chat/sessions/{made[0].json()['id']}").status_code == 204
    assert client.http.post("/api/chat/sessions", json={}).status_code == 201


def test_the_rate_of_new_chats_is_capped_and_deleting_does_not_reset_it(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, _ = person
    backend_app.config["MAX_NEW_CHATS_PER_MINUTE"] = 2
    first, second = (client.http.post("/api/chat/sessions", json={}) for _ in range(2))
    assert first.status_code == second.status_code == 201
    for made in (first, second):
        assert client.http.delete(f"/api/chat/sessions/{made.json()['id']}").status_code == 204
    refused = client.http.post("/api/chat/sessions", json={})
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "minute" in refused.json()["error"]
    assert client.http.get("/api/chat/sessions").json()["sessions"] == []


def test_racing_creations_never_pass_the_rate(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, user_id = person
    backend_app.config["MAX_NEW_CHATS_PER_MINUTE"] = 3
    statuses: list[int] = []
    start = threading.Barrier(8)

    def make() -> None:
        with client.http as http:
            start.wait()
            statuses.append(http.post("/api/chat/sessions", json={}).status_code)

    racers = [threading.Thread(target=make) for _ in range(8)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(statuses) == [201] * 3 + [429] * 5
    with get_engine(backend_app).connect() as conn:
        kept = conn.execute(
            sa.select(sa.func.count()).where(chat_sessions.c.user_id == user_id)
        ).scalar_one()
    assert kept == 3


def test_the_browsers_new_chat_past_a_cap_is_a_plain_429_page(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    _, user_id = person
    (used,) = _chats(backend_app, user_id, [AT])
    _messages(backend_app, user_id, used, [AT])  # so "+ New chat" makes a new one
    backend_app.config["MAX_CHATS_PER_USER"] = 1
    browser = backend_app.test_client()
    with browser.session_transaction() as cookie:
        cookie["user_id"] = user_id
    refused = browser.post("/chat", data={"csrf_token": csrf(browser)})
    assert refused.status_code == 429
    assert refused.mimetype == "text/html" and int(refused.headers["Retry-After"]) >= 1
    page = soup(refused)
    assert "delete one to start another" in page.get_text()
    assert "Traceback" not in page.get_text() and "TooManyChats" not in page.get_text()


def test_a_deep_page_is_one_range_read_of_the_keyset_index_not_a_sort(
    backend_app: Flask, person: tuple[ApiClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [AT + timedelta(seconds=n) for n in range(3)])
    _messages(backend_app, user_id, ids[0], [AT + timedelta(seconds=n) for n in range(3)])
    before = {
        name: httpx.URL(client.http.get(url).json()["next"]).params["before"]
        for name, url in (
            ("s", "/api/chat/sessions?limit=1"),
            ("m", f"/api/chat/sessions/{ids[0]}?limit=1"),
        )
    }
    chats = query_plan(get_engine(backend_app), session_query(user_id, 50, before["s"]))
    messages = query_plan(get_engine(backend_app), message_query(user_id, ids[0], 100, before["m"]))
    assert "ix_chat_sessions_user_page" in chats, chats
    assert "ix_ai_chat_logs_session_page" in messages, messages
    for plan in (chats, messages):
        assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
        assert "OFFSET" not in plan.upper()
