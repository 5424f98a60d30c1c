"""A long chat opens at its latest messages; `Show earlier` reaches the oldest, without JS."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient

from tests.support.history import copy_exchange, question_text
from tests.test_web_chat import new_chat, sign_in, soup
from tests.test_web_snapshots import answered
from webapp.chat.pages import CONVERSATION_PAGE
from webapp.store.app_db import get_engine

EXCHANGES = 25  # 50 messages: pages of 20, 20 and 10


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    sign_in(app, client)
    return client


@pytest.fixture
def long_chat(app: Flask) -> str:
    """A chat of EXCHANGES copies of one real exchange, `question_text(0)` the oldest."""
    original = new_chat(app)
    session_id = new_chat(app)
    copy_exchange(get_engine(app), session_id, answered(app, original), EXCHANGES)
    return session_id


def _questions(page: BeautifulSoup) -> list[str]:
    return [q.get_text(strip=True) for q in page.select(".message.user .bubble")]


def _earlier(page: BeautifulSoup) -> str | None:
    links = [a for a in page.select("a") if a.get_text(strip=True) == "Show earlier"]
    assert len(links) <= 1
    return str(links[0]["href"]) if links else None


def test_a_long_chat_shows_its_latest_page_and_show_earlier_reaches_the_oldest(
    demo: FlaskClient, long_chat: str
) -> None:
    url: str | None = f"/chat/{long_chat}"
    seen: list[list[str]] = []
    pages: list[BeautifulSoup] = []
    while url is not None:
        response = demo.get(url)
        assert response.status_code == 200
        page = soup(response)
        assert len(page.select("article.message")) <= CONVERSATION_PAGE
        seen.append(_questions(page))
        pages.append(page)
        url = _earlier(page)
        assert len(seen) < 10
    assert [len(q) for q in seen] == [10, 10, 5]
    assert seen[0] == [question_text(n) for n in range(15, 25)]
    everything = [q for questions in reversed(seen) for q in questions]
    assert everything == [question_text(n) for n in range(EXCHANGES)]
    # An older page links back to the latest; the latest needs no such link.
    backs = [[a["href"] for a in p.select(".show-latest a")] for p in pages]
    assert backs == [[], [f"/chat/{long_chat}"], [f"/chat/{long_chat}"]]
    # The link comes first in the conversation, before the messages it shows the page before.
    control = pages[0].select_one("#conversation .show-earlier")
    assert control is not None and control.find_next("article")["class"] == ["message", "user"]


def test_with_htmx_the_earlier_page_comes_alone_with_its_own_control(
    demo: FlaskClient, long_chat: str
) -> None:
    first = soup(demo.get(f"/chat/{long_chat}"))
    href = _earlier(first)
    assert href is not None
    link = first.select_one("a.show-earlier-link")
    assert link["hx-get"] == href and link["hx-swap"] == "outerHTML"
    fragment = soup(demo.get(href, headers={"HX-Request": "true"}))
    assert fragment.select_one("html, aside, #composer") is None
    assert _questions(fragment) == [question_text(n) for n in range(5, 15)]
    assert fragment.find(True) == fragment.select_one(".show-earlier")  # its control on top
    last = soup(demo.get(str(_earlier(fragment)), headers={"HX-Request": "true"}))
    assert _questions(last) == [question_text(n) for n in range(5)]
    assert _earlier(last) is None and last.select_one(".show-earlier") is None


def test_a_short_chat_has_no_show_earlier(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    answered(app, session_id)
    page = soup(demo.get(f"/chat/{session_id}"))
    assert len(page.select("article.message")) == 2
    assert _earlier(page) is None and page.select_one(".show-latest") is None


@pytest.mark.parametrize(
    "before", ["nonsense", "W1wicyJd", "a" * 300], ids=["text", "kind", "long"]
)
def test_an_earlier_link_not_made_here_is_a_400(
    demo: FlaskClient, long_chat: str, before: str
) -> None:
    response = demo.get(f"/chat/{long_chat}?before={before}")
    assert response.status_code == 400
    assert "earlier messages" in response.text


def test_another_users_chat_is_not_found_with_a_cursor_too(
    app: Flask, demo: FlaskClient, long_chat: str
) -> None:
    href = _earlier(soup(demo.get(f"/chat/{long_chat}")))
    other = app.test_client()
    sign_in(app, other, "alex")
    assert other.get(str(href)).status_code == 404
