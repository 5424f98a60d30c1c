"""Regenerate an answer and flip between its versions, and edit a question, in the browser:
the Procfile's gunicorn with Claude answering from the fake, axe on each new state."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.support.fake_claude import FakeClaude, HttpError, text_reply

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
CARDS = "What do I owe on my credit cards?"
HOLDINGS = "How is my portfolio invested?"
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
LOOKS: dict[str, dict[str, Any]] = {
    f"{screen}-{scheme}": {**size, "color_scheme": scheme}
    for screen, size in (("desktop", DESKTOP), ("phone", PHONE))
    for scheme in ("light", "dark")
}
AXE = Axe()


@pytest.fixture(params=list(LOOKS))
def look(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def person(
    browser: Browser, slow_server: LiveServer, slow_model: FakeClaude, look: str
) -> Iterator[Page]:
    """A signed-in person in a new chat on the fake-Claude server (CSP bypassed for axe)."""
    context = browser.new_context(base_url=slow_server.url, bypass_csp=True, **LOOKS[look])
    page = context.new_page()
    sign_in(page, server=slow_server.url)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    new_chat(page)
    yield page
    slow_model.replies = []
    context.close()


@pytest.fixture
def audit(a11y_screenshots: Path, look: str) -> Iterator[Callable[[Page, str], None]]:
    """Screenshot each state and fail at the end with axe's serious or critical findings."""
    found: list[str] = []

    def check(page: Page, state: str) -> None:
        page.screenshot(path=a11y_screenshots / f"versions-{look}-{state}.png", full_page=True)
        for violation in AXE.run(page).response["violations"]:
            if violation["impact"] in {"serious", "critical"}:
                targets = [" ".join(node["target"]) for node in violation["nodes"]]
                found.append(f"{state}: {violation['id']} {violation['help']}: {targets}")

    yield check
    assert not found, "\n".join(found)


def _sent(model: FakeClaude) -> list[tuple[str, str]]:
    """Return the last request's conversation: (role, text), oldest first."""
    sent = []
    for message in model.requests[-1]["messages"]:
        content = message["content"]
        if isinstance(content, list):
            content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        sent.append((message["role"], str(content)))
    return sent


def _answered(page: Page, text: str) -> None:
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".answer-body")).to_have_text(text, timeout=TIMEOUT)
    expect(answer).not_to_have_attribute("aria-busy", "true", timeout=TIMEOUT)


def test_person_regenerates_an_answer_and_flips_versions(
    person: Page, slow_model: FakeClaude, audit: Callable[[Page, str], None]
) -> None:
    page = person
    slow_model.replies = [text_reply(("First answer.", [])), text_reply(("Second answer.", []))]
    ask(page, CARDS)
    _answered(page, "First answer.")
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".versions")).to_have_count(0)
    answer.get_by_role("button", name="Regenerate").click()

    # The question is not asked again: the new version is written in the old one's place.
    _answered(page, "Second answer.")
    expect(page.locator(".message.user .bubble")).to_have_text([CARDS])
    expect(page.locator("article.message.assistant")).to_have_count(1)
    assert _sent(slow_model) == [("user", CARDS)]
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".version-count")).to_have_text("Version 2 / 2")
    expect(answer.get_by_role("button", name="Next version")).to_be_disabled()
    audit(page, "two-versions")

    answer.get_by_role("button", name="Previous version").click()
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".answer-body")).to_have_text("First answer.")
    expect(answer.locator(".version-count")).to_have_text("Version 1 / 2")
    # The focus stays on the versions, now on the one button that goes somewhere.
    expect(answer.get_by_role("button", name="Next version")).to_be_focused()
    audit(page, "first-of-two")

    # The choice is kept across a reload.
    page.reload()
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".answer-body")).to_have_text("First answer.")
    expect(answer.locator(".version-count")).to_have_text("Version 1 / 2")
    answer.get_by_role("button", name="Next version").click()
    expect(page.locator("article.message.assistant .answer-body")).to_have_text("Second answer.")


