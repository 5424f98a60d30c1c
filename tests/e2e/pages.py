"""Steps a person takes in the browser, shared by the browser tests."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect


def sign_in(
    page: Page, username: str = "demo", password: str = "demo", *, server: str = ""
) -> None:
    """Sign in on `server` (the default test server when empty)."""
    page.goto(f"{server}/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def new_chat(page: Page) -> None:
    """Start a new chat and wait until its page has replaced the one before."""
    page.evaluate("window.__beforeNewChat = true")
    page.get_by_role("button", name="+ New chat").click()
    # Without this wait the next step can type into the old page while the new one loads.
    page.wait_for_function("window.__beforeNewChat === undefined")
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    expect(page.locator(".message")).to_have_count(0)
    # The new page's scripts and styles too: Enter sends only once app.js runs.
    page.wait_for_load_state()


def ask(page: Page, question: str) -> None:
    """Type `question` and press Enter, once the page has loaded (before, Enter is a newline)."""
    page.wait_for_load_state()
    box = page.get_by_label("Message")
    box.fill(question)
    box.press("Enter")
    expect(page.locator(".message.user .bubble").last).to_have_text(question)
    # The question shows at once; wait for the server's copy and its answer to take its place.
    expect(page.locator(".message.is-pending")).to_have_count(0, timeout=20_000)
