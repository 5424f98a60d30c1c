"""Stop an answer while it is written, and answer its question again in its place after it
stopped or failed: with a model slow enough to stop (the fake Claude, writing a few characters
every 50 ms)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.support.fake_claude import FakeClaude, HttpError, Paced, text_reply
from webapp.chat.conversations import session_messages
from webapp.chat.records import MessageRow
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
QUESTION = "What do I owe on my credit cards?"
# About a minute at 7 characters every 50 ms: it is still being written when Stop is pressed.
LONG_TEXT = "Your cards add up slowly, one careful sentence after another. " * 150
SHORT_ANSWER = "You owe $4,782.07 across your two cards."


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def slow_chat(page: Page, slow_server: LiveServer, slow_model: FakeClaude) -> Iterator[Page]:
    """A new chat on the slow-model server; its first answer streams for about a minute."""
    slow_model.replies = [Paced(text_reply((LONG_TEXT, [])), 0.05)]
    sign_in(page, server=slow_server.url)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    new_chat(page)
    yield page
    slow_model.replies = []


def stop_while_streaming(page: Page) -> Locator:
    """Ask, wait for the first words, press Stop; return the answer."""
    ask(page, QUESTION)
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".answer-body")).to_contain_text("Your cards add up", timeout=TIMEOUT)
    expect(answer).to_have_attribute("aria-busy", "true")
    answer.get_by_role("button", name="Stop").click()
    expect(answer.locator(".answer-stopped")).to_have_text("Stopped.", timeout=TIMEOUT)
    return answer


def stored_answers(server: LiveServer, session_id: str) -> list[MessageRow]:
    engine = get_engine(server.app)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    return [m for m in session_messages(engine, user.id, session_id) if m.role == "assistant"]


def test_stop_an_answer_mid_stream(slow_chat: Page, slow_server: LiveServer) -> None:
    page = slow_chat
    answer = stop_while_streaming(page)

    # The stream has ended: no Stop, no cursor, the question box is free; Retry is offered.
    expect(answer.get_by_role("button", name="Stop")).to_have_count(0)
    expect(answer).not_to_have_attribute("aria-busy", "true")
    expect(answer.locator(".answer-body")).not_to_have_class(re.compile("is-streaming"))
    expect(answer.get_by_role("button", name="Retry")).to_be_visible()
    expect(page.locator("#composer")).not_to_have_class(re.compile("is-busy"))
    # What was written is kept: the start of the answer, not all of it.
    shown = words(answer.locator(".answer-body").inner_text())
    assert shown and words(LONG_TEXT).startswith(shown) and len(shown) < len(words(LONG_TEXT))

    session_id = page.url.rsplit("/", 1)[1]
    (stored,) = stored_answers(slow_server, session_id)
    assert stored.status == "cancelled" and words(stored.content) == shown
    # The page drawn from history says the same.
    page.reload()
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".answer-stopped")).to_have_text("Stopped.")
    expect(answer.get_by_role("button", name="Stop")).to_have_count(0)
    expect(answer.get_by_role("button", name="Retry")).to_be_visible()
    assert words(answer.locator(".answer-body").inner_text()) == shown


def test_a_slow_press_of_stop_stops_though_the_text_goes_on_arriving(slow_chat: Page) -> None:
    # A press takes a moment (a person's, or a browser's on a loaded machine); each line of
    # text that came meanwhile moved Stop down, and a release off the button clicked nothing.
    page = slow_chat
    ask(page, QUESTION)
    answer = page.locator("article.message.assistant").last
    expect(answer.locator(".answer-body")).to_contain_text("Your cards add up", timeout=TIMEOUT)
    stop = answer.get_by_role("button", name="Stop")
    # Text goes on arriving between reading where Stop is and pressing there: a press that
    # lands off it (it moved first) is let go and made again where it is now.
    for _ in range(10):
        box = stop.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        if stop.evaluate("button => button.matches(':active')"):
            break
        page.mouse.up()
    else:
        pytest.fail("no press landed on Stop")
    box = stop.bounding_box()
    page.wait_for_timeout(2_000)  # some 280 characters at the model's pace: lines of text
    assert stop.bounding_box() == box
    # A whole fragment the stream swaps in (as after a reconnect) waits too: htmx's SSE
    # extension asks first, and the swap is refused while Stop is held.
    refused = answer.locator(".answer").evaluate(
        """fragment => !fragment.dispatchEvent(new CustomEvent("htmx:sseBeforeMessage", {
            bubbles: true, cancelable: true, detail: {data: fragment.innerHTML}}))"""
    )
    assert refused
    page.mouse.up()
    expect(answer.locator(".answer-stopped")).to_have_text("Stopped.", timeout=TIMEOUT)


def test_retry_a_stopped_answer_in_its_place(
    slow_chat: Page, slow_server: LiveServer, slow_model: FakeClaude
) -> None:
    page = slow_chat
    slow_model.replies.append(text_reply((SHORT_ANSWER, [])))
    stopped = stop_while_streaming(page)
    stopped.get_by_role("button", name="Retry").click()

    # The question is answered again in full, in the stopped answer's place (not repeated).
    expect(page.locator(".message.user .bubble")).to_have_text([QUESTION])
    retried = page.locator("article.message.assistant").last
    expect(retried.locator(".answer-body")).to_have_text(SHORT_ANSWER, timeout=TIMEOUT)
    expect(page.locator("article.message.assistant")).to_have_count(1)
    expect(retried.get_by_role("button", name="Retry")).to_have_count(0)
    expect(retried.get_by_role("button", name="Stop")).to_have_count(0)
    expect(retried.locator(".version-count")).to_have_text("Version 2 / 2")
    asked = slow_model.requests[-1]["messages"]
    assert len(asked) == 1 and QUESTION in json.dumps(asked[0]["content"])
    session_id = page.url.rsplit("/", 1)[1]
    (shown,) = stored_answers(slow_server, session_id)
    assert shown.status == "complete" and shown.version_of is not None


def test_retry_a_failed_answer_in_its_place(
    page: Page, slow_server: LiveServer, slow_model: FakeClaude
) -> None:
    # The model refuses the first request outright (nothing to retry by itself), then answers.
    slow_model.replies = [
        HttpError(400, {"type": "error", "error": {"type": "invalid_request_error"}}),
        text_reply((SHORT_ANSWER, [])),
    ]
    try:
        sign_in(page, server=slow_server.url)
        expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
        new_chat(page)
        ask(page, QUESTION)
        failed = page.locator("article.message.assistant").last
        expect(failed.locator(".answer-error")).to_be_visible(timeout=TIMEOUT)
        expect(failed.get_by_role("button", name="Copy")).to_have_count(0)
        failed.get_by_role("button", name="Retry").click()

        expect(page.locator(".message.user .bubble")).to_have_text([QUESTION])
        retried = page.locator("article.message.assistant").last
        expect(retried.locator(".answer-body")).to_have_text(SHORT_ANSWER, timeout=TIMEOUT)
        expect(page.locator("article.message.assistant")).to_have_count(1)
        expect(retried.get_by_role("button", name="Retry")).to_have_count(0)
        session_id = page.url.rsplit("/", 1)[1]
        (shown,) = stored_answers(slow_server, session_id)
        assert shown.status == "complete" and shown.version_of is not None
    finally:
        slow_model.replies = []
