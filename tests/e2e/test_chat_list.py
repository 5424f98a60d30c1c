"""The list of chats in the sidebar: rename one, or delete one (after saying yes), in place."""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.pages import ask, new_chat, sign_in

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000


def chat_id(page: Page) -> str:
    return page.url.rsplit("/", 1)[1]


def chat_with_answer(page: Page) -> tuple[str, str]:
    """Start a chat, ask a question no other test asks; return the chat's id and title."""
    new_chat(page)
    question = f"What are my holdings? ({secrets.token_hex(3)})"
    ask(page, question)
    answer = page.locator("article.message.assistant").last
    expect(answer).not_to_have_attribute("aria-busy", "true", timeout=TIMEOUT)
    return chat_id(page), question


def listed(page: Page, session_id: str) -> Locator:
    return page.locator(f'#sessions a[href="/chat/{session_id}"]')


def open_menu(page: Page, title: str) -> Locator:
    page.get_by_role("button", name=f"Rename or delete “{title}”").click()
    menu = page.locator(".session-menu:popover-open")
    expect(menu).to_have_count(1)
    return menu


def mark_page(page: Page) -> None:
    page.evaluate("window.__samePage = true")


def same_page(page: Page) -> bool:
    return bool(page.evaluate("window.__samePage === true"))


@pytest.fixture
def signed_in(page: Page) -> Page:
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    return page


def test_rename_a_chat_in_place(signed_in: Page) -> None:
    page = signed_in
    session_id, title = chat_with_answer(page)
    expect(listed(page, session_id)).to_have_text(title)
    mark_page(page)

    menu = open_menu(page, title)
    box = menu.get_by_label("Chat name")
    expect(box).to_have_value(title)
    box.fill("  Holdings review  ")
    menu.get_by_role("button", name="Rename").click()

    expect(listed(page, session_id)).to_have_text("Holdings review")
    expect(listed(page, session_id)).to_have_attribute("aria-current", "page")
    expect(page).to_have_title("Holdings review · Finance Chat")
    expect(page.locator(".session-menu:popover-open")).to_have_count(0)
    assert same_page(page)  # in place: the conversation was not reloaded
    page.reload()
    expect(listed(page, session_id)).to_have_text("Holdings review")


def test_delete_a_chat_in_place(signed_in: Page) -> None:
    page = signed_in
    older, older_title = chat_with_answer(page)
    current, current_title = chat_with_answer(page)
    mark_page(page)

    # Deleting another chat asks first, then takes it out of the list; this chat stays open.
    open_menu(page, older_title).get_by_role("button", name="Delete chat…").click()
    confirm = page.get_by_role("dialog", name=f"Delete “{older_title}”?")
    expect(confirm).to_be_visible()
    expect(listed(page, older)).to_have_count(1)
    confirm.get_by_role("button", name="Delete", exact=True).click()
    expect(listed(page, older)).to_have_count(0)
    expect(listed(page, current)).to_have_attribute("aria-current", "page")
    assert same_page(page) and chat_id(page) == current
    page.goto(f"/chat/{older}")
    expect(page.get_by_role("heading", name="Not Found")).to_be_visible()
    page.goto(f"/chat/{current}")

    # Deleting the open chat goes to the latest other chat (or a new one).
    expect(listed(page, current)).to_have_count(1)
    open_menu(page, current_title).get_by_role("button", name="Delete chat…").click()
    page.get_by_role("dialog", name=f"Delete “{current_title}”?").get_by_role(
        "button", name="Delete", exact=True
    ).click()
    expect(page).not_to_have_url(re.compile(f"/chat/{current}$"))
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    expect(listed(page, current)).to_have_count(0)
    expect(listed(page, chat_id(page))).to_have_attribute("aria-current", "page")


def test_change_your_mind_about_deleting_a_chat(signed_in: Page) -> None:
    page = signed_in
    session_id, title = chat_with_answer(page)
    menu = open_menu(page, title)
    menu.get_by_role("button", name="Delete chat…").click()
    # One popover at a time: the menu gave way to the question, and Cancel closes it.
    expect(page.locator(".session-menu:popover-open")).to_have_count(1)
    page.get_by_role("dialog", name=f"Delete “{title}”?").get_by_role(
        "button", name="Cancel"
    ).click()
    expect(page.locator(".session-menu:popover-open")).to_have_count(0)
    expect(page.get_by_role("button", name=f"Rename or delete “{title}”")).to_be_focused()
    expect(listed(page, session_id)).to_have_text(title)


def test_send_the_same_question_form_twice_and_get_one_answer(signed_in: Page) -> None:
    page = signed_in
    new_chat(page)
    used = page.locator("#composer-key").get_attribute("value")
    ask(page, "What is my net worth?")
    answer = page.locator("article.message.assistant").last
    expect(answer).not_to_have_attribute("aria-busy", "true", timeout=TIMEOUT)
    # The answer brought the form its next key: a new question is a new question.
    fresh = page.locator("#composer-key").get_attribute("value")
    assert used and fresh and fresh != used
    answer_id = answer.get_attribute("id")  # before sending: a question drawn at once is last
    assert answer_id
    # The same form sent again (as a resubmitted page would): the page shows the one answer.
    page.locator("#composer-key").evaluate("(input, key) => { input.value = key; }", used)
    ask_again = page.get_by_label("Message")
    ask_again.fill("What is my net worth?")
    ask_again.press("Enter")
    expect(page).to_have_url(re.compile(rf"/chat/[0-9a-f]+#{answer_id}$"))
    expect(page.locator(".message.user")).to_have_count(1)
    expect(page.locator("article.message.assistant")).to_have_count(1)
