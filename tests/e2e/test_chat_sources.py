"""A person's path through the chat: sign in, ask, watch it stream, open every kind of source."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.support.paths import account_path
from webapp.store.accounts import list_accounts
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

CARDS_QUESTION = "What do I owe on my credit cards?"
TAX_QUESTION = "How does the home sale gain exclusion work?"
SCREENSHOT = "/tmp/sources.png"
ANSWER_TIMEOUT = 20_000


def account_paths(live_server: LiveServer) -> dict[str, list[tuple[str, str]]]:
    """Return each demo account name's (institution, page path) pairs."""
    engine = get_engine(live_server.app)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    found: dict[str, list[tuple[str, str]]] = {}
    for account in list_accounts(engine, user.id):
        name, where = str(account["account_name"]), str(account["institution_name"])
        found.setdefault(name, []).append((where, account_path(str(account["source_account_id"]))))
    return found


@pytest.fixture
def signed_in(page: Page) -> Iterator[Page]:
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    # A fresh chat for each test, so answers never mix.
    new_chat(page)
    yield page


def test_sign_in_with_a_wrong_password_and_be_told_plainly(page: Page) -> None:
    sign_in(page, password="not-the-password")
    expect(page.get_by_role("alert")).to_have_text("Incorrect username or password.")
    expect(page).to_have_url(re.compile(r"/login"))


def test_type_two_lines_with_shift_enter_and_send_with_enter(signed_in: Page) -> None:
    page = signed_in
    box = page.get_by_label("Message")
    box.fill("first line")
    box.press("Shift+Enter")
    box.type("second line")
    expect(box).to_have_value("first line\nsecond line")
    expect(page.locator(".message.user")).to_have_count(0)
    box.press("Enter")
    expect(page.locator(".message.user .bubble")).to_have_text("first line\nsecond line")
    expect(box).to_have_value("")


