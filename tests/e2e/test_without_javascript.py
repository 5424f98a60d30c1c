"""The page without JavaScript: sign in, ask, read the answer and open its sources."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture
def no_js(browser: Browser, base_url: str) -> Iterator[Page]:
    context = browser.new_context(base_url=base_url, java_script_enabled=False)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_open_the_sources_without_javascript(no_js: Page) -> None:
    page = no_js
    sign_in(page)
    page.get_by_role("button", name="+ New chat").click()
    page.get_by_label("Message").fill("What do I owe on my credit cards?")
    page.get_by_role("button", name="Send").click()
    bar = page.get_by_role("button", name="Sources · ")
    for _ in range(20):  # the page refreshes until the answer is there; a reload does too
        if bar.count():
            break
        page.wait_for_timeout(500)
        page.reload()
    expect(bar.first).to_be_visible()
    bar.first.click()
    expect(page.get_by_role("heading", level=1, name="Sources")).to_be_visible()
    expect(page.get_by_role("heading", name="Cited Sources")).to_be_visible()
    expect(page.locator(".source-list li").first).to_contain_text("owed")
    page.get_by_role("link", name="← Back to the answer").click()
    expect(page.get_by_role("button", name="Sources · ").first).to_be_visible()
