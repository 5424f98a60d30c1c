"""An answer streaming into a real browser: blocks that are done are drawn once and stay, only
the open ones change, and what was streamed is what the final answer shows."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.support.answer_stream import packet
from webapp.chat.store import StoredEvent
from webapp.web.extension import chat_service

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
TEXT = (
    "Your card's balance is **$4,782.07** [[1]](https://www.irs.gov/a).\n\n"
    "- Pay it in full [[2]](https://www.irs.gov/b)\n- Or at least the minimum 😀\n\n"
    "A paragraph long enough to come in several flushes ends here.\n\nThe end."
)
DOCS = [
    {
        "document_id": f"d{n}",
        "semantic_identifier": f"IRS page {n}",
        "link": f"https://www.irs.gov/{'ab'[n - 1]}",
    }
    for n in (1, 2)
]
# The page's answer body as it will be once the stream ends: `.answer-settled` unwrapped.
UNWRAPPED = """() => { const body = document.querySelector('.answer-body').cloneNode(true);
  const settled = body.querySelector(':scope > .answer-settled');
  if (settled) settled.replaceWith(...settled.childNodes);
  return body.innerHTML; }"""


class Gates:
    """Points where the stream waits for the test: after its first block settles, at the end."""

    def __init__(self) -> None:
        self.settled, self.end = threading.Event(), threading.Event()


def events(gates: Gates) -> Iterator[StoredEvent | None]:
    chunks = [TEXT[i : i + 12] for i in range(0, len(TEXT), 12)]
    datas = [
        packet({"type": "search_tool_documents_delta", "documents": DOCS}),
        packet({"type": "message_start", "final_documents": None}),
    ]
    datas += [
        packet({"type": "citation_info", "citation_number": n, "document_id": f"d{n}"})
        for n in (1, 2)
    ]
    seq = 0
    for data in datas:
        seq += 1
        yield StoredEvent(seq, "packet", data)
    text = ""
    for chunk in chunks:
        seq += 1
        text += chunk
        time.sleep(0.15)  # more than the stream's throttle: every chunk is its own flush
        yield StoredEvent(seq, "packet", packet({"type": "message_delta", "content": chunk}))
        if "\n\n- Pay" in text and not gates.settled.is_set():
            time.sleep(0.15)
            gates.settled.wait(TIMEOUT / 1000)
    gates.end.wait(TIMEOUT / 1000)
    yield StoredEvent(seq + 1, "packet", packet({"type": "stop", "stop_reason": None}))
    yield StoredEvent(seq + 2, "done", json.dumps({"status": "complete"}))


@pytest.fixture
def paced(live_server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gates]:
    """Make the next answer stream a paced, known answer that waits at the gates."""
    with live_server.app.app_context():
        service = chat_service()
    gates = Gates()

    def stream(*args: Any, **kwargs: Any) -> Iterator[StoredEvent | None]:
        return events(gates)

    monkeypatch.setattr(service, "events", stream)
    yield gates
    gates.settled.set()
    gates.end.set()


def test_settled_blocks_stay_and_the_stream_draws_the_final_answer(
    page: Page, paced: Gates
) -> None:
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    new_chat(page)
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if r.url.endswith("/events") else None)
    ask(page, "What do I owe?")

    answer = page.locator("article.message.assistant")
    first = answer.locator(".answer-body.is-streaming > .answer-settled > p").first
    expect(first).to_contain_text("$4,782.07", timeout=TIMEOUT)
    expect(first.locator("a.cite")).to_have_attribute("href", "https://www.irs.gov/a")
    expect(answer.locator(".thinking")).to_have_count(0)
    first.evaluate("p => { p.seen = true; }")  # a paragraph drawn again would not have it
    paced.settled.set()

    body = answer.locator(".answer-body.is-streaming")
    expect(body).to_contain_text("The end.", timeout=TIMEOUT)
    expect(body.locator(":scope > .answer-settled > ul > li")).to_have_count(2)
    assert first.evaluate("p => p.seen === true")
    # The open block is drawn last, where the streaming cursor goes.
    assert body.evaluate("b => b.lastElementChild.tagName") == "P"
    streamed = page.evaluate(UNWRAPPED)
    paced.end.set()

    expect(answer.locator(".answer-body")).not_to_have_class(
        re.compile("is-streaming"), timeout=TIMEOUT
    )
    expect(answer.locator(".sources-bar")).to_be_visible()
    assert page.evaluate(UNWRAPPED) == streamed
    assert answer.locator(".answer-body").inner_text().count("ends here.") == 1
    assert answer.locator(".answer-body").inner_text().count("The end.") == 1
    assert answer.locator(".answer-body").inner_text().count("😀") == 1
    assert len(streams) == 1
