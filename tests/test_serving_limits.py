"""The reproductions of the attack on landed main, repeated through the Procfile's gunicorn:
each is refused or bounded with a clear 4xx or a capped result, and nothing is lost."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from bs4 import BeautifulSoup

from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from tests.support.gunicorn import Server, gunicorn
from tests.test_serving import _ask, _client, _env, _stalling_reply, _token

HUGE_QUERY = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 200) "
    "SELECT printf('%d', x) AS account_name, printf('%.*c', 999000, 'x') AS a FROM c"
)


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory, seeded_sqlite_template: Path) -> str:
    folder = tmp_path_factory.mktemp("limits")
    shutil.copyfile(seeded_sqlite_template, folder / "webapp.sqlite")
    return f"sqlite:///{folder / 'webapp.sqlite'}"


@pytest.fixture(scope="module")
def server(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with gunicorn(_env(database), tmp_path_factory.mktemp("logs")) as running:
        yield running


@pytest.fixture(scope="module")
def api(server: Server, database: str) -> Iterator[httpx.Client]:
    with _client(server, _token(database)) as client:
        yield client


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/api/chat/nope", 404), ("DELETE", "/api/chat/sessions", 405)],
)
def test_api_routing_errors_are_json(
    api: httpx.Client, method: str, path: str, status: int
) -> None:
    response = api.request(method, path)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]


def test_a_lone_surrogate_in_a_question_or_title_is_a_400(api: httpx.Client) -> None:
    session_id = api.post("/api/chat/sessions", json={}).json()["id"]
    raw = {"content-type": "application/json"}
    question = api.post(
        f"/api/chat/sessions/{session_id}/messages",
        content='{"message": "What do I owe \\ud800?"}',
        headers=raw,
    )
    title = api.post("/api/chat/sessions", content='{"title": "\\ud800"}', headers=raw)
    assert question.status_code == 400 and title.status_code == 400


@pytest.mark.parametrize("last", ["9223372036854775808", "99999999999999999999"])
def test_an_event_id_past_any_stream_is_a_400(api: httpx.Client, last: str) -> None:
    _, stream_url = _ask(api)
    by_header = api.get(stream_url, headers={"Last-Event-ID": last})
    by_query = api.get(f"{stream_url}?last_event_id={last}")
    assert by_header.status_code == by_query.status_code == 400


def test_nothing_that_shows_a_users_data_may_be_stored(api: httpx.Client) -> None:
    assert api.get("/api/chat/sessions").headers["cache-control"] == "no-store"
    assert api.get("/login").headers["cache-control"] == "no-store"


@contextmanager
def _signed_in_browser(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        page = BeautifulSoup(browser.get("/login").text, "html.parser")
        token = page.select_one('input[name="csrf_token"]')
        assert token is not None
        signed_in = browser.post(
            "/login",
            data={"username": "demo", "password": "demo", "csrf_token": str(token["value"])},
        )
        assert signed_in.status_code == 302
        yield browser


def _csrf(browser: httpx.Client, path: str = "/accounts") -> str:
    field = BeautifulSoup(browser.get(path).text, "html.parser").select_one(
        'input[name="csrf_token"]'
    )
    assert field is not None
    return str(field["value"])


def test_a_bearer_token_does_not_switch_off_csrf_on_a_browser_form(
    server: Server, database: str
) -> None:
    with _signed_in_browser(server) as browser:
        response = browser.post("/chat", headers={"Authorization": f"Bearer {_token(database)}"})
    assert response.status_code == 400


def test_a_cookie_kept_from_before_sign_out_no_longer_works(server: Server) -> None:
    with _signed_in_browser(server) as browser:
        kept = browser.cookies["session"]
        assert browser.get("/accounts").status_code == 200
        assert browser.post("/logout", data={"csrf_token": _csrf(browser)}).status_code == 302
    with httpx.Client(base_url=server.url, timeout=30, cookies={"session": kept}) as copied:
        response = copied.get("/accounts")
    assert response.status_code == 302 and "/login" in response.headers["location"]


def test_a_200_mb_query_reaches_the_model_capped(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    url = f"sqlite:///{database}"
    replies = [
        tool_reply(("t1", "execute_sql", {"query": HUGE_QUERY})),
        text_reply(("Those rows were too big to show whole.", [])),
    ]
    with FakeClaude(replies) as fake, ExitStack() as stack:
        running = stack.enter_context(
            gunicorn(_env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url), tmp_path)
        )
        client = stack.enter_context(_client(running, _token(url)))
        session_id, stream_url = _ask(client)
        done = [
            line
            for line in client.get(stream_url).text.splitlines()
            if line.startswith('data: {"status"')
        ]
        second_round = json.dumps(fake.requests[1])
    assert done == ['data: {"status":"complete"}']
    # The tool result the model got is within the default budget (256 KiB) plus the request's
    # own few kilobytes, not 200 MB.
    assert len(second_round.encode()) < 262_144 + 64_000
    assert "cut" in second_round or "only" in second_round


def test_a_users_fourth_running_answer_is_a_429(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    url = f"sqlite:///{database}"
    with FakeClaude([_stalling_reply(30)] * 3) as fake, ExitStack() as stack:
        running = stack.enter_context(
            gunicorn(_env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url), tmp_path)
        )
        client = stack.enter_context(_client(running, _token(url)))
        asked = [_ask(client) for _ in range(3)]
        session_id = client.post("/api/chat/sessions", json={}).json()["id"]
        fourth = client.post(
            f"/api/chat/sessions/{session_id}/messages", json={"message": "And my checking?"}
        )
        for _, stream_url in asked:
            client.post(stream_url.removesuffix("/stream") + "/cancel")
    assert fourth.status_code == 429 and fourth.headers["retry-after"] == "5"
    assert fourth.json()["error"]
