"""A person's money over time in a real browser, served by the Procfile's gunicorn: ask what
groceries cost last month and open the cited account; upload a CSV, ask about it, find it
under User Files and open its preview at the cited rows; axe on the new pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from webapp.web.spending_charts import month_start

pytestmark = pytest.mark.e2e

ANSWER_TIMEOUT = 20_000
SOURCES = re.compile(r"^Sources · \d+$")
AXE = Axe()


@pytest.fixture
def alex(browser: Browser, base_url: str) -> Iterator[Page]:
    """Alex, signed in: the tests that upload files keep them away from demo's answers."""
    context = browser.new_context(base_url=base_url, bypass_csp=True)
    page = context.new_page()
    sign_in(page, "alex")
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    yield page
    context.close()


def no_serious_barriers(page: Page, state: str) -> None:
    found = [
        f"{state}: {v['id']} ({v['impact']}) {v['help']}"
        for v in AXE.run(page).response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not found, "\n".join(found)


def test_ask_about_groceries_last_month_and_open_the_cited_account(alex: Page) -> None:
    page = alex
    new_chat(page)
    ask(page, "What did I spend on groceries last month?")
    answer = page.locator("article.message.assistant").last
    expect(answer.get_by_role("button", name=SOURCES)).to_be_visible(timeout=ANSWER_TIMEOUT)
    expect(answer.locator(".answer-body")).to_contain_text("on groceries last month")
    cite = answer.locator(".answer-body .cite").first
    expect(cite).to_have_attribute("href", re.compile(r"^/accounts/"))
    cite.click()
    expect(page).to_have_url(re.compile(r"/accounts/[A-Za-z0-9_-]+$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Checking")
    expect(page.locator("section.spending-chart")).to_have_count(2)


def test_upload_a_csv_ask_about_it_and_open_its_preview_at_the_cited_rows(
    alex: Page, tmp_path: Path
) -> None:
    page = alex
    day = month_start(datetime.now(UTC).date(), 1)
    statement = tmp_path / "corner-shop.csv"
    statement.write_text(
        "Posting Date,Description,Amount\n"
        f"{day.strftime('%m/%d/%Y')},CORNER GROCERY MARKET,-23.40\n"
        f"{day.strftime('%m/%d/%Y')},CITY PARKING,-8.00\n"
        f"{day.replace(day=2).strftime('%m/%d/%Y')},SAFEWAY #88,-51.10\n"
    )
    page.get_by_role("link", name="Files").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Statement files")
    no_serious_barriers(page, "files")
    page.get_by_label("Statement file").set_input_files(str(statement))
    page.get_by_role("button", name="Upload").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("corner-shop.csv")
    expect(page.locator("table.file-rows tbody tr")).to_have_count(3)
    no_serious_barriers(page, "file-preview")

    page.get_by_role("link", name="Chat", exact=True).click()
    new_chat(page)
    ask(page, "What did I spend on groceries in my uploaded file?")
    answer = page.locator("article.message.assistant").last
    bar = answer.get_by_role("button", name=SOURCES)
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    expect(answer.locator(".answer-body")).to_contain_text("$74.50 on groceries")
    chat_url = page.url
    # The inline citation opens the preview too, at the same rows as the sheet's row.
    inline = answer.locator(".answer-body .cite").first
    expect(inline).to_have_attribute("href", re.compile(r"^/files/file_[A-Za-z0-9_-]+\?rows="))
    inline_href = inline.get_attribute("href")
    bar.click()
    sheet = page.get_by_role("dialog", name="Sources")
    expect(sheet.get_by_role("heading", name="User Files")).to_be_visible()
    row = sheet.locator('a.source-row[href^="/files/"]')
    expect(row).to_have_count(1)
    expect(row).to_contain_text("corner-shop.csv")
    assert row.get_attribute("href") == inline_href
    row.click()
    expect(page).to_have_url(re.compile(r"/files/file_[A-Za-z0-9_-]+\?rows=.+#cited$"))
    cited = page.locator("tr.cited-row")
    expect(cited).to_have_count(2)
    expect(cited.first.locator("mark")).to_be_in_viewport()
    expect(page.locator("tr.cited-row", has_text="CITY PARKING")).to_have_count(0)
    no_serious_barriers(page, "file-preview-cited")
    page.get_by_role("link", name="← Back to the answer").click()
    expect(page).to_have_url(chat_url)


def test_the_spending_page_has_charts_and_no_serious_barriers(alex: Page) -> None:
    page = alex
    page.get_by_role("link", name="Spending").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Spending")
    expect(page.locator("section.spending-chart svg")).to_have_count(2)
    no_serious_barriers(page, "spending")
