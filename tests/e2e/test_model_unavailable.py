"""A person's question while the configured model cannot be used (the operator's to fix)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.pages import ask, new_chat, sign_in
from tests.support.fake_claude import FakeClaude, HttpError

TIMEOUT = 20_000


def test_asking_while_the_model_is_missing_says_the_assistant_is_unavailable(
    page: Page, slow_server: LiveServer, slow_model: FakeClaude
) -> None:
    missing = HttpError(
        404, {"type": "error", "error": {"type": "not_found_error", "message": "m"}}
    )
    slow_model.replies = [missing]
    try:
        sign_in(page, server=slow_server.url)
        expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
        new_chat(page)
        ask(page, "What do I owe on my credit cards?")
        error = page.locator("article.message.assistant").last.locator(".answer-error")
        expect(error).to_contain_text("assistant is unavailable", timeout=TIMEOUT)
        expect(error).to_contain_text("operator has been told")
        expect(error).not_to_contain_text("other words")
        expect(error).not_to_contain_text("rephrase")
    finally:
        slow_model.replies = []
