"""An emergency fund asked where it should be kept (cash_advice.py): what the account holds
and the guide's word on where, without the outgoings that measure how long it lasts, which
the question doesn't ask; asked how long or how much, the outgoings come back. In wordings
no evaluation set holds."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.advice import advice_kind
from webapp.llm.offline.ask import understand
from webapp.llm.offline.cash_advice import asks_where
from webapp.llm.offline.scope import padded


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("should my rainy day cash stay at wells fargo or go into my brokerage?", True),
        ("where should my emergency savings live, the bank or index funds?", True),
        ("is my rainy day cash at wells fargo enough?", False),
        ("how many months would my emergency savings last?", False),
    ],
)
def test_where_to_keep_it_is_told_from_how_much(text: str, where: bool) -> None:
    assert asks_where(text) is where


def test_money_that_should_stay_put_or_move_is_a_cushion_question() -> None:
    text = "should my rainy day money stay in savings, or would it do better in stocks?"
    assert advice_kind(padded(text), understand(text)) == "cushion"


def test_where_to_keep_it_states_the_account_and_the_guide_not_the_bills(app: Flask) -> None:
    said, cited = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "should my rainy day money stay in my chase savings, or would it do better in stocks?",
    )
    assert "$18,250.00" in said and "federally insured savings account" in said
    assert "fixed bills" not in said and "Rocket Mortgage" not in said
    assert {c["target"]["kind"] for c in cited} == {"account", "web"}
