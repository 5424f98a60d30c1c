"""Accessibility in a real browser: axe-core on every page and state a person reaches, on a
desktop and a phone, light and dark; plus what axe cannot see (the first Tab stop, focus
rings, the dark theme itself, a hint that only shows where it is true, one-line titles)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

from tests.e2e.pages import ask, new_chat, sign_in
from tests.e2e.scripts import Held
from tests.e2e.stored import store_mixed_answer
from tests.support.fake_claude import FakeClaude, Paced, text_reply, tool_reply

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

CARDS_QUESTION = "What do I owe on my credit cards?"
# About a minute at 7 characters every 50 ms: still being written while axe looks.
STREAMING_TEXT = "Your cards add up slowly, one careful sentence after another. " * 150
ANSWER_TIMEOUT = 20_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# Each look: the screen and whether the system asks for dark colours.
LOOKS: dict[str, dict[str, Any]] = {
    "desktop-light": {"viewport": DESKTOP, "color_scheme": "light"},
    "desktop-dark": {"viewport": DESKTOP, "color_scheme": "dark"},
    "phone-light": {
        "viewport": PHONE,
        "color_scheme": "light",
        "is_mobile": True,
        "has_touch": True,
    },
    "phone-dark": {"viewport": PHONE, "color_scheme": "dark", "is_mobile": True, "has_touch": True},
}
BLOCKING = {"serious", "critical"}
AXE = Axe()

# The focused element's ring: its outline as drawn (style and width).
RING = """() => { const el = document.activeElement; const s = getComputedStyle(el);
  return {tag: el.tagName, text: (el.getAttribute('aria-label') || el.textContent || el.name || '').trim().slice(0, 40),
          style: s.outlineStyle, width: parseFloat(s.outlineWidth), color: s.outlineColor}; }"""


def open_context(browser: Browser, base_url: str, look: str, **extra: Any) -> BrowserContext:
    """A context for `look`; only these checks bypass the CSP, so that axe can be injected."""
    return browser.new_context(base_url=base_url, bypass_csp=True, **LOOKS[look], **extra)


@pytest.fixture(params=list(LOOKS))
def look(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def person(browser: Browser, base_url: str, look: str) -> Iterator[Page]:
    """A page in a fresh context of the current look."""
    context = open_context(browser, base_url, look)
    yield context.new_page()
    context.close()


@pytest.fixture
def audit(a11y_screenshots: Path, look: str) -> Iterator[Callable[[Page, str], None]]:
    """Screenshot the page as it is, run axe on it, and fail at the end of the test with
    every serious or critical violation of every state checked."""
    found: list[str] = []

    def check(page: Page, state: str) -> None:
        page.screenshot(path=a11y_screenshots / f"{look}-{state}.png", full_page=True)
        results = AXE.run(page)
        for violation in results.response["violations"]:
            if violation["impact"] in BLOCKING:
                targets = [" ".join(node["target"]) for node in violation["nodes"]]
                found.append(
                    f"{state}: {violation['id']} ({violation['impact']}) "
                    f"{violation['help']}: {targets}"
                )

    yield check
    assert not found, "\n".join(found)


def signed_in(page: Page) -> Page:
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    page.wait_for_load_state()  # its styles too, before anything is measured
    return page


# What axe sees, on every page and state a person reaches.


def test_signing_in_has_no_serious_barriers(
    person: Page, audit: Callable[[Page, str], None]
) -> None:
    person.goto("/login")
    expect(person.get_by_role("heading", level=1)).to_have_text("Sign in")
    audit(person, "sign-in")


def test_asking_and_opening_the_sources_has_no_serious_barriers(
    person: Page, audit: Callable[[Page, str], None]
) -> None:
    page = signed_in(person)
    new_chat(page)
    audit(page, "chat-empty")
    ask(page, CARDS_QUESTION)
    bar = page.get_by_role("button", name=re.compile(r"^Sources · \d+$"))
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    audit(page, "chat-answer")
    bar.click()
    expect(page.get_by_role("dialog", name="Sources")).to_be_visible()
    audit(page, "chat-sheet-open")


def test_watching_an_answer_being_written_has_no_serious_barriers(
    person: Page,
    audit: Callable[[Page, str], None],
    slow_server: LiveServer,
    slow_model: FakeClaude,
) -> None:
    slow_model.replies = [Paced(text_reply((STREAMING_TEXT, [])), 0.05)]
    try:
        sign_in(person, server=slow_server.url)
        expect(person).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
        new_chat(person)
        ask(person, CARDS_QUESTION)
        answer = person.locator("article.message.assistant").last
        body = answer.locator(".answer-body.is-streaming")
        expect(body).to_contain_text("Your cards add up", timeout=ANSWER_TIMEOUT)
        expect(answer).to_have_attribute("aria-busy", "true")
        audit(person, "chat-streaming")
        # Checked mid-answer: the text was still arriving and the turn was not done.
        expect(answer).to_have_attribute("aria-busy", "true")
        expect(answer.get_by_role("button", name="Stop")).to_be_visible()
        answer.get_by_role("button", name="Stop").click()
        expect(answer.locator(".answer-stopped")).to_be_visible(timeout=ANSWER_TIMEOUT)
    finally:
        slow_model.replies = []


def test_every_kind_of_source_in_the_sheet_has_no_serious_barriers(
    person: Page, audit: Callable[[Page, str], None], live_server: LiveServer
) -> None:
    session_id = store_mixed_answer(live_server.app)
    page = signed_in(person)
    page.goto(f"/chat/{session_id}")
    page.locator(".sources-bar").click()
    expect(page.get_by_role("dialog", name="Sources")).to_be_visible()
    audit(page, "sheet-every-kind")


def test_previewing_citations_has_no_serious_barriers(
    person: Page, audit: Callable[[Page, str], None], live_server: LiveServer
) -> None:
    session_id = store_mixed_answer(live_server.app)
    page = signed_in(person)
    page.goto(f"/chat/{session_id}")
    page.locator(".answer-body .cite", has_text=re.compile("^1$")).focus()
    expect(page.get_by_role("tooltip")).to_be_visible()
    audit(page, "citation-preview")
    page.locator(".answer-body .cite", has_text=re.compile("^3$")).focus()
    expect(page.get_by_role("tooltip", name=re.compile("Analyst note"))).to_be_visible()
    audit(page, "citation-preview-opens-nothing")
    portfolio = page.locator(".answer-body .cite", has_text=re.compile("^5$"))
    page.goto(str(portfolio.get_attribute("href")), referer=page.url)  # a tap previews first
    expect(page.get_by_role("link", name="← Back to the answer")).to_be_visible()
    audit(page, "portfolio-back-to-the-answer")


def test_sending_a_question_and_watching_its_step_has_no_serious_barriers(
    person: Page,
    audit: Callable[[Page, str], None],
    slow_server: LiveServer,
    slow_model: FakeClaude,
) -> None:
    query = "SELECT source, source_account_id, account_name, current_balance FROM account_details"
    slow_model.replies = [
        tool_reply(("toolu_a11y", "execute_sql", {"query": query})),
        Paced(words := Held(text_reply((STREAMING_TEXT, []))), 0.05),
    ]
    try:
        sign_in(person, server=slow_server.url)
        expect(person).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
        new_chat(person)
        held: list[Route] = []
        person.route("**/messages", lambda route: held.append(route))
        box = person.get_by_label("Message")
        box.fill(CARDS_QUESTION)
        box.press("Enter")
        expect(
            person.get_by_role("status").filter(has_text="Sending your question…")
        ).to_be_visible()
        audit(person, "chat-question-sent")
        for _ in range(200):
            if held:
                break
            person.wait_for_timeout(50)
        held[0].continue_()
        status = person.locator("article.message.assistant").get_by_role("status")
        expect(status).to_have_text(re.compile("^Looking at your accounts"), timeout=ANSWER_TIMEOUT)
        audit(person, "chat-status-step")
        words.go.set()
        answer = person.locator("article.message.assistant").last
        expect(answer.locator(".answer-body")).to_contain_text("Your cards", timeout=ANSWER_TIMEOUT)
        answer.get_by_role("button", name="Stop").click()
        expect(answer.locator(".answer-stopped")).to_be_visible(timeout=ANSWER_TIMEOUT)
    finally:
        words.go.set()
        slow_model.replies = []


def test_choosing_an_account_and_reading_sources_and_documents_has_no_serious_barriers(
    person: Page, audit: Callable[[Page, str], None]
) -> None:
    page = signed_in(person)
    new_chat(page)
    ask(page, CARDS_QUESTION)
    answer = page.locator("article.message.assistant").last
    bar = answer.get_by_role("button", name=re.compile(r"^Sources · \d+$"))
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    sources_page = bar.get_attribute("href")
    bar.click()
    sheet = page.get_by_role("dialog", name="Sources")
    sheet.locator("button.source-row[popovertarget]").first.click()  # two cards, one title
    expect(page.locator(".chooser:popover-open")).to_be_visible()
    audit(page, "chooser-open")
    assert sources_page is not None
    page.goto(sources_page)
    expect(page.get_by_role("heading", level=1)).to_have_text("Sources")
    audit(page, "sources-page")
    page.get_by_role("link", name="← Back to the answer").click()
    new_chat(page)
    ask(page, "How long should I keep my tax records?")
    answer = page.locator("article.message.assistant").last
    bar = answer.get_by_role("button", name=re.compile(r"^Sources · \d+$"))
    expect(bar).to_be_visible(timeout=ANSWER_TIMEOUT)
    bar.click()
    page.get_by_role("dialog", name="Sources").locator(
        'a.source-row[href^="/library/"]'
    ).first.click()
    expect(page).to_have_url(re.compile(r"/library/"))
    expect(page.locator("mark").first).to_be_visible()
    audit(page, "library-reader")


def test_looking_at_accounts_portfolio_and_a_quote_has_no_serious_barriers(
    person: Page, audit: Callable[[Page, str], None]
) -> None:
    page = signed_in(person)
    page.goto("/accounts")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    audit(page, "accounts")
    page.get_by_role("main").get_by_role("link").first.click()
    expect(page).to_have_url(re.compile(r"/accounts/.+"))
    audit(page, "account")
    page.goto("/portfolio")
    expect(page.get_by_role("heading", level=1)).to_have_text("Portfolio")
    audit(page, "portfolio")
    page.goto("/markets/AAPL")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    audit(page, "market")


def test_landing_on_an_error_page_has_no_serious_barriers(
    person: Page, audit: Callable[[Page, str], None]
) -> None:
    page = signed_in(person)
    # A form sent with an expired token: the "Please try again" page.
    new_chat_form = page.locator("form").filter(has=page.get_by_role("button", name="+ New chat"))
    new_chat_form.locator("input[name=csrf_token]").evaluate("el => el.value = 'expired'")
    page.get_by_role("button", name="+ New chat").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Please try again")
    audit(page, "error-expired-form")
    response = page.goto("/no-such-page")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("Not Found")
    audit(page, "not-found")


# What axe cannot see.


def test_skip_to_the_main_content_with_the_first_tab(browser: Browser, base_url: str) -> None:
    context = open_context(browser, base_url, "desktop-light")
    page = signed_in(context.new_page())
    page.goto("/accounts")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to main content")
    expect(skip).to_be_focused()
    box = skip.bounding_box()
    assert box is not None and box["y"] >= 0, "the focused skip link is on screen"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    inside_main = page.evaluate("document.activeElement.closest('main') !== null")
    assert inside_main, page.evaluate("document.activeElement.outerHTML")
    context.close()


def test_skip_to_the_message_box_on_the_chat_page(browser: Browser, base_url: str) -> None:
    context = open_context(browser, base_url, "desktop-light")
    page = signed_in(context.new_page())
    # From the top of the page (the box has the focus on load; a person may have moved it).
    page.get_by_role("banner").get_by_role("link", name="Finance Chat").focus()
    page.keyboard.press("Shift+Tab")
    skip = page.get_by_role("link", name="Skip to the message box")
    expect(skip).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Message")).to_be_focused()
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_tab_through_the_chat_and_always_see_where_you_are(
    browser: Browser, base_url: str, scheme: str
) -> None:
    context = open_context(browser, base_url, f"desktop-{scheme}")
    page = signed_in(context.new_page())
    new_chat(page)
    ask(page, CARDS_QUESTION)
    expect(page.locator(".sources-bar")).to_be_visible(timeout=ANSWER_TIMEOUT)
    page.goto(page.url)  # the page as it loads, the box focused
    page.get_by_role("link", name="Skip to the message box").focus()
    rings: list[dict[str, Any]] = [page.evaluate(RING)]
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement === document.body"):
            break
        rings.append(page.evaluate(RING))
    tags = {ring["tag"] for ring in rings}
    assert {"A", "BUTTON", "TEXTAREA"} <= tags, tags
    missing = [ring for ring in rings if ring["style"] == "none" or ring["width"] < 2]
    assert not missing, missing
    # The sheet's own controls too.
    page.locator(".sources-bar").click()
    sheet = page.get_by_role("dialog", name="Sources")
    expect(sheet).to_be_visible()
    in_sheet: list[dict[str, Any]] = []
    for _ in range(3):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('dialog[open]') !== null"):
            in_sheet.append(page.evaluate(RING))
    assert {ring["tag"] for ring in in_sheet} >= {"BUTTON", "A"}, in_sheet
    assert all(ring["style"] != "none" and ring["width"] >= 2 for ring in in_sheet), in_sheet
    context.close()


@pytest.mark.parametrize("path", ["/login", "/", "/accounts", "/no-such-page"])
def test_read_the_pages_dark_when_the_system_is_dark(
    browser: Browser, base_url: str, path: str
) -> None:
    colors: dict[str, list[str]] = {}
    for scheme in ("light", "dark"):
        context = open_context(browser, base_url, f"desktop-{scheme}")
        page = context.new_page()
        if path != "/login":
            signed_in(page)
        page.goto(path)
        colors[scheme] = page.evaluate(
            "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"
        )
        context.close()
    assert colors["light"] == ["rgb(246, 247, 249)", "rgb(28, 35, 48)"]
    assert colors["dark"] == ["rgb(15, 20, 27)", "rgb(230, 233, 239)"]


def test_see_that_enter_sends_with_a_keyboard_and_javascript(
    browser: Browser, base_url: str
) -> None:
    context = open_context(browser, base_url, "desktop-light")
    page = signed_in(context.new_page())
    expect(page.get_by_text("Enter sends")).to_be_visible()
    context.close()


def test_no_enter_sends_hint_without_javascript(browser: Browser, base_url: str) -> None:
    context = open_context(browser, base_url, "desktop-light", java_script_enabled=False)
    page = signed_in(context.new_page())
    expect(page.get_by_label("Message")).to_be_visible()
    expect(page.get_by_text("Enter sends")).to_be_hidden()
    context.close()


def test_no_enter_sends_hint_on_a_touch_screen(browser: Browser, base_url: str) -> None:
    context = open_context(browser, base_url, "phone-light")
    page = signed_in(context.new_page())
    assert page.evaluate("matchMedia('(hover: none)').matches"), "the phone has no hover"
    expect(page.get_by_label("Message")).to_be_visible()
    expect(page.get_by_text("Enter sends")).to_be_hidden()
    context.close()


def test_go_home_from_the_logo_on_a_phone(browser: Browser, base_url: str) -> None:
    context = open_context(browser, base_url, "phone-light")
    page = signed_in(context.new_page())
    page.goto("/accounts")
    logo = page.get_by_role("banner").get_by_role("link", name="Finance Chat", exact=True)
    expect(logo).to_be_visible()
    expect(page.get_by_role("banner").get_by_text("Finance Chat")).not_to_be_in_viewport()
    logo.click()
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$|/$"))
    context.close()


def test_find_the_chat_heading_after_asking(browser: Browser, base_url: str) -> None:
    context = open_context(browser, base_url, "desktop-light")
    page = signed_in(context.new_page())
    new_chat(page)
    ask(page, CARDS_QUESTION)
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    expect(page.get_by_role("heading", level=1)).to_have_text("Chat")
    expect(page.get_by_text("What would you like to know?")).to_be_hidden()
    context.close()


def test_read_long_source_titles_on_a_phone_one_line_each(
    browser: Browser, base_url: str, live_server: LiveServer
) -> None:
    context = open_context(browser, base_url, "phone-light")
    page = signed_in(context.new_page())
    page.goto(f"/chat/{store_mixed_answer(live_server.app)}")
    page.locator(".sources-bar").click()
    sheet = page.get_by_role("dialog", name="Sources")
    expect(sheet).to_be_visible()
    titles = sheet.locator(".source-title")
    assert titles.count() > 0
    # A title far longer than a phone is wide, as a provider may send.
    titles.first.evaluate("el => el.textContent = 'A very long source title '.repeat(8)")
    width = page.evaluate("document.documentElement.clientWidth")
    for title in titles.all():
        shape = title.evaluate("""el => { const s = getComputedStyle(el), r = el.getBoundingClientRect();
          return {height: r.height, line: parseFloat(s.lineHeight) || parseFloat(s.fontSize) * 1.6,
                  right: r.right, overflow: s.textOverflow, wrap: s.whiteSpace}; }""")
        assert shape["overflow"] == "ellipsis" and shape["wrap"] == "nowrap", shape
        assert shape["height"] <= shape["line"] * 1.2, shape
        assert shape["right"] <= width, shape
    context.close()


def _contrast(one: str, two: str) -> float:
    """The WCAG contrast ratio of two computed `rgb(r, g, b)` colours."""

    def luminance(rgb: str) -> float:
        channels = [int(part) / 255 for part in re.findall(r"\d+", rgb)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted([luminance(one), luminance(two)], reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_see_where_each_field_is(browser: Browser, base_url: str, scheme: str) -> None:
    context = open_context(browser, base_url, f"desktop-{scheme}")
    page = context.new_page()
    page.goto("/login")
    for name in ("Username", "Password"):
        edge, around = page.get_by_label(name).evaluate(
            """el => [getComputedStyle(el).borderTopColor,
                      getComputedStyle(el.closest('.card')).backgroundColor]"""
        )
        assert _contrast(edge, around) >= 3, (name, edge, around)
    signed_in(page)
    edge, around = page.locator("#composer").evaluate(
        "el => [getComputedStyle(el).borderTopColor, getComputedStyle(document.body).backgroundColor]"
    )
    assert _contrast(edge, around) >= 3, ("Message", edge, around)
    context.close()
