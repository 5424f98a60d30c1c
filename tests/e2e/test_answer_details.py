"""The smaller things around an answer: Copy keeps a table a table, a code block copies on its
own, Jump to latest while an answer grows, the chat's menu gives way to the question it asks,
deleting the open chat says where you are, focus stays after a suggestion, and the message box
shows whole without JavaScript."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.e2e.scripts import Held
from tests.e2e.stored import demo_user_id, store_answer
from tests.support.fake_claude import FakeClaude, Paced, text_reply
from webapp.chat.conversations import create_session
from webapp.store.app_db import get_engine

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
TABLE_ANSWER = (
    "Here is what you owe:\n\n| Card | Owed |\n|---|---|\n| Amex | $1,842.17 |\n| Citi | $310.00 |\n\n"
    "And the query:\n\n```sql\nSELECT * FROM account_details;\n```\n"
)


@pytest.fixture
def clipboard_page(browser: Browser, base_url: str) -> Iterator[Page]:
    context = browser.new_context(
        base_url=base_url, permissions=["clipboard-read", "clipboard-write"]
    )
    try:
        yield context.new_page()
    finally:
        context.close()


def stored_chat(live_server: LiveServer, text: str, question: str = "Show me a table") -> str:
    app = live_server.app
    session_id = create_session(get_engine(app), demo_user_id(app)).id
    packets: list[dict[str, Any]] = [
        {"type": "message_start", "final_documents": None},
        {"type": "message_delta", "content": text},
        {"type": "stop", "stop_reason": None},
    ]
    store_answer(app, session_id, question, packets)
    return session_id


def test_copy_an_answer_with_a_table_and_paste_a_markdown_table(
    clipboard_page: Page, live_server: LiveServer
) -> None:
    page = clipboard_page
    session_id = stored_chat(live_server, TABLE_ANSWER)
    sign_in(page)
    page.goto(f"/chat/{session_id}")
    page.get_by_role("button", name="Copy", exact=True).click()
    expect(page.locator("#toast")).to_contain_text("Copied the answer")
    copied = str(page.evaluate("navigator.clipboard.readText()"))
    assert "| Card | Owed |\n| --- | --- |\n| Amex | $1,842.17 |\n| Citi | $310.00 |" in copied
    assert "Copy code" not in copied


def test_copy_just_the_code_of_a_code_block(clipboard_page: Page, live_server: LiveServer) -> None:
    page = clipboard_page
    session_id = stored_chat(live_server, TABLE_ANSWER)
    sign_in(page)
    page.goto(f"/chat/{session_id}")
    page.get_by_role("button", name="Copy code").click()
    expect(page.locator("#toast")).to_have_text("Copied the code.")
    assert str(page.evaluate("navigator.clipboard.readText()")).strip() == (
        "SELECT * FROM account_details;"
    )


def test_scroll_up_while_an_answer_grows_and_jump_to_latest(
    page: Page, slow_server: LiveServer, slow_model: FakeClaude
) -> None:
    words = Held(text_reply(("Line after line of a long answer.\n\n" * 80, [])))
    slow_model.replies = [Paced(words, 0.03)]
    try:
        sign_in(page, server=slow_server.url)
        expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
        new_chat(page)
        ask(page, "Tell me everything")
        words.go.set()
        answer = page.locator("article.message.assistant")
        expect(answer.locator(".answer-body")).to_contain_text("Line after", timeout=TIMEOUT)
        jump = page.get_by_role("button", name="Jump to latest")
        expect(jump).to_be_hidden()
        for _ in range(400):  # until the answer is a few screens long
            if page.evaluate("() => document.scrollingElement.scrollHeight > 3 * innerHeight"):
                break
            page.wait_for_timeout(50)
        page.evaluate("window.scrollTo(0, 0)")
        expect(jump).to_be_visible()
        jump.click()
        expect(jump).to_be_hidden()
        expect(page.get_by_label("Message")).to_be_focused()
        assert page.evaluate(
            "() => { const e = document.scrollingElement; "
            "return e.scrollHeight - e.scrollTop - e.clientHeight < 200; }"
        )
        answer.get_by_role("button", name="Stop").click()
    finally:
        words.go.set()
        slow_model.replies = []


def test_delete_a_chat_and_the_menu_gives_way_to_the_question(
    page: Page, live_server: LiveServer
) -> None:
    kept = stored_chat(live_server, "Kept.", "A chat that stays")
    session_id = stored_chat(live_server, "Gone.", "A chat to delete")
    sign_in(page)
    page.goto(f"/chat/{session_id}")
    page.wait_for_load_state()
    page.get_by_role("button", name="Rename or delete “A chat to delete”").first.click()
    page.locator(".session-menu:popover-open").get_by_role("button", name="Delete chat…").click()
    confirm = page.get_by_role("dialog", name="Delete “A chat to delete”?")
    expect(confirm).to_be_visible()
    expect(page.locator(".session-menu:popover-open")).to_have_count(1)  # the question alone
    confirm.get_by_role("button", name="Delete", exact=True).click()
    expect(page).not_to_have_url(re.compile(rf"/chat/{session_id}$"))
    expect(page.get_by_role("alert")).to_have_text(
        re.compile(r"^Deleted “A chat to delete”\. You are now in “.+”\.$")
    )
    assert kept


def test_ask_a_suggestion_and_the_message_box_keeps_the_focus(page: Page) -> None:
    sign_in(page)
    new_chat(page)
    page.get_by_role("button", name="What do I owe on my credit cards?").click()
    expect(page.locator(".message.user .bubble")).to_have_text(
        ["What do I owe on my credit cards?"]
    )
    expect(page.get_by_label("Message")).to_be_focused()


def test_without_javascript_the_whole_message_box_shows(
    browser: Browser, base_url: str, live_server: LiveServer
) -> None:
    session_id = stored_chat(live_server, "A long answer line.\n\n" * 80)
    context = browser.new_context(base_url=base_url, java_script_enabled=False)
    try:
        page = context.new_page()
        sign_in(page)
        page.goto(f"/chat/{session_id}")
        composer = page.locator("#composer")
        expect(composer).to_be_in_viewport(ratio=1)
        box, size = composer.bounding_box(), page.viewport_size
        assert box is not None and size is not None
        assert box["y"] + box["height"] <= size["height"] - 4
    finally:
        context.close()


def test_open_one_menu_then_another_and_only_the_last_stays_open(
    page: Page, live_server: LiveServer
) -> None:
    stored_chat(live_server, "First.", "The first chat")
    session_id = stored_chat(live_server, "Second.", "The second chat")
    sign_in(page)
    page.goto(f"/chat/{session_id}")
    page.wait_for_load_state()
    open_menus = page.locator(".session-menu:popover-open, .chooser:popover-open")
    page.get_by_role("button", name="Rename or delete “The first chat”").first.click()
    expect(open_menus).to_have_count(1)
    page.get_by_role("button", name="Rename or delete “The second chat”").first.click()
    expect(open_menus).to_have_count(1)
    expect(page.locator(".session-menu:popover-open")).to_contain_text("Delete chat…")

    # The sources sheet opened over a menu closes it; the sheet's chooser is then the one.
    ask(page, "What do I owe on my credit cards?")
    page.get_by_role("button", name="Rename or delete “The second chat”").first.click()
    expect(open_menus).to_have_count(1)
    page.get_by_role("button", name=re.compile(r"^Sources · \d+$")).last.click()
    sheet = page.get_by_role("dialog", name="Sources")
    expect(sheet).to_be_visible()
    expect(page.locator(".session-menu:popover-open")).to_have_count(0)
    sheet.get_by_role("button", name=re.compile("Credit card")).click()
    expect(open_menus).to_have_count(1)
    expect(sheet.locator(".chooser:popover-open")).to_be_visible()


def test_ask_about_a_card_and_the_answer_names_it_as_people_do(page: Page) -> None:
    sign_in(page)
    new_chat(page)
    ask(page, "What's the balance on my Amex?")
    answer = page.locator(".message.assistant .answer-body").last
    expect(answer).to_contain_text("your American Express credit card", timeout=20_000)
    expect(answer).not_to_contain_text("Credit card at")