def test_person_retries_a_failed_answer_in_its_place(
    person: Page, slow_model: FakeClaude, audit: Callable[[Page, str], None]
) -> None:
    page = person
    # The model refuses the first request outright (nothing to retry by itself), then answers.
    refused = HttpError(400, {"type": "error", "error": {"type": "invalid_request_error"}})
    slow_model.replies = [refused, text_reply(("You owe $4,782.07.", []))]
    ask(page, CARDS)
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".answer-error")).to_be_visible(timeout=TIMEOUT)
    audit(page, "failed-with-retry")
    answer.get_by_role("button", name="Retry").click()
    _answered(page, "You owe $4,782.07.")
    expect(page.locator(".message.user .bubble")).to_have_text([CARDS])
    expect(page.locator("article.message.assistant")).to_have_count(1)
    expect(page.locator(".version-count")).to_have_text("Version 2 / 2")
    # The failed version is still there, one step back.
    page.get_by_role("button", name="Previous version").click()
    expect(page.locator("article.message.assistant .answer-error")).to_be_visible()


def test_person_edits_a_question(
    person: Page, slow_model: FakeClaude, audit: Callable[[Page, str], None]
) -> None:
    page = person
    slow_model.replies = [
        text_reply(("About your cards.", [])),
        text_reply(("About your portfolio.", [])),
        text_reply(("About your Citi card.", [])),
    ]
    ask(page, CARDS)
    _answered(page, "About your cards.")
    ask(page, HOLDINGS)
    _answered(page, "About your portfolio.")

    # Only the latest answer offers Regenerate, though the first was drawn with it.
    expect(page.get_by_role("button", name="Regenerate")).to_have_count(1)
    first = page.locator("article.message.user").first
    first.get_by_role("link", name="Edit this question").click()
    box = page.get_by_label("Edit your question")
    expect(box).to_be_focused()
    expect(box).to_have_value(CARDS)
    audit(page, "editing-a-question")
    box.fill("What do I owe on my Citi card?")
    page.get_by_role("button", name="Save and ask").click()

    # Asked in its place: what followed the old question has left the chat.
    _answered(page, "About your Citi card.")
    expect(page.locator(".message.user .bubble")).to_have_text(["What do I owe on my Citi card?"])
    expect(page.locator("article.message.assistant")).to_have_count(1)
    assert _sent(slow_model) == [("user", "What do I owe on my Citi card?")]
    assert "About your portfolio." not in json.dumps(slow_model.requests[-1]["messages"])
    audit(page, "edited")
    page.reload()
    expect(page.locator(".message.user .bubble")).to_have_text(["What do I owe on my Citi card?"])
    expect(page.locator("article.message.assistant .answer-body")).to_have_text(
        "About your Citi card."
    )


def _until(page: Page, locator: Any) -> None:
    """Reload until `locator` shows: without JavaScript the page refreshes while it answers."""
    for _ in range(20):
        if locator.count():
            return
        page.wait_for_timeout(500)
        page.reload()
    expect(locator.first).to_be_visible()


def test_person_without_javascript_regenerates_flips_and_edits(
    browser: Browser, live_server: LiveServer, a11y_screenshots: Path
) -> None:
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    try:
        sign_in(page)
        page.get_by_role("button", name="+ New chat").click()
        page.get_by_label("Message").fill(CARDS)
        page.get_by_role("button", name="Send").click()
        _until(page, page.get_by_role("button", name="Regenerate"))
        page.get_by_role("button", name="Regenerate").click()
        _until(page, page.locator(".version-count"))
        _until(page, page.get_by_role("button", name="Regenerate"))
        expect(page.locator(".version-count")).to_have_text("Version 2 / 2")
        expect(page.locator(".message.user .bubble")).to_have_text([CARDS])
        page.get_by_role("button", name="Previous version").click()
        expect(page.locator(".version-count")).to_have_text("Version 1 / 2")
        page.screenshot(path=a11y_screenshots / "versions-no-js-first-of-two.png", full_page=True)

        page.get_by_role("link", name="Edit this question").click()
        page.get_by_label("Edit your question").fill(HOLDINGS)
        page.screenshot(path=a11y_screenshots / "versions-no-js-editing.png", full_page=True)
        page.get_by_role("button", name="Save and ask").click()
        _until(page, page.get_by_role("button", name="Regenerate"))
        expect(page.locator(".message.user .bubble")).to_have_text([HOLDINGS])
        expect(page.locator("article.message.assistant")).to_have_count(1)
        expect(page.locator(".version-count")).to_have_count(0)
    finally:
        context.close()
