"""Copy an answer: its words, its citations as [n], and its sources listed."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import ask, new_chat, sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture
def clipboard_page(browser: Browser, base_url: str) -> Iterator[Page]:
    context = browser.new_context(
        base_url=base_url, permissions=["clipboard-read", "clipboard-write"]
    )
    try:
        yield context.new_page()
    finally:
        context.close()


def test_copy_an_answer(clipboard_page: Page) -> None:
    page = clipboard_page
    sign_in(page)
    new_chat(page)
    ask(page, "What do I owe on my credit cards?")
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".sources-bar")).to_be_visible(timeout=20_000)
    answer.get_by_role("button", name="Copy").click()
    expect(page.locator("#toast")).to_contain_text("Copied")
    copied = str(page.evaluate("navigator.clipboard.readText()"))
    shown = answer.locator(".answer-body").inner_text()
    figure = re.search(r"\$[\d,]+\.\d\d", shown)
    assert figure is not None and figure.group(0) in copied
    assert "[1]" in copied and "\nSources:\n1. " in copied
    assert "owed" in copied.split("Sources:")[1]  # the rows, as the sheet shows them


def test_find_one_copy_button_on_an_answer_and_none_on_a_question(page: Page) -> None:
    sign_in(page)
    new_chat(page)
    ask(page, "What do I owe on my credit cards?")
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".sources-bar")).to_be_visible(timeout=20_000)
    expect(answer.get_by_role("button", name="Copy")).to_have_count(1)
    expect(page.locator("article.message.user").get_by_role("button", name="Copy")).to_have_count(0)
