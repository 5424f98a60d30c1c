"""A long chat opens at its latest messages; a person shows the earlier ones, with or without
JavaScript, by keyboard too, and axe finds no serious barrier on the way."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.pages import ask, new_chat, sign_in
from tests.support.history import copy_exchange, question_text
from webapp.chat.conversations import create_session
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
EXCHANGES = 15  # 30 messages: the latest 20, then 10 more
AXE = Axe()


@pytest.fixture(scope="module")
def long_chat(browser: Browser, base_url: str, live_server: LiveServer) -> str:
    """A chat of EXCHANGES copies of one answer the server really wrote; return its URL."""
    context = browser.new_context(base_url=base_url)
    page = context.new_page()
    sign_in(page)
    new_chat(page)
    ask(page, "What do I owe on my credit cards?")
    answer = page.locator("article.message.assistant").last
    expect(answer).not_to_have_attribute("aria-busy", "true", timeout=TIMEOUT)
    answer_id = str(answer.get_attribute("id")).removeprefix("message-")
    context.close()
    engine = get_engine(live_server.app)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    session_id = create_session(engine, user.id).id
    copy_exchange(engine, session_id, answer_id, EXCHANGES)
    return f"/chat/{session_id}"


@pytest.fixture
def person(browser: Browser, base_url: str) -> Iterator[Page]:
    # Only this context bypasses the CSP, so that axe can be injected.
    context = browser.new_context(base_url=base_url, bypass_csp=True)
    page = context.new_page()
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    yield page
    context.close()


def serious(page: Page) -> list[str]:
    violations = AXE.run(page).response["violations"]
    return [
        f"{v['id']}: {[' '.join(n['target']) for n in v['nodes']]}"
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]


def test_click_show_earlier_and_see_the_older_question_in_place(
    person: Page, long_chat: str
) -> None:
    page = person
    page.goto(long_chat)
    page.wait_for_load_state()
    questions = page.locator(".message.user .bubble")
    expect(questions).to_have_count(10)
    expect(questions.last).to_have_text(question_text(EXCHANGES - 1))
    expect(page.get_by_text(question_text(0), exact=True)).to_have_count(0)
    assert serious(page) == []
    page.evaluate("window.__samePage = true")
    page.get_by_role("link", name="Show earlier").click()
    oldest = page.get_by_text(question_text(0), exact=True)
    expect(oldest).to_be_visible()
    expect(questions).to_have_count(EXCHANGES)
    expect(page.get_by_role("link", name="Show earlier")).to_have_count(0)
    assert page.evaluate("window.__samePage === true")  # in place, not a new page
    expect(page).to_have_url(re.compile(re.escape(long_chat) + "$"))
    assert serious(page) == []


def test_reach_show_earlier_by_keyboard_and_the_focus_follows_what_it_shows(
    person: Page, long_chat: str
) -> None:
    page = person
    page.goto(long_chat)
    page.wait_for_load_state()
    page.get_by_label("Message").focus()
    for _ in range(400):  # back from the message box through the conversation
        page.keyboard.press("Shift+Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Show earlier":
            break
    else:
        pytest.fail("Show earlier was never reached with the keyboard")
    page.keyboard.press("Enter")
    expect(page.get_by_text(question_text(0), exact=True)).to_be_visible()
    # Nothing older: the focus is on the oldest message now shown, not lost to the page.
    focused = "document.activeElement.matches('article.message')"
    page.wait_for_function(focused)


def test_show_earlier_without_javascript_opens_the_older_page(
    browser: Browser, base_url: str, long_chat: str
) -> None:
    context = browser.new_context(base_url=base_url, java_script_enabled=False)
    page = context.new_page()
    sign_in(page)
    page.goto(long_chat)
    page.get_by_role("link", name="Show earlier").click()
    expect(page).to_have_url(re.compile(r"\?before="))
    expect(page.get_by_text(question_text(0), exact=True)).to_be_visible()
    expect(page.locator(".message.user .bubble")).to_have_count(EXCHANGES - 10)
    page.get_by_role("link", name="Back to the latest messages").click()
    expect(page.get_by_text(question_text(EXCHANGES - 1), exact=True)).to_be_visible()
    context.close()
