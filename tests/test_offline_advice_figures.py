"""The offline engine's advice on the user's own figures (issue 19's ninth set): debts named
by institution or by card name, paid from the account the question names, an emergency fund's
size asked with the user's standing against it, months of a bill named, another person's
figures declined, and papers of the user's own the app doesn't hold. Wordings here are in no
set."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.support.apps import ApiClient, answer_in_new_chat, api_client
from webapp.llm.offline.advice_figures import months_said, paid_from
from webapp.llm.offline.card_charge import read_card_charge
from webapp.llm.offline.cite import Result
from webapp.llm.offline.cushion_whole import read_cushion_whole
from webapp.llm.offline.figures import Row
from webapp.llm.offline.library import library
from webapp.llm.offline.months_left import read_months_left
from webapp.llm.offline.own_documents import own_document
from webapp.llm.offline.saving_pace import asks_pace
from webapp.llm.offline.scope import declined
from webapp.llm.offline.task import Context, Opened


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("is 3 months of rent enough to have put by?", 3),
        ("would six months' worth of the mortgage be too much to keep?", 6),
        ("is a 4-month cushion ok", 4),
        ("three to six months of expenses, right?", None),  # a range, not one count
        ("3 to 6 months of expenses", None),
        ("how big should my emergency fund be", None),
    ],
)
def test_a_count_of_months_is_read_as_said(text: str, count: int | None) -> None:
    assert months_said(text) == count


def _row(institution: str, subtype: str, balance: float) -> Row:
    values: dict[str, str | None] = {
        "institution_name": institution,
        "account_name": subtype.title(),
        "account_type": "depository",
        "account_subtype": subtype,
        "balance": str(balance),
    }
    return Row(Result("execute_sql", 0, {}), 0, values)


def test_the_account_money_comes_out_of_is_the_one_named() -> None:
    cash = [
        _row("Chase", "checking", 100.0),
        _row("Wells Fargo", "checking", 50.0),
        _row("Chase", "savings", 900.0),
    ]
    (savings,) = paid_from("clear every card out of my savings, wise?", cash)
    assert savings.get("account_subtype") == "savings"
    (wells,) = paid_from("should I zero out the amex from the wells fargo checking", cash)
    assert wells.get("institution_name") == "Wells Fargo"
    assert len(paid_from("pay the cards off with my checking", cash)) == 2
    assert paid_from("should i pay off the amex first", cash) == []
    assert paid_from("pay it from cash?", cash) == []  # all of it: no one account


@pytest.mark.parametrize(
    "text",
    [
        "whats jordan's savings balance",
        "how much does sam's checking have in it",
        "tell me priya's income",
        "pull up alex's balance",
    ],
)
def test_another_persons_figures_are_declined(text: str) -> None:
    said = declined(text)
    assert said is not None and "anyone else's accounts" in said


@pytest.mark.parametrize(
    "text",
    ["what's chase's savings rate", "what was last year's income", "this month's savings"],
)
def test_a_possessive_that_is_no_person_is_no_other_persons_account(text: str) -> None:
    assert declined(text) is None


@pytest.mark.parametrize(
    ("text", "named", "asked"),
    [
        (
            "what does my greenview towers lease say about subletting",
            "your Greenview Towers lease",
            "about subletting",
        ),
        (
            "check the vanguard 401k plan document for the vesting schedule, tell me the years",
            "your Vanguard 401(k) plan document",
            "about the years",
        ),
        (
            "according to my wells fargo deposit agreement what is the returned item fee",
            "your Wells Fargo deposit agreement",
            "",
        ),
        (
            "what's in my renters insurance policy about theft",
            "your Renters insurance policy",
            "theft",
        ),
    ],
)
def test_a_paper_of_the_users_own_is_said_not_to_be_held(text: str, named: str, asked: str) -> None:
    said = own_document(text, library())
    assert said is not None and said.startswith(f"I don't have {named}:")
    assert asked in said


@pytest.mark.parametrize(
    "text",
    [
        "my lease ends in june, can i afford a $2,000 deposit?",  # mentions, asks nothing of it
        "what is a summary plan description?",  # the kind in general
        "how much rent do i pay",
    ],
)
def test_a_paper_only_mentioned_is_no_missing_document(text: str) -> None:
    assert own_document(text, library()) is None


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("what's a sensible rainy day fund? am i anywhere close with my savings", True),
        ("how much should an emergency fund hold, and do i have that much?", True),
        # the months of one bill: the guided answer's
        ("is 4 months of rent a good emergency fund? and do i have that much", False),
        # a second question of its own
        ("how big should an emergency fund be? and what's my net worth", False),
        ("how big should an emergency fund be?", False),
    ],
)
def test_a_funds_size_and_the_users_standing_are_one_question(text: str, whole: bool) -> None:
    task = read_cushion_whole(text, Context(library(), None))
    assert (isinstance(task, Opened) and task.kind == "cushion") is whole


@pytest.fixture
def demo(app: Flask) -> ApiClient:
    return api_client(app, "demo")


def _ask(app: Flask, user: str, question: str) -> tuple[str, list[dict[str, Any]]]:
    return answer_in_new_chat(app, api_client(app, user), question)


def test_two_cards_named_by_institution_and_by_name_are_both_weighed(app: Flask) -> None:
    text, citations = _ask(app, "demo", "amex or the sapphire, which do i clear first?")
    assert "$1,842.17" in text and "$2,315.40" in text
    assert "$624.50" not in text  # the Citi card, not named
    assert "Owed in all: $4,157.57" in text
    assert len(citations) >= 2


def test_paying_the_cards_from_savings_says_what_savings_keeps(app: Flask) -> None:
    text, _ = _ask(app, "demo", "would it be dumb to wipe out every card balance from savings?")
    assert "$4,782.07" in text  # what the three cards owe
    assert "from your Chase savings account ($18,250.00) would leave $13,467.93" in text


def test_a_funds_size_with_the_users_savings_against_it(app: Flask) -> None:
    text, citations = _ask(
        app, "demo", "what should an emergency fund be? am i anywhere close with my savings"
    )
    assert "$18,250.00 in your Chase savings account" in text
    assert "past six months" in text  # 18,250.00 against 6 x 2,275.45 of fixed bills
    assert any("emergency-fund" in c["source"] for c in citations)


def test_months_of_rent_named_are_counted_against_the_bank_balance(app: Flask) -> None:
    text, _ = _ask(app, "alex", "would 2 months of rent be an ok emergency fund? do i have it")
    assert "2 months of it come to $3,750.00" in text  # 2 x 1,875.00
    assert "$629.56 short" in text  # 3,750.00 - 3,120.44


def test_another_persons_balance_shows_no_figure_of_the_asker(app: Flask) -> None:
    text, citations = _ask(app, "demo", "how much is in jordan's checking")
    assert "anyone else's accounts" in text
    assert "$" not in text and citations == []


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("will charging 800 to the amex hurt my score?", 800.0),
        ("would sticking a $2,400 couch on my visa ding my credit", 2400.0),
        # a computation, no harm to the credit asked of: the computations answer
        ("what would my utilisation be if i put another $1,000 on the card", None),
        ("would putting $500 in savings each month be smart", None),  # no card
    ],
)
def test_a_purchase_on_a_card_weighed_against_the_credit(text: str, amount: float | None) -> None:
    found = read_card_charge(text)
    assert (found.amount if found else None) == amount


def test_a_purchase_on_a_card_says_what_it_would_owe_and_use_after(app: Flask) -> None:
    text, citations = _ask(app, "demo", "would throwing a $2k laptop on the citi wreck my score")
    assert "from $624.50 to $2,624.50" in text
    assert "from 7.8% to 32.8%" in text  # 2,624.50 of the Citi card's $8,000.00 limit
    assert "Across all your cards" in text and "from 11.1% to 15.8%" in text  # 6,782.07 / 43,000
    assert "I don't have your credit score" in text
    assert any("credit-score" in c["source"] for c in citations)


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("if i drop $3,000 on a trip would checking still cover 2 months of rent after?", True),
        ("after a $4k repair will i have 3 months of bills left in savings", True),
        ("would 3 months of rent be $5,625?", False),  # nothing spent, nothing left asked
        ("i spent $3,000 last month", False),
    ],
)
def test_a_sum_spent_and_the_months_of_a_bill_left(text: str, left: bool) -> None:
    assert (read_months_left(text) is not None) is left


def test_the_months_of_a_bill_left_after_a_sum(app: Flask) -> None:
    text, citations = _ask(
        app, "demo", "if the roof costs me $15k, do i still have four months of mortgage in savings"
    )
    assert "Your Chase savings account holds $18,250.00" in text
    assert "it would hold $3,250.00" in text  # 18,250.00 - 15,000.00
    assert "Four months of your mortgage" in text and "$8,560.00" in text  # 4 x 2,140.00
    assert "$5,310.00 short" in text
    assert len(citations) >= 2  # the savings account, and the checking account paying it


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("should i be moving more than i do into savings every month", True),
        ("am i saving enough each paycheck", True),
        ("is my savings big enough", False),
    ],
)
def test_what_is_put_away_on_a_schedule_is_asked_by_its_words(text: str, asked: bool) -> None:
    assert asks_pace(text) is asked


def test_the_regular_transfer_into_savings_is_shown_with_the_cushion(app: Flask) -> None:
    text, _ = _ask(app, "demo", "is what i move into savings every month enough of a cushion")
    assert "You move $500.00 a month into your Chase savings account" in text
    assert "$6,000.00 a year" in text


def test_rent_against_what_one_makes_reads_the_pay(app: Flask) -> None:
    text, citations = _ask(app, "alex", "does my rent eat too much of what i earn")
    assert "$2,210.00 every two weeks" in text and "$1,875.00" in text
    assert any("money-as-you-grow" in c["source"] for c in citations)
