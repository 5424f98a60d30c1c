"""What-ifs over the user's accounts (issue 19's eleventh development set): an amount supposed
paid into or out of one account, and what that account would be at; a measure over every card
with some supposed paid off. Each figure cites its rows; the wordings are in no evaluation set."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.compute import read_computation


@pytest.mark.parametrize(
    ("text", "kinds", "goal"),
    [
        ("say I put 500 into savings, how much is in there then?", ("savings",), 500.0),
        ("if i throw another 300 bucks at the amex what do i owe after", (), 300.0),
        ("if I took $1,000 out of my checking, what would be left?", ("checking",), -1000.0),
        ("if i paid 2k toward my sapphire whats the balance then", (), 2000.0),
    ],
)
def test_an_amount_paid_into_or_out_of_one_account(
    text: str, kinds: tuple[str, ...], goal: float
) -> None:
    found = read_computation(text)
    assert found is not None and found.op == "pay", text
    (one,) = found.sides
    assert one.kinds == kinds or one.names, text
    assert found.goal == goal


def test_an_amount_said_as_done_or_a_balance_asked_is_no_what_if() -> None:
    for text in ("I paid 200 to my visa yesterday", "how much do I owe on my visa"):
        found = read_computation(text)
        assert found is None or found.op != "pay", text


def test_a_payment_toward_a_card_leaves_less_owed_citing_the_card(app: Flask) -> None:
    answer, citations = answer_in_new_chat(
        app, api_client(app, "demo"), "suppose I pay $500 on the amex, how much will I owe then?"
    )
    assert "$1,342.17" in answer  # 1,842.17 owed less 500
    assert {str(c["source"]) for c in citations} == {"silvia://your-account/credit-card"}


def test_an_account_the_words_fit_twice_is_asked_which(app: Flask) -> None:
    answer, citations = answer_in_new_chat(
        app, api_client(app, "demo"), "if I pulled $100 from checking, what's left?"
    )
    assert "Which account" in answer and "Chase" in answer and "Wells Fargo" in answer
    assert not citations


@pytest.mark.parametrize(
    ("text", "measure", "cleared"),
    [
        ("if i paid off the amex whats my utilization then", "utilization", 1),
        (
            "once the citi and the sapphire are cleared, what's my overall utilisation?",
            "utilization",
            2,
        ),
        ("how much would i owe in total once the citi card is cleared", "balance", 1),
        ("what would our card debt come to with the sapphire paid off?", "balance", 1),
    ],
)
def test_a_measure_over_every_card_with_some_supposed_paid_off(
    text: str, measure: str, cleared: int
) -> None:
    found = read_computation(text)
    assert found is not None and found.op == "paid_off", text
    assert found.measure == measure
    assert found.sides[0].kinds == ("credit",) and len(found.sides) == 1 + cleared


def test_a_loan_paid_off_or_one_card_asked_is_no_measure_over_every_card() -> None:
    for text in (
        "what would my utilization be if I paid off the mortgage",
        "what would i owe on the amex if i cleared the citi",
    ):
        found = read_computation(text)
        assert found is None or found.op != "paid_off", text


def test_utilization_with_a_card_paid_off_is_over_every_cards_limit(app: Flask) -> None:
    answer, citations = answer_in_new_chat(
        app, api_client(app, "demo"), "say we cleared the amex, what would our utilization be?"
    )
    # (4,782.07 owed - 1,842.17) over 43,000.00 of limits
    assert "6.8%" in answer and "11.1%" in answer
    assert {str(c["source"]) for c in citations} == {
        "silvia://your-account/credit-card",
        "silvia://your-account/sapphire-preferred",
    }
