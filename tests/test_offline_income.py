"""Money coming in, asked alone, and spending ranked by category (`spending_ask.py`): both
read from the transactions, each figure cited to the accounts whose rows it summed. Before,
an income question got the reply written when there were no transactions at all."""

from __future__ import annotations

from datetime import date

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.spending_ask import read_spending

TODAY = date(2026, 3, 14)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("what were my earnings in february", "income"),
        ("have I been paid yet this month?", "income"),
        ("how much salary came through last month", "income"),
        ("what did we make in january", "income"),
        ("which categories took the most of my money last month?", "categories"),
        ("top spending category in february?", "categories"),
        ("income versus spending last month?", "cash_flow"),  # both: the cash flow
    ],
)
def test_the_kind_of_question_about_money_over_time(text: str, kind: str) -> None:
    ask = read_spending(text, TODAY)
    assert ask is not None and ask.kind == kind


def test_the_income_answer_gives_the_deposits_and_cites_their_account(app: Flask) -> None:
    text, cites = answer_in_new_chat(
        app, api_client(app, "alex"), "What were my earnings last month?"
    )
    assert "of income last month" in text and "two deposits" in text
    assert "Bank of America checking" in text
    assert "transactions" not in text.lower()  # never "I can't see your transactions"
    assert len(cites) == 1 and cites[0]["target"]["kind"] == "account"


def test_the_categories_answer_ranks_them(app: Flask) -> None:
    text, _ = answer_in_new_chat(
        app, api_client(app, "demo"), "what category ate most of my money in november?"
    )
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    amounts = [float(line.rsplit("$", 1)[1].replace(",", "")) for line in lines]
    assert len(amounts) >= 3 and amounts == sorted(amounts, reverse=True)


@pytest.mark.parametrize(
    "text",
    [
        "roughly what do I earn each month?",
        "what is my income per month",
        "what do we bring home every month",
    ],
)
def test_what_one_earns_a_month_is_the_regular_pay_per_month(app: Flask, text: str) -> None:
    answer, cites = answer_in_new_chat(app, api_client(app, "demo"), text)
    assert "Acme Corp" in answer and "$6,175.00 a month" in answer
    assert "every two weeks" in answer
    assert [c["target"]["kind"] for c in cites] == ["account"]


def test_take_home_pay_is_one_payday(app: Flask) -> None:
    answer, cites = answer_in_new_chat(app, api_client(app, "alex"), "whats my take-home pay?")
    assert "Globex" in answer and "for one payday" in answer
    assert len(cites) == 1
