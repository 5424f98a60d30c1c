"""The library reader in a real browser: a cited document with no public URL opens in the
app, its cited passage marked and scrolled into view."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.e2e.pages import ask, new_chat, sign_in

pytestmark = pytest.mark.e2e

RECORDS_QUESTION = "How long should I keep my tax records?"
RECORDS_TITLE = "How long to keep tax records"
READER = re.compile(r"/library/tax-authority/guides/recordkeeping\.md\?cite=[^#]+#cited$")
ANSWER_TIMEOUT = 20_000
# Short enough that the cited table starts below the fold: the page must scroll to it.
SHORT_PHONE: ViewportSize = {"width": 390, "height": 480}


@pytest.fixture
def records_answer(page: Page) -> Page:
    """Sign in and ask the offline engine a question its tax-records guide answers."""
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    new_chat(page)
    ask(page, RECORDS_QUESTION)
    expect(page.locator(".sources-bar")).to_be_visible(timeout=ANSWER_TIMEOUT)
    return page


def expect_marked_and_in_view(page: Page) -> None:
    expect(page).to_have_url(READER)
    expect(page.get_by_role("heading", level=1)).to_have_text(RECORDS_TITLE)
    expect(page.locator(".library-original")).to_contain_text("no public copy online")
    first = page.locator(".library-body mark").first
    expect(first).to_have_attribute("id", "cited")
    expect(first).to_have_text("Your situation")
    expect(page.locator(".library-body mark")).to_contain_text(["The usual case", "Indefinitely"])
    expect(first).to_be_in_viewport()
    # Scrolled to it, and clear of the sticky top bar.
    assert page.evaluate("window.scrollY") > 0
    top = first.evaluate("el => el.getBoundingClientRect().top")
    bar = page.locator(".topbar").evaluate("el => el.getBoundingClientRect().bottom")
    assert top >= bar


def test_open_a_document_with_no_url_in_the_reader_passage_marked(records_answer: Page) -> None:
    page = records_answer
    page.set_viewport_size(SHORT_PHONE)
    page.locator(".sources-bar").click()
    sheet = page.get_by_role("dialog", name="Sources")
    row = sheet.get_by_role("link", name=re.compile(f"^{RECORDS_TITLE}"))
    expect(row).to_have_attribute("href", READER)
    expect(row).not_to_have_attribute("target", "_blank")
    row.click()
    expect_marked_and_in_view(page)


def test_open_the_same_document_from_its_inline_number(records_answer: Page) -> None:
    page = records_answer
    page.set_viewport_size(SHORT_PHONE)
    chip = page.locator(".answer-body a.cite").first
    expect(chip).to_have_attribute("href", READER)
    chip.click()
    expect_marked_and_in_view(page)
    page.go_back()
    expect(page.locator(".sources-bar")).to_be_visible()
