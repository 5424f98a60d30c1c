"""A rule of thumb asked of a figure the person has, whether or not they say "my" ("what's a
good credit utilization", "a healthy emergency fund"): what the bundled page says beside their
own figure, cited (`guidance.py`'s `thumb` topics, the cushion advice's rule-of-thumb markers).
Before, these got "I can't help with that" or the page alone."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.guidance import topics_of


@pytest.mark.parametrize(
    "text",
    [
        "what counts as a healthy utilization?",
        "ideal card usage percentage",
        "what utilization should I be aiming for",
    ],
)
def test_a_utilization_rule_of_thumb_is_the_utilization_topic(text: str) -> None:
    assert [topic.name for topic, _ in topics_of(text)] == ["credit utilization"]


def test_the_utilization_figure_alone_is_not(app: Flask) -> None:
    assert topics_of("what is my credit utilization") == []
    assert topics_of("is my utilization too high?") == []


def test_a_good_utilization_gives_the_page_and_the_users_own(app: Flask) -> None:
    text, cites = answer_in_new_chat(
        app, api_client(app, "demo"), "what counts as a healthy utilization?"
    )
    assert "11.1% of your available credit is in use" in text
    assert "keep card balances low compared with your limits" in text
    assert "no percentage" in text
    kinds = {c["target"]["kind"] for c in cites}
    assert "web" in kinds and kinds & {"account", "accounts"}


@pytest.mark.parametrize(
    "text",
    ["what is a healthy emergency savings amount", "ideal size for an emergency fund?"],
)
def test_an_emergency_fund_rule_of_thumb_gives_the_users_cash_and_bills(
    app: Flask, text: str
) -> None:
    answer, cites = answer_in_new_chat(app, api_client(app, "demo"), text)
    assert "Three to six months of your fixed bills" in answer
    kinds = {c["target"]["kind"] for c in cites}
    assert "web" in kinds and "accounts" in kinds
