"""A loan's terms or an account's interest, which the linked data doesn't hold
(`loan_terms.py`): said plainly, with the loan's payment the transactions do show, cited.
Before, "how much interest am I paying on my mortgage" quoted PMI and escrow pages, "when
will my mortgage be paid off" gave last month's mortgage spending, and "which of my accounts
earns the most interest" ranked balances."""

from __future__ import annotations

from datetime import date

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.loan_terms import read_loan_terms

TODAY = date(2026, 3, 14)


@pytest.mark.parametrize(
    ("text", "loan"),
    [
        ("what kind of interest is my home loan charging me?", "mortgage"),
        ("when do I finish paying off my mortgage", "mortgage"),
        ("how many months remaining on our car loan?", "car loan"),
        ("what's the rate on my student loans", "student loans"),
    ],
)
def test_a_fact_of_ones_own_loan_is_read(text: str, loan: str) -> None:
    found = read_loan_terms(text, TODAY)
    assert found is not None and found.loan == loan


@pytest.mark.parametrize(
    "text",
    [
        "should I pay my mortgage off early?",
        "how much interest would a $250,000 mortgage cost at 6%?",
        "is mortgage interest tax deductible",
        "what's my mortgage payment",
    ],
)
def test_advice_rules_and_the_payment_itself_are_not_read(text: str) -> None:
    assert read_loan_terms(text, TODAY) is None


def test_an_accounts_interest_is_read_but_a_rate_asked_is_scopes() -> None:
    found = read_loan_terms("which of my bank accounts makes me the most interest?", TODAY)
    assert found is not None and found.loan == "" and found.ranked
    assert read_loan_terms("what APY does my savings earn", TODAY) is None


@pytest.mark.parametrize(
    "text",
    [
        "what interest am I being charged on my mortgage?",
        "when is my house going to be paid off?",
        "how many years are left on our home loan",
    ],
)
def test_the_mortgage_not_held_gives_its_payment_cited(app: Flask, text: str) -> None:
    answer, cites = answer_in_new_chat(app, api_client(app, "demo"), text)
    assert answer.startswith("I don't have the details of your mortgage")
    assert "Rocket Mortgage: $2,140.00 a month" in answer
    assert [c["target"]["kind"] for c in cites] == ["account"]


def test_no_payments_seen_says_so_with_no_source(app: Flask) -> None:
    answer, cites = answer_in_new_chat(app, api_client(app, "alex"), "whats the apr on my car loan")
    assert "I don't have the details of your car loan" in answer
    assert "I don't see regular payments on your car loan" in answer and not cites


def test_which_account_earns_most_says_rates_arent_held(app: Flask) -> None:
    answer, cites = answer_in_new_chat(
        app, api_client(app, "demo"), "which account of mine earns the most interest?"
    )
    assert "can't rank your accounts by interest" in answer
    assert "$485,000.00" not in answer and not cites
