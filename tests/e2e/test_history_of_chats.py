"""The history of chats as a person uses it: on a phone the `Chats` dialog with its day
headings; `Search chats` as you type, and without JavaScript; axe on each new state."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import sign_in
from webapp.chat.tables import ai_chat_logs, chat_sessions
from webapp.store.app_db import get_engine
from webapp.store.users import create_user

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

PASSWORD = "a long password"
BLOCKING = {"serious", "critical"}
AXE = Axe()
DESKTOP: dict[str, Any] = {"viewport": {"width": 1280, "height": 800}}
PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
}
# (title, answer, days ago): chats under three day headings.
CHATS = [
    ("Escrow on my mortgage", "Your lender keeps an escrow account for taxes.", 0),
    ("Card balances", "You owe $1,842.17 across two cards.", 0),
    ("Roth limits", "You may put in $7,000 for 2025.", 1),
    ("Home sale taxes", "Up to $250,000 of gain is excluded.", 40),
]


def person_with_chats(
    live_server: LiveServer, chats: list[tuple[str, str, int]] = CHATS
) -> tuple[str, dict[str, str]]:
    """Make a user with `chats`; return the username and each chat's id by title."""
    engine = get_engine(live_server.app)
    name = f"h{uuid.uuid4().hex[:10]}"
    user = create_user(engine, name, PASSWORD)
    now = datetime.now(UTC)
    ids: dict[str, str] = {}
    with engine.begin() as conn:
        for n, (title, answer, days) in enumerate(chats):
            # a millisecond apart, newest first: spread by minutes, the "today" chats of a run
            # in the hour after midnight fell under "Yesterday"
            at = now - timedelta(days=days, milliseconds=n)
            ids[title] = uuid.uuid4().hex
            conn.execute(
                chat_sessions.insert().values(
                    id=ids[title], user_id=user.id, title=title, created_at=at, updated_at=at
                )
            )
            for role, content in (("user", f"{title}?"), ("assistant", answer)):
                conn.execute(
                    ai_chat_logs.insert().values(
                        id=uuid.uuid4().hex,
                        session_id=ids[title],
                        user_id=user.id,
                        role=role,
                        content=content,
                        status="complete",
                        created_at=at,
                        completed_at=at,
                    )
                )
    return name, ids


def audit(page: Page, folder: Path, state: str) -> list[str]:
    """Screenshot the page, run axe on it; return its serious or critical violations."""
    page.screenshot(path=folder / f"{state}.png", full_page=True)
    found = []
    for violation in AXE.run(page).response["violations"]:
        if violation["impact"] in BLOCKING:
            targets = [" ".join(node["target"]) for node in violation["nodes"]]
            found.append(f"{state}: {violation['id']} {violation['help']}: {targets}")
    return found


@pytest.fixture(params=["light", "dark"])
def scheme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _page(browser: Browser, base_url: str, look: dict[str, Any], scheme: str) -> Iterator[Page]:
    # Only for axe: bypassing the CSP lets it be injected.
    context = browser.new_context(base_url=base_url, bypass_csp=True, color_scheme=scheme, **look)  # type: ignore[arg-type]
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def phone(browser: Browser, base_url: str, scheme: str) -> Iterator[Page]:
    yield from _page(browser, base_url, PHONE, scheme)


@pytest.fixture
def desktop(browser: Browser, base_url: str, scheme: str) -> Iterator[Page]:
    yield from _page(browser, base_url, DESKTOP, scheme)


def test_person_on_a_phone_opens_chats_and_picks_one(
    phone: Page, live_server: LiveServer, a11y_screenshots: Path, scheme: str
) -> None:
    page = phone
    name, ids = person_with_chats(live_server)
    sign_in(page, name, PASSWORD)
    expect(page).to_have_url(re.compile(rf"/chat/{ids['Escrow on my mortgage']}$"))
    page.wait_for_load_state()
    # No sideways strip: the list waits behind the Chats button.
    expect(page.get_by_role("link", name="Card balances")).to_be_hidden()
    button = page.get_by_role("button", name="Chats")
    button.click()
    dialog = page.get_by_role("dialog", name="Chats")
    expect(dialog).to_be_visible()
    headings = dialog.locator(".session-day")
    expect(headings).to_have_text(["Today", "Yesterday", re.compile(r"^\w+ \d{4}$")])
    expect(dialog.get_by_role("searchbox", name="Search chats")).to_be_visible()
    # One column that fits the screen, not a strip of chats sideways.
    fits = "el => el.scrollWidth <= el.clientWidth && el.getBoundingClientRect().right <= 390"
    assert dialog.locator("#sessions").evaluate(fits)
    assert page.locator("aside.sidebar").evaluate(fits)
    problems = audit(page, a11y_screenshots, f"phone-{scheme}-chats-dialog")

    # Focus stays in the dialog (the page behind is inert) and Escape gives it back.
    for _ in range(12):
        page.keyboard.press("Tab")
        inside = page.evaluate("!!document.activeElement.closest('#chats-dialog')")
        assert inside or page.evaluate("document.activeElement === document.body")
    behind = "(() => { const m = document.getElementById('message'); m.focus(); return document.activeElement === m; })()"
    assert page.evaluate(behind) is False
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(button).to_be_focused()

    # Open it again and pick a chat from yesterday.
    button.click()
    dialog.get_by_role("link", name="Roth limits").click()
    expect(page).to_have_url(re.compile(rf"/chat/{ids['Roth limits']}$"))
    expect(page.locator(".message.user .bubble")).to_have_text("Roth limits?")
    page.get_by_role("button", name="Chats").click()
    current = page.get_by_role("dialog", name="Chats").get_by_role("link", name="Roth limits")
    expect(current).to_have_attribute("aria-current", "page")
    assert not problems, "\n".join(problems)


