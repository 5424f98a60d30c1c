"""Hostile text through the Procfile's gunicorn: a lone surrogate from the model (a
citation's `cited_text` or `title`, its words) or a tool leaves every page and channel of the
chat working, the text drawn with U+FFFD in its place."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from tests.support.gunicorn import Server, gunicorn
from tests.test_serving import _ask, _client, _env, _stream, _token
from tests.test_serving_limits import _signed_in_browser

LONE = "\ud800"
QUERY = "SELECT account_name, current_balance FROM account_details WHERE account_name = 'Checking'"


def _cite(**hostile: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": "silvia://your-account/checking",
        "title": "Checking",
        "cited_text": "Checking has $4,820.33.",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
        **hostile,
    }


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, seeded_sqlite_template: Path
) -> Iterator[tuple[Server, FakeClaude, str]]:
    folder = tmp_path_factory.mktemp("text")
    shutil.copyfile(seeded_sqlite_template, folder / "webapp.sqlite")
    url = f"sqlite:///{folder / 'webapp.sqlite'}"
    with FakeClaude() as fake, ExitStack() as stack:
        env = _env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url)
        yield stack.enter_context(gunicorn(env, folder)), fake, url


@pytest.mark.parametrize(
    "hostile",
    [{"cited_text": f"Checking {LONE} has"}, {"title": f"Check{LONE}ing"}, {"words": LONE}],
    ids=["cited_text", "title", "answer-words"],
)
def test_a_lone_surrogate_from_the_model_leaves_every_page_working(
    served: tuple[Server, FakeClaude, str], hostile: dict[str, str]
) -> None:
    server, fake, url = served
    words = hostile.pop("words", "")
    fake.replies += [
        tool_reply(("q", "execute_sql", {"query": QUERY})),
        text_reply((f"Your checking{words} holds $4,820.33.", [_cite(**hostile)])),
    ]
    with _client(server, _token(url)) as api:
        session_id, stream_url = _ask(api, "What is my checking balance?")
        events = _stream(api, stream_url)
        stored = api.get(f"/api/chat/sessions/{session_id}")
        replay = api.get(stream_url)
    assert json.loads(events[-1].data) == {"status": "complete"}
    assert stored.status_code == 200 and replay.status_code == 200
    message_id = stored.json()["messages"][-1]["id"]
    assert LONE not in json.dumps(stored.json(), ensure_ascii=False)
    with _signed_in_browser(server) as browser:
        pages = {
            path: browser.get(path, follow_redirects=True)
            for path in (
                f"/chat/{session_id}",
                "/",
                f"/answers/{message_id}/sources",
                f"/chat/{session_id}/messages/{message_id}/events",
            )
        }
    assert {path: page.status_code for path, page in pages.items()} == dict.fromkeys(pages, 200)
    assert "4,820.33" in pages[f"/chat/{session_id}"].text
    assert "Traceback" not in server.log_text()


@pytest.mark.parametrize("value", ["1e1000000", "-1e1000000", "9" * 5000])
def test_a_huge_balance_the_models_sql_selects_is_drawn_not_a_500(
    served: tuple[Server, FakeClaude, str], value: str
) -> None:
    server, fake, url = served
    query = f"SELECT 'Checking' AS account_name, '{value}' AS current_balance"
    row = f"account_name: Checking\ncurrent_balance: {value}"
    fake.replies += [
        tool_reply(("q", "execute_sql", {"query": query})),
        # The cited text is the row as the tool wrote it: the sheet draws it as money.
        text_reply(("Your checking holds a great deal.", [_cite(cited_text=row)])),
    ]
    with _client(server, _token(url)) as api:
        session_id, stream_url = _ask(api, "What is my checking balance?")
        events = _stream(api, stream_url)
        message_id = api.get(f"/api/chat/sessions/{session_id}").json()["messages"][-1]["id"]
    assert json.loads(events[-1].data) == {"status": "complete"}
    with _signed_in_browser(server) as browser:
        paths = [f"/chat/{session_id}", "/", f"/answers/{message_id}/sources"]
        statuses = {p: browser.get(p, follow_redirects=True).status_code for p in paths}
    assert statuses == dict.fromkeys(paths, 200)


WEB = "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/"


@pytest.mark.parametrize(
    "hostile",
    [{"cited_text": f"Save {LONE} three months"}, {"title": f"An essential {LONE} guide"}],
    ids=["cited_text", "title"],
)
def test_a_lone_surrogate_in_a_web_citation_leaves_every_page_working(
    served: tuple[Server, FakeClaude, str], hostile: dict[str, str]
) -> None:
    # A web source's link carries a text fragment made from the cited text (quote()).
    server, fake, url = served
    cite = _cite(source=WEB, title="An essential guide", cited_text="Save")
    cite.update(hostile)
    fake.replies += [
        tool_reply(("s", "search_web", {"query": "emergency fund"})),
        text_reply(("Keep three to six months of costs.", [cite])),
    ]
    with _client(server, _token(url)) as api:
        session_id, stream_url = _ask(api, "How big should my emergency fund be?")
        events = _stream(api, stream_url)
        message_id = api.get(f"/api/chat/sessions/{session_id}").json()["messages"][-1]["id"]
    assert json.loads(events[-1].data) == {"status": "complete"}
    with _signed_in_browser(server) as browser:
        paths = [
            f"/chat/{session_id}",
            "/",
            f"/answers/{message_id}/sources",
            f"/chat/{session_id}/messages/{message_id}/events",
        ]
        statuses = {p: browser.get(p, follow_redirects=True).status_code for p in paths}
    assert statuses == dict.fromkeys(paths, 200)
