"""Asking: the question shows the moment Enter is pressed, and while the answer is worked on a
status line says which step it is at, until the answer itself streams in."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, Route, expect

from tests.e2e.pages import new_chat, sign_in
from tests.e2e.scripts import Held
from tests.support.fake_claude import FakeClaude, Paced, text_reply, tool_reply

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

TIMEOUT = 20_000
QUESTION = "What do I owe on my credit cards?"
SQL = (
    "SELECT source, source_account_id, account_name, institution_name, current_balance "
    "FROM account_details WHERE account_type = 'credit'"
)


def test_pressing_enter_shows_the_question_before_the_server_answers(page: Page) -> None:
    sign_in(page)
    new_chat(page)
    held: list[Route] = []
    page.route("**/messages", lambda route: held.append(route))
    box = page.get_by_label("Message")
    box.fill(QUESTION)
    box.press("Enter")

    # The server has not been reached yet: the question is there all the same.
    expect(page.locator(".message.user .bubble")).to_have_text([QUESTION])
    expect(box).to_have_value("")
    expect(page.get_by_role("status").filter(has_text="Sending your question…")).to_be_visible()
    for _ in range(200):  # the request reaches the route in its own time
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    held[0].continue_()

    bar = page.get_by_role("button", name=re.compile(r"^Sources · \d+$"))
    expect(bar).to_be_visible(timeout=TIMEOUT)
    # Once: the server's copy took the place of the one drawn at once.
    expect(page.locator(".message.user .bubble")).to_have_text([QUESTION])
    expect(page.locator("article.message.assistant")).to_have_count(1)


def test_a_question_the_server_refuses_goes_back_in_the_box(page: Page) -> None:
    sign_in(page)
    new_chat(page)
    page.route("**/messages", lambda route: route.fulfill(status=503, body="<p>Busy.</p>"))
    box = page.get_by_label("Message")
    box.fill(QUESTION)
    box.press("Enter")
    expect(page.locator("#toast")).to_have_text("Busy.")
    expect(page.locator(".message")).to_have_count(0)
    expect(box).to_have_value(QUESTION)


def test_while_the_answer_is_worked_on_the_status_line_names_the_step(
    page: Page, slow_server: LiveServer, slow_model: FakeClaude
) -> None:
    answer_events = Held(text_reply(("Your two cards add up to what you owe.", [])))
    slow_model.replies = [
        tool_reply(("toolu_sql1", "execute_sql", {"query": SQL})),
        Paced(answer_events, 0.05),
    ]
    try:
        sign_in(page, server=slow_server.url)
        expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
        new_chat(page)
        box = page.get_by_label("Message")
        box.fill(QUESTION)
        box.press("Enter")
        answer = page.locator("article.message.assistant")
        status = answer.get_by_role("status")
        expect(status).to_have_text(re.compile(r"^Looking at your accounts"), timeout=TIMEOUT)

        answer_events.go.set()
        expect(answer.locator(".answer-body")).to_contain_text("add up to", timeout=TIMEOUT)
        expect(status).to_have_count(0)
    finally:
        answer_events.go.set()
        slow_model.replies = []
