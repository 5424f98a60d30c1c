"""Where does this figure come from: every citation shows a preview (its source's title,
where it is from, the cited text and what opening it does) on hover, on focus and on a tap,
a source that opens nothing too; the sheet row of such a source shows its cited text."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, Locator, Page, ViewportSize, expect

from tests.e2e.pages import sign_in
from tests.e2e.stored import store_mixed_answer

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def mixed(page: Page, live_server: LiveServer) -> Page:
    session_id = store_mixed_answer(live_server.app)
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    page.goto(f"/chat/{session_id}")
    return page


def preview_of(page: Page, number: str) -> tuple[Locator, Locator]:
    cite = page.locator(".answer-body .cite", has_text=re.compile(rf"^{number}$"))
    return cite, page.locator(f"#{cite.get_attribute('aria-describedby')}")


def test_hover_a_citation_and_read_where_it_comes_from(mixed: Page) -> None:
    cite, tip = preview_of(mixed, "1")
    expect(tip).to_be_hidden()
    cite.hover()
    expect(tip).to_be_visible()
    expect(tip).to_have_attribute("role", "tooltip")
    expect(tip.locator(".cite-tip-title")).to_have_text("Publication 523")
    expect(tip.locator(".cite-tip-where")).to_contain_text("irs.gov")
    expect(tip.locator(".cite-tip-text")).to_contain_text("You can exclude up to $250,000")
    expect(tip.locator(".cite-tip-opens")).to_have_text("Opens irs.gov in a new tab")
    mixed.keyboard.press("Escape")
    expect(tip).to_be_hidden()


def test_tab_to_a_citation_and_its_preview_shows(mixed: Page) -> None:
    cite, tip = preview_of(mixed, "4")
    cite.focus()
    expect(tip).to_be_visible()
    expect(tip.locator(".cite-tip-title")).to_have_text("AAPL quote")
    expect(tip.locator(".cite-tip-opens")).to_have_text("Opens the quote")
    # Only one preview at a time.
    expect(mixed.locator(".cite-tip:visible")).to_have_count(1)


def test_a_citation_that_opens_nothing_says_where_its_figure_comes_from(mixed: Page) -> None:
    cite, tip = preview_of(mixed, "3")
    url = mixed.url
    mixed.mouse.move(0, 0)
    cite.focus()
    expect(tip).to_be_visible()
    expect(tip.locator(".cite-tip-title")).to_have_text("Analyst note")
    expect(tip.locator(".cite-tip-text")).to_contain_text("Look again.")
    expect(tip.locator(".cite-tip-opens")).to_have_text(
        "Nothing to open: the figure comes from this text"
    )
    assert mixed.url == url

    mixed.locator(".sources-bar").click()
    sheet = mixed.get_by_role("dialog", name="Sources")
    row = sheet.locator(".source-row", has_text="Analyst note")
    expect(row.locator(".source-snippet")).to_contain_text("Then decide.")
    expect(row.locator(".source-note")).to_have_text(
        "Nothing to open: the answer's figure comes from the text above."
    )


def test_tap_a_citation_on_a_phone_to_preview_it_then_again_to_open_it(
    browser: Browser, live_server: LiveServer
) -> None:
    session_id = store_mixed_answer(live_server.app)
    context = browser.new_context(
        base_url=live_server.url, viewport=PHONE, is_mobile=True, has_touch=True
    )
    try:
        page = context.new_page()
        sign_in(page)
        expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
        page.goto(f"/chat/{session_id}")
        cite, tip = preview_of(page, "5")
        cite.tap()
        expect(tip).to_be_visible()
        expect(tip.locator(".cite-tip-title")).to_have_text("Your portfolio")
        expect(tip).to_be_in_viewport()
        expect(page).to_have_url(re.compile(rf"/chat/{session_id}$"))
        cite.tap()
        expect(page).to_have_url(re.compile(r"/portfolio$"))
    finally:
        context.close()
