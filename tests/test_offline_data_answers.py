"""Answers from the user's own data in wordings of no set (issue 19's seventh and eighth
sets): questions split at a comma or after a heading, what is kept at a bank, what a remark
after a question leaves alone, a bill by its amount and a balance once it is paid, an
account's full name, investments by type, both ends of a kind of account and their gap,
which ticker moved more, and whether the last figure counts an account."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.ask import understand
from webapp.llm.offline.conversation import questions_of, split_parts


def _ask(app: Flask, user: str, *questions: str) -> tuple[str, list[dict[str, object]]]:
    """Ask in one chat as `user`; return the last answer's text and its citations."""
    return answer_in_new_chat(app, api_client(app, user), *questions)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("whats my amex balance, how much is in savings", 2),
        ("couple questions: how much do i owe citi, what's in my checking", 2),
        ("quick ones: how much is in savings, what's my net worth, and whats aapl at", 3),
        ("if i paid off amex from checking, what would be left", 1),
        ("what if I cleared the citi from savings, how much would savings have", 1),
        ("how much cash do i have in checking plus savings", 1),
    ],
)
def test_questions_split_at_a_comma_only_between_questions(text: str, parts: int) -> None:
    assert len(split_parts(text)) == parts


def test_a_remark_after_a_question_is_not_a_question() -> None:
    assert len(questions_of("net worth without the house? the house isn't liquid")) == 2


@pytest.mark.parametrize(
    "text",
    ["what've i got with chase", "whats at chase", "what have i got over at chase"],
)
def test_what_is_kept_at_a_bank_is_its_accounts(text: str) -> None:
    question = understand(text)
    assert question.own and question.intents == ("balances",)
    assert question.institutions == ("chase",)


@pytest.mark.parametrize(
    "text",
    [
        "what's my net worth if we don't count the home",
        "net worth, not including the house",
        "how much am i worth if you leave the house out",
    ],
)
def test_a_condition_that_leaves_the_house_out(app: Flask, text: str) -> None:
    answer, _ = _ask(app, "demo", text)
    assert "$43,252.07" in answer


def test_a_remark_after_a_data_question_is_not_answered_again(app: Flask) -> None:
    answer, _ = _ask(app, "demo", "what do i owe on my cards? the amex is the one that worries me")
    assert "$4,782.07" in answer and "couldn't find" not in answer


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("ok so how much is my rent again", "$1,875.00 a month"),
        ("whats my rent? the oakwood apartments one", "$1,875.00 a month"),
        ("how much is my paycheck", "$2,210.00"),
        ("whats my hulu bill", "$17.99 a month"),
        ("how much does the hulu subscription cost me", "$17.99 a month"),
    ],
)
def test_a_bill_or_pay_by_its_amount(app: Flask, text: str, says: str) -> None:
    answer, _ = _ask(app, "alex", text)
    assert says in answer


@pytest.mark.parametrize(
    ("questions", "says"),
    [
        (("once rent is paid how much will i have left in checking",), "$1,245.44"),
        (("how much is in my checking?", "and after rent comes out whats left"), "$1,245.44"),
        (("if i pay rent tomorrow what will my balance be at after",), "$1,245.44"),
    ],
)
def test_a_balance_once_a_bill_comes_out(app: Flask, questions: tuple[str, ...], says: str) -> None:
    answer, cited = _ask(app, "alex", *questions)
    assert says in answer
    assert cited and all(c["target"]["kind"] == "account" for c in cited)


def test_the_bill_comes_out_of_the_account_that_pays_it(app: Flask) -> None:
    answer, _ = _ask(app, "demo", "whats left in checking after the mortgage payment goes out")
    assert "$2,680.33" in answer  # Chase checking, which pays Rocket Mortgage


def test_no_such_account_is_said_plainly(app: Flask) -> None:
    answer, _ = _ask(app, "alex", "how much will be left in savings after rent")
    assert answer == "You have no savings account linked."


@pytest.mark.parametrize(
    "text",
    [
        "whats my bofa card actually called",
        "what's the full name of my credit card",
        "what is my visa's official name",
    ],
)
def test_an_accounts_full_name(app: Flask, text: str) -> None:
    answer, _ = _ask(app, "alex", text)
    assert "Customized Cash Rewards Visa" in answer


def test_investments_split_by_type_count_the_brokers_cash(app: Flask) -> None:
    answer, _ = _ask(app, "demo", "break my portfolio down by asset class, stocks/etfs/crypto")
    assert "ETFs: $11,584.00" in answer and "Stocks: $5,712.50" in answer


@pytest.mark.parametrize(
    "text",
    [
        "whats the gap between my largest and smallest card balance",
        "biggest card balance vs smallest, and how far apart are they",
        "which card do i owe the most on and which the least? whats the difference",
    ],
)
def test_both_ends_and_the_gap_between_them(app: Flask, text: str) -> None:
    answer, cited = _ask(app, "demo", text)
    assert "$2,315.40" in answer and "$624.50" in answer and "$1,690.90" in answer
    kinds = {c["target"]["kind"] for c in cited}
    assert kinds == {"account"}  # each end alone, not both "Credit card" accounts


def test_holdings_ranked_by_what_they_are_worth(app: Flask) -> None:
    answer, _ = _ask(app, "demo", "sort my investments by value, smallest first")
    assert answer.index("ETH") < answer.index("AAPL") < answer.index("VTI")


def test_a_trade_order_is_no_ranking(app: Flask) -> None:
    answer, _ = _ask(app, "demo", "sell all my vti, market order")
    assert "can't place trades" in answer


def test_which_ticker_moved_more(app: Flask) -> None:
    answer, cited = _ask(app, "demo", "how is aapl doing?", "what about vti, which did better")
    assert "VTI moved more" in answer
    assert {c["target"]["kind"] for c in cited} == {"market_data"}


@pytest.mark.parametrize(
    ("questions", "says"),
    [
        (("what am i worth", "is the house counted in that?"), "Yes: your net worth counts Home"),
        (("how much cash have i got", "did you include robinhood"), "No: your cash leaves out"),
    ],
)
def test_whether_the_last_figure_counts_an_account(
    app: Flask, questions: tuple[str, ...], says: str
) -> None:
    answer, _ = _ask(app, "demo", *questions)
    assert says in answer


def test_an_open_question_about_doing_ok(app: Flask) -> None:
    answer, _ = _ask(app, "alex", "honestly am i doing okay financially")
    assert "$3,120.44" in answer and "$410.09" in answer
