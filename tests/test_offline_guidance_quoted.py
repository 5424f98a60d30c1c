"""The offline engine's rules a page states in words (guidance_quoted.py): a card's grace
period, the Fed's rate, free credit reports, an emergency fund in months of rent, compound
growth, each set beside the user's own figures, in wordings no evaluation set holds."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.support.apps import ApiClient, answer_in_new_chat, api_client
from webapp.llm.offline.dispatch import Context, tasks
from webapp.llm.offline.guidance import Guided, read_guided, topics_of
from webapp.llm.offline.library import library


@pytest.mark.parametrize(
    ("text", "topic", "figures"),
    [
        (
            "if i clear my amex statement balance by the due date will i be charged any interest?",
            "a card's grace period",
            {"cards"},
        ),
        (
            "would a rate hike by the federal reserve push up what my citi card costs me?",
            "the Fed's rate decisions",
            {"cards"},
        ),
        (
            "where do i get a free copy of my credit report to see if my card balances are right?",
            "free credit reports",
            {"cards"},
        ),
        (
            "how many months of rent would my savings cover, and how big should my emergency "
            "fund be?",
            "an emergency fund",
            {"deposits", "housing"},
        ),
        ("if my savings earned 6% a year, how long until it doubles?", "compound growth", set()),
        (
            "my amex got stolen at the gym, what am i on the hook for and what is on it right now?",
            "a lost or stolen card",
            {"card_balance"},
        ),
        (
            "best buy refunded a return to my citi card - how long until it shows up on it?",
            "a refund to a card",
            {"charge"},
        ),
        (
            "i want to dispute a charge on my sapphire, do i still owe the full balance meanwhile?",
            "disputing a card charge",
            {"card_balance"},
        ),
        (
            "my escrow analysis shows a shortage, can i spread it out, and what's my monthly payment?",
            "an escrow shortage or surplus",
            {"mortgage_payment"},
        ),
        (
            "could i roll my old traditional ira into a roth and pay the tax out of my checking?",
            "Roth conversions and distributions",
            {"tax_source"},
        ),
        (
            "do i have to start taking money out of my roth at 75 or can my savings carry me?",
            "Roth conversions and distributions",
            {"tax_source"},
        ),
        (
            "my bags went missing on a trip i paid with my sapphire, what's covered, what do i owe?",
            "the Sapphire's benefits",
            {"card_balance"},
        ),
        (
            "how long do i keep the receipts for my vti shares once i sell?",
            "records of what shares cost",
            {"holdings"},
        ),
        (
            "whats the difference between an etf and a mutual fund, i have some VOO",
            "ETFs and mutual funds",
            {"holdings"},
        ),
        (
            "when will the lender give me a loan estimate and how much is my mortgage payment now?",
            "the Loan Estimate",
            {"mortgage_payment"},
        ),
    ],
)
def test_a_rule_in_words_is_read_with_the_figures_that_bear_on_it(
    text: str, topic: str, figures: set[str]
) -> None:
    found = {t.name: set(bearing) for t, bearing in topics_of(text)}
    assert set(found) == {topic}, found
    assert figures <= found[topic]


@pytest.mark.parametrize(
    "text",
    [
        "what is a grace period on a credit card?",
        "what does the FOMC do?",
        "how often can I get free credit reports?",
        "how does compound interest work?",
        "is a stolen card my problem?",
        "how do I dispute a credit card charge?",
        "the store refunded a return to my citi card - how long until it shows up on the card?",
        "how long do i have to dispute a charge on my card",
        "what is an escrow shortage?",
        "what are the roth conversion rules?",
        "what is the difference between an ETF and a mutual fund?",
    ],
)
def test_the_rule_alone_stays_with_the_documents(text: str) -> None:
    assert read_guided(text) is None


def _ask(app: Flask, client: ApiClient, question: str) -> tuple[str, list[dict[str, Any]]]:
    text, cited = answer_in_new_chat(app, client, question)
    return text, [c["target"] for c in cited]


def test_months_of_rent_a_balance_covers_beside_the_pages_target(app: Flask) -> None:
    text, targets = _ask(
        app,
        api_client(app, "alex"),
        "my rent is steep: how many months of it would my checking carry, and what emergency "
        "fund should I aim for?",
    )
    assert "three to six months" in text and "$3,120.44" in text and "1.7 months" in text
    kinds = {t["kind"] for t in targets}
    assert "web" in kinds and ({"account", "accounts"} & kinds)


def test_the_years_to_double_at_a_stated_rate(app: Flask) -> None:
    text, _ = _ask(
        app, api_client(app, "alex"), "if my checking grew 8% a year how long to double it?"
    )
    assert "$6,240.88" in text and "9.0 years" in text and "not a forecast" in text


def test_a_corpus_rule_is_quoted_in_plain_words_beside_the_card(app: Flask) -> None:
    text, targets = _ask(
        app,
        api_client(app, "demo"),
        "i want to dispute a charge on my citi card, do i still owe the whole balance meanwhile?",
    )
    assert "60 days" in text and "disputed amount" in text and "$624.50" in text
    assert "**" not in text and "\n- " not in text
    assert len(targets) == 2 and any(t["kind"] == "account" for t in targets), targets


def test_an_escrow_shortage_beside_the_mortgage_payment(app: Flask) -> None:
    text, _ = _ask(
        app,
        api_client(app, "demo"),
        "escrow shortage on my statement: must i pay it at once? and what's my monthly payment?",
    )
    assert "12 months" in text and "$2,140.00 every month" in text


def test_a_roth_question_quotes_the_sentence_it_asks_about(app: Flask) -> None:
    text, _ = _ask(
        app,
        api_client(app, "demo"),
        "could i convert my old traditional ira to a roth and pay the tax out of my chase savings?",
    )
    assert "included in income" in text and "10% additional tax" in text
    assert "No minimum distributions" not in text and "$18,250.00" in text


def test_a_card_benefit_quotes_the_benefit_asked_about_and_the_card_paid_with(app: Flask) -> None:
    text, _ = _ask(
        app,
        api_client(app, "demo"),
        "my headphones were damaged a week after I paid for them with my Amex card. does the "
        "sapphire purchase protection cover that?",
    )
    assert "120 days" in text and "only when the eligible purchase" in text
    assert "American Express credit card, not the Sapphire" in text
    assert "rental" not in text and "12 hours" not in text


def test_a_holding_named_is_read_beside_the_rule_and_a_table_row_is_a_sentence(app: Flask) -> None:
    text, targets = _ask(
        app,
        api_client(app, "demo"),
        "how long do i keep the receipts for my vti shares once i sell?",
    )
    assert "The usual case: 3 years from the date you filed" in text and "|" not in text
    assert "40 shares of VTI, worth $11,584.00" in text
    assert any(t["kind"] == "account" for t in targets)


def test_several_cards_beside_a_card_rule_are_added_up(app: Flask) -> None:
    text, targets = _ask(
        app,
        api_client(app, "demo"),
        "if i clear every card i have in full each month, is there any interest at all?",
    )
    assert "grace period" in text and "$4,782.07 in all" in text
    text, _ = _ask(
        app, api_client(app, "alex"), "if i clear my card in full each month is there interest?"
    )
    assert "in all" not in text and "$410.09" in text


@pytest.mark.parametrize(
    "text",
    [
        "is it ok to take money out of my roth to buy a first house, or will i owe tax on it?",
        "we want to withdraw from our roth ira for the deposit on a first home. tax free?",
    ],
)
def test_a_roth_withdrawal_for_a_first_home_quotes_the_rule_alone(app: Flask, text: str) -> None:
    found = {t.name: set(b) for t, b in topics_of(text)}
    assert found == {"Roth conversions and distributions": set()}, found
    answer, targets = _ask(app, api_client(app, "alex"), text)
    assert "first-time home purchase, up to a $10,000 lifetime limit" in answer, answer
    assert "No minimum distributions" not in answer
    assert all(t["kind"] != "account" for t in targets), targets


def test_a_rules_bound_asked_after_it_is_the_same_question() -> None:
    text = "could i take my roth money out for a first home without tax? is there a cap?"
    (task,) = tasks(text, Context(library(), None, ()))
    assert isinstance(task, Guided)
    # a limit of an account of the user's is a question of its own
    assert (
        len(
            tasks(
                "can i dispute a charge on my amex? whats my credit limit?",
                Context(library(), None, ()),
            )
        )
        == 2
    )