def test_person_searches_chats(
    desktop: Page, live_server: LiveServer, a11y_screenshots: Path, scheme: str
) -> None:
    page = desktop
    name, ids = person_with_chats(live_server)
    sign_in(page, name, PASSWORD)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    page.wait_for_load_state()
    page.evaluate("window.__samePage = true")
    box = page.get_by_role("searchbox", name="Search chats")
    # By the words of an answer: the results come as you type, in place of the list.
    box.press_sequentially("250,000")
    results = page.locator(".search-results")
    expect(results.locator("a.result-link")).to_have_text(["Home sale taxes"])
    expect(results.locator("mark")).to_have_text("250,000")
    expect(page.get_by_role("status").filter(has_text="1 chat found")).to_be_attached()
    expect(page.locator("#sessions")).to_be_hidden()
    problems = audit(page, a11y_screenshots, f"desktop-{scheme}-search-results")
    # By title, and nothing at all.
    box.fill("card")
    expect(results.locator("a.result-link")).to_have_text(["Card balances"])
    box.fill("zzz nothing")
    expect(page.locator(".search-results h2")).to_have_text("No chats with “zzz nothing”")
    # Cleared, the list is back; nothing reloaded the page.
    box.fill("")
    expect(page.locator("#sessions")).to_be_visible()
    expect(page.locator(".search-results")).to_have_count(0)
    assert page.evaluate("window.__samePage === true")
    box.fill("roth")
    page.locator(".search-results").get_by_role("link", name="Roth limits").click()
    expect(page).to_have_url(re.compile(rf"/chat/{ids['Roth limits']}$"))

    # On a phone, in the Chats dialog.
    page.set_viewport_size(PHONE["viewport"])
    page.get_by_role("button", name="Chats").click()
    dialog = page.get_by_role("dialog", name="Chats")
    dialog.get_by_role("searchbox", name="Search chats").press_sequentially("escrow")
    expect(dialog.locator("a.result-link")).to_have_text(["Escrow on my mortgage"])
    problems += audit(page, a11y_screenshots, f"phone-{scheme}-search-results")
    assert not problems, "\n".join(problems)


def test_person_searches_chats_without_javascript(
    browser: Browser, base_url: str, live_server: LiveServer
) -> None:
    name, ids = person_with_chats(live_server)
    context = browser.new_context(base_url=base_url, java_script_enabled=False, **PHONE)
    try:
        page = context.new_page()
        sign_in(page, name, PASSWORD)
        # On a phone the Chats button is a link to the Chats page.
        page.get_by_role("button", name="Chats").click()
        expect(page).to_have_url(re.compile(r"/chats$"))
        expect(page.locator(".session-day")).to_have_count(3)
        box = page.get_by_role("searchbox", name="Search chats")
        box.fill("excluded")
        box.press("Enter")
        expect(page).to_have_url(re.compile(r"/chats\?q=excluded"))
        page.get_by_role("link", name="Home sale taxes").click()
        expect(page).to_have_url(re.compile(rf"/chat/{ids['Home sale taxes']}$"))
    finally:
        context.close()


def test_person_reaches_older_chats_with_more_chats(
    desktop: Page, live_server: LiveServer, scheme: str
) -> None:
    page = desktop
    chats = [(f"Question number {n}", "An answer.", 0) for n in range(60)]
    name, ids = person_with_chats(live_server, chats)
    sign_in(page, name, PASSWORD)
    page.wait_for_load_state()
    page.evaluate("window.__samePage = true")
    links = page.locator("#sessions a.session-link")
    expect(links).to_have_count(50)
    page.get_by_role("link", name="More chats").click()
    expect(links).to_have_count(60)
    expect(page.get_by_role("link", name="More chats")).to_have_count(0)
    # Focus lands on the first chat of the new page; one "Today" heading for all of them.
    expect(page.get_by_role("link", name="Question number 50", exact=True)).to_be_focused()
    expect(page.locator("#sessions .session-day")).to_have_text(["Today"])
    assert page.evaluate("window.__samePage === true")
    page.get_by_role("link", name="Question number 59", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/chat/{ids['Question number 59']}$"))