def test_ask_about_credit_cards_and_open_each_cited_account(
    signed_in: Page, live_server: LiveServer
) -> None:
    page = signed_in
    accounts = account_paths(live_server)
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if r.url.endswith("/events") else None)

    ask(page, CARDS_QUESTION)
    answer = page.locator(".message.assistant .answer-body")
    expect(answer).to_contain_text("$4,782.07", timeout=ANSWER_TIMEOUT)
    cites = answer.locator(".cite")
    expect(cites.first).to_have_text("1")
    expect(answer.get_by_role("link", name=re.compile(r"Source 2"))).to_have_text(["2", "2"])

    bar = page.get_by_role("button", name="Sources · 2", exact=True)
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    bar.click()
    sheet = page.get_by_role("dialog", name="Sources")
    expect(sheet).to_be_visible()
    expect(sheet.locator(".source-row")).to_have_count(2)
    expect(sheet.get_by_role("heading", name="Cited Sources")).to_be_visible()
    expect(sheet.get_by_role("heading", name="More")).to_have_count(0)
    expect(sheet.get_by_role("heading", name="User Files")).to_have_count(0)
    page.screenshot(path=SCREENSHOT)

    # "Sapphire Preferred" opens its account page directly.
    sapphire = sheet.get_by_role("link", name=re.compile("Sapphire Preferred"))
    expect(sapphire).to_have_attribute("href", accounts["Sapphire Preferred"][0][1])

    # "Credit card" names two accounts: a chooser lists both, by their real names.
    sheet.get_by_role("button", name=re.compile("Credit card")).click()
    chooser = sheet.locator(".chooser:popover-open")
    expect(chooser).to_be_visible()
    options = chooser.get_by_role("link")
    expect(options).to_have_text(["Credit card · American Express", "Credit card · Citi"])
    expect(chooser).not_to_contain_text("plaid", ignore_case=True)
    chooser.get_by_role("button", name="Cancel").click()
    expect(chooser).to_have_count(0)

    sheet.get_by_role("button", name="Close").click()
    expect(sheet).to_be_hidden()

    # Reloaded, the answer and its sources come from history: once, the same.
    page.wait_for_timeout(3500)  # longer than an EventSource's reconnect delay
    assert len(streams) == 1
    page.reload()
    expect(page.locator(".message.assistant")).to_have_count(1)
    expect(page.locator(".message.assistant .answer-body")).to_contain_text("$4,782.07")
    assert page.locator(".answer-body").inner_text().count("In total you owe") == 1
    expect(page.get_by_role("button", name="Sources · 2", exact=True)).to_be_visible()
    page.wait_for_timeout(500)
    assert len(streams) == 1

    # An option of the chooser opens that card's account page.
    page.get_by_role("button", name="Sources · 2", exact=True).click()
    page.get_by_role("dialog", name="Sources").get_by_role(
        "button", name=re.compile("Credit card")
    ).click()
    page.locator(".chooser:popover-open").get_by_role("link", name="Credit card · Citi").click()
    citi = next(path for where, path in accounts["Credit card"] if where == "Citi")
    expect(page).to_have_url(re.compile(re.escape(citi) + "$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Credit card")
    expect(page.locator("main")).to_contain_text("Citi")

    # The inline number of "Sapphire Preferred" opens its page too.
    page.go_back()
    page.locator(".answer-body").get_by_role("link", name=re.compile("Source 2")).first.click()
    expect(page).to_have_url(re.compile(re.escape(accounts["Sapphire Preferred"][0][1]) + "$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Sapphire Preferred")


def test_the_sources_bar_opens_the_sheet_and_escape_closes_it(signed_in: Page) -> None:
    page = signed_in
    ask(page, CARDS_QUESTION)
    bar = page.get_by_role("button", name="Sources · 2", exact=True)
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    url = page.url
    bar.click()
    sheet = page.get_by_role("dialog", name="Sources")
    expect(sheet).to_be_visible()
    expect(sheet.locator(".source-row")).to_have_count(2)
    assert page.evaluate("document.activeElement.closest('dialog[open]') !== null")
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    assert page.url == url  # the sheet, not the page of sources


def test_back_from_a_cited_account_shows_the_answer(signed_in: Page) -> None:
    page = signed_in
    ask(page, CARDS_QUESTION)
    bar = page.get_by_role("button", name="Sources · 2", exact=True)
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    chat = page.url
    shown = page.locator(".answer-body").inner_text()
    bar.click()
    page.get_by_role("dialog", name="Sources").get_by_role(
        "link", name=re.compile("Sapphire Preferred")
    ).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sapphire Preferred")

    page.go_back()
    expect(page).to_have_url(chat)
    answer = page.locator("article.message.assistant")
    expect(answer).to_have_count(1)
    expect(answer.locator(".answer-body")).to_have_text(shown, use_inner_text=True)
    expect(answer).not_to_have_attribute("aria-busy", "true")
    expect(page.get_by_role("button", name="Sources · 2", exact=True)).to_be_visible()
    expect(answer.locator(".answer-interrupted")).to_have_count(0)


def test_tap_a_citation_of_two_cards_and_choose_one(signed_in: Page) -> None:
    page = signed_in
    ask(page, CARDS_QUESTION)
    expect(page.get_by_role("button", name="Sources · 2", exact=True)).to_be_visible(
        timeout=ANSWER_TIMEOUT
    )
    page.locator(".answer-body").get_by_role("button", name=re.compile("Source 1")).first.click()
    chooser = page.locator(".chooser:popover-open")
    expect(chooser.get_by_role("link")).to_have_count(2)
    page.keyboard.press("Escape")
    expect(chooser).to_have_count(0)


def test_read_a_cited_tax_law_in_the_app_with_the_original_a_click_away(
    signed_in: Page,
) -> None:
    page = signed_in
    ask(page, TAX_QUESTION)
    bar = page.get_by_role("button", name=re.compile(r"^Sources · \d+$"))
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    reader = re.compile(r"^/library/tax-authority/usc/title-26/section-121\.md\?cite=.+#cited$")
    inline = page.locator(".answer-body a.cite").first
    expect(inline).to_have_attribute("href", reader)
    expect(inline).not_to_have_attribute("target", "_blank")
    bar.click()
    item = page.get_by_role("dialog", name="Sources").locator(".source-list li").first
    expect(item.locator("a.source-row")).to_have_attribute("href", reader)
    expect(item.locator(".source-meta")).to_have_text(re.compile(r"^uscode\.house\.gov"))
    original = item.get_by_role("link", name="Open the original at uscode.house.gov")
    expect(original).to_have_attribute("href", re.compile(r"^https://uscode\.house\.gov/"))
    expect(original).to_have_attribute("target", "_blank")
    expect(original).to_have_attribute("rel", "noopener noreferrer")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog", name="Sources")).to_be_hidden()
    inline.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("26 U.S.C. § 121")
    expect(page.locator(".library-body mark#cited")).to_be_in_viewport()
    expect(
        page.get_by_role("link", name="Open the original at uscode.house.gov")
    ).to_have_attribute("href", re.compile(r"^https://uscode\.house\.gov/view\.xhtml"))


def test_ask_and_open_the_sources_without_loading_anything_from_another_site(
    signed_in: Page, live_server: LiveServer
) -> None:
    page = signed_in
    hosts: set[str] = set()
    page.on("request", lambda r: hosts.add(r.url.split("/")[2]))
    ask(page, "What is an index fund?")
    expect(page.get_by_role("button", name=re.compile(r"^Sources · \d+$"))).to_be_visible(
        timeout=ANSWER_TIMEOUT
    )
    page.get_by_role("button", name=re.compile(r"^Sources · \d+$")).click()
    expect(page.locator("dialog .source-icon").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert hosts == {live_server.url.split("/")[2]}
