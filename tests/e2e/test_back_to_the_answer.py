"""Back to the answer: every page an answer opens (the portfolio, a quote, an account from the
chooser, the library reader) links back to that answer, which comes back into view even when
later answers follow it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.e2e.stored import MIXED_QUESTION, demo_user_id, mixed_packets, store_answer
from webapp.chat.conversations import create_session
from webapp.store.app_db import get_engine

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
LONG = "A long answer that comes later, one line after another.\n\n" * 60


@pytest.fixture
def long_chat(page: Page, live_server: LiveServer) -> tuple[Page, str]:
    """A chat whose first answer cites every kind of source, with a long answer after it."""
    app = live_server.app
    session_id = create_session(get_engine(app), demo_user_id(app)).id
    first = store_answer(app, session_id, MIXED_QUESTION, mixed_packets(app))
    later: list[dict[str, Any]] = [
        {"type": "message_start", "final_documents": None},
        {"type": "message_delta", "content": LONG},
        {"type": "stop", "stop_reason": None},
    ]
    store_answer(app, session_id, "Tell me more", later)
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    page.goto(f"/chat/{session_id}")
    page.wait_for_load_state()
    return page, first


def come_back(page: Page, first: str) -> None:
    back = page.get_by_role("link", name="← Back to the answer")
    expect(back).to_be_visible()
    # The link is aimed at the answer by static/app.js once the page has loaded; on a loaded
    # machine it is drawn (and clickable) a while before that.
    page.wait_for_load_state()
    back.click()
    expect(page).to_have_url(re.compile(rf"/chat/[0-9a-f]+#message-{first}$"))
    expect(page.locator(f"#message-{first}")).to_be_in_viewport()


@pytest.mark.parametrize(
    ("number", "heading"),
    [("5", "Portfolio"), ("4", "Apple Inc")],
    ids=["portfolio", "quote"],
)
def test_open_a_page_from_a_citation_and_go_back_to_the_answer(
    long_chat: tuple[Page, str], number: str, heading: str
) -> None:
    page, first = long_chat
    expect(page.locator(f"#message-{first}")).not_to_be_in_viewport()
    page.locator(
        f"#message-{first} .answer-body .cite", has_text=re.compile(rf"^{number}$")
    ).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(heading)
    come_back(page, first)


def test_choose_an_account_and_go_back_to_the_answer(long_chat: tuple[Page, str]) -> None:
    page, first = long_chat
    page.locator(f"#message-{first} .answer-body .cite", has_text=re.compile("^6$")).click()
    page.locator(".chooser:popover-open").get_by_role("link").first.click()
    expect(page).to_have_url(re.compile(r"/accounts/"))
    come_back(page, first)


def test_read_a_document_from_the_sheet_and_go_back_to_the_answer(page: Page) -> None:
    sign_in(page)
    new_chat(page)
    ask(page, "How long should I keep my tax records?")
    answer = page.locator("article.message.assistant").last
    bar = answer.get_by_role("button", name=re.compile(r"^Sources · \d+$"))
    expect(bar).to_be_visible(timeout=TIMEOUT)
    first = (answer.get_attribute("id") or "").removeprefix("message-")
    bar.click()
    page.get_by_role("dialog", name="Sources").locator(
        'a.source-row[href^="/library/"]'
    ).first.click()
    expect(page).to_have_url(re.compile(r"/library/"))
    come_back(page, first)


def test_a_page_opened_on_its_own_has_no_way_back_to_an_answer(page: Page) -> None:
    sign_in(page)
    page.goto("/portfolio")
    expect(page.get_by_role("heading", level=1)).to_have_text("Portfolio")
    expect(page.get_by_role("link", name="← Back to the answer")).to_have_count(0)
