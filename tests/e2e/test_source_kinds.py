"""Every kind of source in a real browser: where each opens, the file notice above the sheet,
sources that do nothing, tap targets, and answers whose connection breaks off or never opens."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Locator, Page, Route, ViewportSize, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.e2e.stored import FILE_NOTICE, WEB_URL, store_mixed_answer

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

CARDS_QUESTION = "What do I owe on my credit cards?"
ANSWER_TIMEOUT = 20_000
VIEWPORTS: dict[str, ViewportSize] = {
    "desktop": {"width": 1280, "height": 800},
    "phone": {"width": 390, "height": 844},
}
BAR = re.compile(r"^Sources · (\d+)$")
STREAM = re.compile(r"/events$")
# A web source opens at its cited passage: its first words, then its last (its markdown read
# as the page shows it).
PASSAGE = "#:~:text=You%20can%20exclude%20up,gain%20%28see%20the%20worksheet%29"

# True when the element drawn at the centre of `el` is `el` or inside it: it is on top,
# and not inert behind a modal sheet.
ON_TOP = """el => { const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return hit !== null && el.contains(hit); }"""


@pytest.fixture
def mixed(page: Page, live_server: LiveServer) -> Page:
    """Sign in and open a chat holding a stored answer that cites every kind of source."""
    session_id = store_mixed_answer(live_server.app)
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    page.goto(f"/chat/{session_id}")
    return page


@pytest.fixture
def fresh_chat(page: Page) -> Page:
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    new_chat(page)
    return page


def open_sheet(page: Page) -> tuple[Locator, int]:
    """Open the sources sheet from its bar; return the sheet and the N the bar shows."""
    bar = page.locator(".sources-bar")
    label = " ".join(bar.inner_text().split())
    found = BAR.fullmatch(label)
    assert found, label
    expect(page.get_by_role("button", name=label, exact=True)).to_have_count(1)
    bar.click()
    sheet = page.get_by_role("dialog", name="Sources")
    expect(sheet).to_be_visible()
    return sheet, int(found.group(1))


def test_open_the_sheet_and_find_as_many_sources_as_the_bar_says(mixed: Page) -> None:
    sheet, count = open_sheet(mixed)
    assert count == 7
    expect(sheet.locator(".source-row")).to_have_count(count)
    expect(sheet.get_by_role("heading", level=3)).to_have_text(
        ["Cited Sources", "More", "User Files"]
    )


def test_open_each_kind_of_source_from_the_sheet(mixed: Page) -> None:
    page = mixed
    sheet, _ = open_sheet(page)
    web = sheet.get_by_role("link", name=re.compile(r"^Publication 523"))
    expect(web).to_have_attribute("href", WEB_URL + PASSAGE)
    expect(web).to_have_attribute("target", "_blank")
    expect(web).to_have_attribute("rel", "noopener noreferrer")
    expect(web.locator(".source-snippet")).to_have_text(
        "You can exclude up to $250,000 of gain (see the worksheet)."
    )
    expect(web.locator(".source-snippet mark")).to_have_text("gain")
    expect(sheet.get_by_role("link", name=re.compile(r"^AAPL quote"))).to_have_attribute(
        "href", "/markets/AAPL"
    )
    expect(sheet.get_by_role("link", name=re.compile(r"^Your portfolio"))).to_have_attribute(
        "href", "/portfolio"
    )
    expect(sheet.get_by_role("button", name=re.compile(r"^2024 W-2\.pdf"))).to_contain_text("File")

    sheet.get_by_role("button", name=re.compile(r"^Credit card")).click()
    chooser = sheet.locator(".chooser:popover-open")
    expect(chooser.get_by_role("link")).to_have_text(
        ["Credit card · American Express", "Credit card · Citi"]
    )


def test_tap_a_source_with_nowhere_to_go_and_nothing_happens(mixed: Page) -> None:
    page = mixed
    sheet, _ = open_sheet(page)
    row = sheet.locator(".source-row", has_text="Analyst note")
    expect(row).to_have_count(1)
    name = re.compile("Analyst note")
    expect(sheet.get_by_role("link", name=name)).to_have_count(0)
    expect(sheet.get_by_role("button", name=name)).to_have_count(0)
    assert row.evaluate("el => [el.tagName, el.tabIndex, getComputedStyle(el).cursor]") == [
        "DIV",
        -1,
        "default",
    ]
    url = page.url
    row.click()
    expect(sheet).to_be_visible()
    expect(page.locator("#toast")).to_be_hidden()
    assert page.url == url
    # Its citation opens nothing either: it shows the preview of where its figure comes from.
    inline = page.locator(".answer-body .cite", has_text="3")
    assert inline.evaluate(
        "el => [el.tagName, el.hasAttribute('href'), el.hasAttribute('popovertarget')]"
    ) == ["BUTTON", False, False]


@pytest.mark.parametrize("viewport", list(VIEWPORTS), ids=list(VIEWPORTS))
def test_tap_a_file_and_read_the_notice_above_the_sheet(mixed: Page, viewport: str) -> None:
    page = mixed
    page.set_viewport_size(VIEWPORTS[viewport])
    sheet, _ = open_sheet(page)
    sheet.get_by_role("button", name=re.compile(r"^2024 W-2\.pdf")).click()
    toast = page.locator("#toast")
    expect(toast).to_have_text(FILE_NOTICE)
    expect(toast).to_be_visible()
    assert toast.evaluate(ON_TOP), "the notice is drawn under the sheet"
    # A screen reader hears it: a status outside the modal sheet would be inert.
    expect(sheet.get_by_role("status")).to_have_text(FILE_NOTICE)
    expect(sheet).to_be_visible()

    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    expect(toast).to_be_hidden()
    # Outside the sheet, the inline citation of the same file says the same, on top too.
    page.locator(".answer-body .cite", has_text="2").click()
    expect(toast).to_have_text(FILE_NOTICE)
    assert toast.evaluate(ON_TOP)


def test_open_a_quote_and_the_portfolio_from_their_citations(mixed: Page) -> None:
    page = mixed
    cites = page.locator(".answer-body .cite")
    expect(cites).to_have_text(["1", "2", "3", "4", "5", "6"])
    expect(cites.nth(0)).to_have_attribute("href", WEB_URL + PASSAGE)
    expect(cites.nth(3)).to_have_attribute("href", "/markets/AAPL")
    expect(cites.nth(4)).to_have_attribute("href", "/portfolio")
    cites.nth(3).click()
    expect(page).to_have_url(re.compile(r"/markets/AAPL$"))
    expect(page.locator(".ticker")).to_contain_text("AAPL")
    page.go_back()
    page.locator(".answer-body .cite").nth(4).click()
    expect(page).to_have_url(re.compile(r"/portfolio$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Portfolio")


def test_tap_an_inline_citation_on_a_phone_without_missing(mixed: Page) -> None:
    page = mixed
    page.set_viewport_size(VIEWPORTS["phone"])
    cites = page.locator(".answer-body a.cite, .answer-body button.cite")
    # Six: the one that opens nothing is a button too (it shows its preview).
    expect(cites).to_have_count(6)
    for index in range(6):
        cite = cites.nth(index)
        # Each corner of a 24 x 24 square around the pill's centre still hits the pill.
        corners = cite.evaluate("""el => { const r = el.getBoundingClientRect();
          const x = r.x + r.width / 2, y = r.y + r.height / 2;
          return [[-11.5, -11.5], [11.5, -11.5], [-11.5, 11.5], [11.5, 11.5]].map(([dx, dy]) => {
            const hit = document.elementFromPoint(x + dx, y + dy);
            return hit !== null && el.contains(hit); }).concat([r.height]); }""")
        *hits, height = corners
        assert hits == [True] * 4, cite.inner_text()
        assert height < 20  # drawn compact


def test_hear_a_finished_answer_read_out_once(fresh_chat: Page) -> None:
    page = fresh_chat
    assert page.locator("#conversation").evaluate("el => el.hasAttribute('aria-live')") is False
    ask(page, CARDS_QUESTION)
    expect(page.get_by_role("button", name="Sources · 2", exact=True)).to_be_visible(
        timeout=ANSWER_TIMEOUT
    )
    announcer = page.locator("#announcer")
    expect(announcer).to_contain_text("In total you owe")
    expect(announcer).to_contain_text("Sources · 2")
    # Citation numbers are left out of what is read.
    assert not re.search(r"\$4,782\.07\s*\d", announcer.inner_text())
    expect(page.locator("article.message.assistant")).not_to_have_attribute("aria-busy", "true")


@pytest.fixture
def connection_breaks(page: Page) -> Iterator[list[str]]:
    """Break the page's first answer stream off after its first event, and refuse the
    reconnects that follow, as a network that goes away mid-answer; the server is untouched."""
    cut: list[str] = []

    def handle(route: Route) -> None:
        if cut:
            route.abort("connectionreset")
            return
        # The whole stream as the server sent it; the browser gets only its first event.
        body = route.fetch(timeout=ANSWER_TIMEOUT).text()
        first = next(e for e in body.split("\n\n") if e.startswith("event:"))
        cut.append(first.splitlines()[0])
        route.fulfill(
            status=200,
            headers={"content-type": "text/event-stream", "cache-control": "no-store"},
            body=first + "\n\n",
        )

    page.route(STREAM, handle)
    yield cut
    page.unroute(STREAM)


def test_an_answer_whose_connection_breaks_off_says_so_and_comes_back_on_reload(
    fresh_chat: Page, connection_breaks: list[str]
) -> None:
    page = fresh_chat
    ask(page, CARDS_QUESTION)
    answer = page.locator("article.message.assistant")
    notice = answer.locator(".answer-interrupted")
    expect(notice).to_have_text(
        "The answer was interrupted. Reload the page to continue.", timeout=ANSWER_TIMEOUT
    )
    assert connection_breaks == ["event: answer"]
    expect(answer.locator(".sources-bar")).to_have_count(0)
    expect(page.locator("#composer")).not_to_have_class(re.compile("is-busy"))
    expect(page.locator("#toast")).to_have_text("Connection lost. Reload the page.")

    page.unroute(STREAM)
    notice.get_by_role("link", name="Reload the page").click()
    expect(page.locator(".answer-body")).to_contain_text("$4,782.07", timeout=ANSWER_TIMEOUT)
    expect(page.get_by_role("button", name="Sources · 2", exact=True)).to_be_visible(
        timeout=ANSWER_TIMEOUT
    )
    expect(page.locator(".answer-interrupted")).to_have_count(0)


def test_ask_again_when_an_answer_cannot_connect(fresh_chat: Page) -> None:
    page = fresh_chat
    # As when signed out in another tab: every connection to the stream is refused.
    page.route(STREAM, lambda route: route.fulfill(status=401))
    ask(page, CARDS_QUESTION)
    answer = page.locator("article.message.assistant")
    expect(answer.locator(".answer-interrupted")).to_be_visible(timeout=ANSWER_TIMEOUT)
    expect(answer.locator(".thinking")).to_have_count(0)
    expect(page.locator("#toast")).to_have_text("Connection lost. Reload the page.")
    expect(page.locator("#composer")).not_to_have_class(re.compile("is-busy"))
    expect(answer).not_to_have_attribute("aria-busy", "true")

    # The page no longer holds a new question back ("Wait for the answer to finish.").
    box = page.get_by_label("Message")
    box.fill("And my checking account?")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/messages")):
        box.press("Enter")

    # Reloaded (and connecting again), the first answer is there in full.
    page.unroute(STREAM)
    page.reload()
    expect(page.locator(".answer-body").first).to_contain_text("$4,782.07", timeout=ANSWER_TIMEOUT)
