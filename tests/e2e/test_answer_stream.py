"""An answer streaming into a real browser: blocks that are done are drawn once and stay, only
the open ones change, and what was streamed is what the final answer shows. The model is the
fake Claude, writing one small piece every 150 ms and waiting for the test at two points."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.support.fake_claude import FakeClaude, Paced, text_reply

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
TEXT = (
    "Your card's balance is **$4,782.07**, due on the 14th.\n\n"
    "- Pay it in full\n- Or at least the minimum 😀\n\n"
    "A paragraph long enough to come in several flushes ends here.\n\nThe end."
)
# More than the stream's throttle: every piece is its own flush.
PACE = 0.15
# The page's answer body as it will be once the stream ends: `.answer-settled` unwrapped.
UNWRAPPED = """() => { const body = document.querySelector('.answer-body').cloneNode(true);
  const settled = body.querySelector(':scope > .answer-settled');
  if (settled) settled.replaceWith(...settled.childNodes);
  return body.innerHTML; }"""


class Gated(list[dict[str, Any]]):
    """A model's events that stop to wait for the test: after the text that starts the list
    (the first paragraph is then settled), and before the message ends."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        super().__init__(events)
        self.settled, self.end = threading.Event(), threading.Event()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        text = ""
        for event in super().__iter__():
            if event["type"] == "message_delta":
                self.end.wait(TIMEOUT / 1000)
            yield event
            text += event.get("delta", {}).get("text", "")
            if "\n\n- Pay" in text and not self.settled.is_set():
                self.settled.wait(TIMEOUT / 1000)

    def open(self) -> None:
        self.settled.set()
        self.end.set()


@pytest.fixture
def gated(slow_model: FakeClaude) -> Iterator[Gated]:
    """Make the slow server's next answer `TEXT`, paced, waiting at the gates."""
    events = Gated(text_reply((TEXT, [])))
    slow_model.replies = [Paced(events, PACE)]
    yield events
    events.open()
    slow_model.replies = []


def test_watch_an_answer_being_written_without_it_flickering(
    page: Page, slow_server: LiveServer, gated: Gated
) -> None:
    sign_in(page, server=slow_server.url)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    new_chat(page)
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if r.url.endswith("/events") else None)
    ask(page, "What do I owe?")

    answer = page.locator("article.message.assistant")
    first = answer.locator(".answer-body.is-streaming > .answer-settled > p").first
    expect(first).to_contain_text("$4,782.07", timeout=TIMEOUT)
    expect(first.locator("strong")).to_have_text("$4,782.07")
    expect(answer.locator(".thinking")).to_have_count(0)
    first.evaluate("p => { p.seen = true; }")  # a paragraph drawn again would not have it
    gated.settled.set()

    body = answer.locator(".answer-body.is-streaming")
    expect(body).to_contain_text("The end.", timeout=TIMEOUT)
    expect(body.locator(":scope > .answer-settled > ul > li")).to_have_count(2)
    assert first.evaluate("p => p.seen === true")
    # The open block is drawn last, where the streaming cursor goes.
    assert body.evaluate("b => b.lastElementChild.tagName") == "P"
    streamed = page.evaluate(UNWRAPPED)
    gated.end.set()

    expect(answer.locator(".answer-body")).not_to_have_class(
        re.compile("is-streaming"), timeout=TIMEOUT
    )
    expect(answer.get_by_role("button", name="Copy")).to_be_visible()
    assert page.evaluate(UNWRAPPED) == streamed
    assert answer.locator(".answer-body").inner_text().count("ends here.") == 1
    assert answer.locator(".answer-body").inner_text().count("The end.") == 1
    assert answer.locator(".answer-body").inner_text().count("😀") == 1
    assert len(streams) == 1
