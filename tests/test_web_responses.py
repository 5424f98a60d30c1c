"""What every response carries: errors a client can read, no caching of a user's data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from webapp import create_app
from webapp.services import chat_service
from webapp.store.app_db import close_engine, get_engine
from webapp.store.users import create_api_token


@pytest.fixture
def bearer(app: Flask) -> dict[str, str]:
    return {"Authorization": f"Bearer {create_api_token(get_engine(app), 'demo')}"}


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/chat/nope", 404),
        ("DELETE", "/api/chat/sessions", 405),
        ("GET", "/api/chat/sessions/unknown", 404),
    ],
)
def test_api_errors_are_json_routing_errors_included(
    client: FlaskClient, bearer: dict[str, str], method: str, path: str, status: int
) -> None:
    response = client.open(path, method=method, headers=bearer)
    assert response.status_code == status and response.mimetype == "application/json"
    assert isinstance(response.get_json()["error"], str)
    if status == 405:
        assert "GET" in response.headers["Allow"]


def test_page_errors_stay_pages(client: FlaskClient) -> None:
    response = client.get("/no-such-page")
    assert response.status_code == 404 and response.mimetype == "text/html"


@pytest.mark.parametrize("path", ["/login", "/api/chat/sessions"])
def test_responses_that_may_show_a_users_data_are_never_stored(
    client: FlaskClient, bearer: dict[str, str], path: str
) -> None:
    assert client.get(path, headers=bearer).headers["Cache-Control"] == "no-store"


def test_static_files_may_be_cached(client: FlaskClient) -> None:
    response = client.get("/static/app.css")
    assert response.headers.get("Cache-Control") != "no-store"
    response.close()


@pytest.mark.parametrize(
    "body",
    [
        '{"message": "What do I owe \\ud800?"}',
        '{"message": "nul \\u0000 inside"}',
    ],
)
def test_a_question_that_is_not_valid_text_is_a_400(
    client: FlaskClient, bearer: dict[str, str], body: str
) -> None:
    session_id = client.post("/api/chat/sessions", json={}, headers=bearer).get_json()["id"]
    response = client.post(
        f"/api/chat/sessions/{session_id}/messages",
        data=body,
        headers={**bearer, "Content-Type": "application/json"},
    )
    assert response.status_code == 400 and "not valid text" in response.get_json()["error"]


def test_a_title_with_a_lone_surrogate_is_a_400(
    client: FlaskClient, bearer: dict[str, str]
) -> None:
    response = client.post(
        "/api/chat/sessions",
        data=json.dumps({"title": "\ud800"}),
        headers={**bearer, "Content-Type": "application/json"},
    )
    assert response.status_code == 400


@pytest.mark.parametrize("last", ["9223372036854775808", "99999999999999999999"])
def test_an_event_id_past_any_stream_is_a_400(
    client: FlaskClient, bearer: dict[str, str], last: str
) -> None:
    session_id = client.post("/api/chat/sessions", json={}, headers=bearer).get_json()["id"]
    asked = client.post(
        f"/api/chat/sessions/{session_id}/messages", json={"message": "Hi"}, headers=bearer
    ).get_json()
    by_header = client.get(asked["stream_url"], headers={**bearer, "Last-Event-ID": last})
    by_query = client.get(f"{asked['stream_url']}?last_event_id={last}", headers=bearer)
    assert by_header.status_code == by_query.status_code == 400


def test_a_closed_stream_stops_counting_toward_the_users_cap(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test",
            "ANTHROPIC_API_KEY": None,
            "DATABASE_URL": f"sqlite:///{database}",
            "MAX_STREAMS_PER_USER": 1,
        }
    )
    client = app.test_client()
    headers = {"Authorization": f"Bearer {create_api_token(get_engine(app), 'demo')}"}
    session_id = client.post("/api/chat/sessions", json={}, headers=headers).get_json()["id"]
    url = client.post(
        f"/api/chat/sessions/{session_id}/messages", json={"message": "Hi"}, headers=headers
    ).get_json()["stream_url"]
    first = client.get(url, headers=headers, buffered=False)
    second = client.get(url, headers=headers)
    first.close()
    third = client.get(url, headers=headers)
    with app.app_context():
        chat_service().wait_idle()
    close_engine(app)
    assert first.status_code == 200 and second.status_code == 429
    assert third.status_code == 200
