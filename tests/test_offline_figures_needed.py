"""A guided answer states and cites the user's own figures only where the question needs them
(guidance_figure.py): asked of a measure, a judgement or an operation they answer, the figures
are read, said and cited; an account only named as context (the card a purchase went on, the
shop whose charge it is, the pay whose schedule the question states) brings in none of them.
In wordings no evaluation set holds."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.ask import understand
from webapp.llm.offline.guidance import topics_of
from webapp.llm.offline.guidance_figure import FIGURES, stemmed
from webapp.store.app_db import get_engine
from webapp.store.schema import transactions, users


def _bearing(text: str) -> dict[str, set[str]]:
    return {t.name: set(bearing) for t, bearing in topics_of(text)}


@pytest.mark.parametrize(
    ("figure", "text", "reading"),
    [
        # the charge: its amount, when it came, or an unrecognised one and what to do
        ("charge", "what did spotify bill my citi card, and can i contest it?", "needed"),
        ("charge", "an uber charge on my amex i never made - what should i do?", "needed"),
        ("charge", "an uber charge on my amex i never made - how many days to contest?", "named"),
        ("charge", "spotify billed my citi card twice, can i contest the second one?", "named"),
        # the pay: a share of it or an amount of it, or how often it comes when not said
        ("pay", "i take home 2400 twice a month, what share of it would a full 401k be?", "needed"),
        ("pay", "how much from each of my paychecks would fill a 401k this year?", "needed"),
        ("pay", "we get paid twice a month: what should each paycheck put in a 401k?", "named"),
        # what the person earns: "makes sense" says nothing of it
        ("income", "which of a roth or a traditional ira makes most sense for us?", None),
        ("income", "we're making about 90k. roth or traditional ira?", "needed"),
        # the cards: what a purchase on one could get back, not the purchase told alone
        (
            "cards",
            "the sapphire paid for the cruise, which ran two days late: what can i claim?",
            "needed",
        ),
        ("cards", "put the train on my sapphire and it was 13 hours late. hotel covered?", "named"),
    ],
)
def test_a_figure_is_needed_or_only_named(figure: str, text: str, reading: str | None) -> None:
    assert FIGURES[figure].reading(stemmed(text), understand(text)) == reading


@pytest.mark.parametrize(
    ("text", "topic", "bearing"),
    [
        (
            "an uber charge on my amex i never made - how many days do i get to contest it?",
            "disputing a card charge",
            set(),
        ),
        (
            "an uber charge on my amex i never made - what should i do about it?",
            "disputing a card charge",
            {"charge"},
        ),
        (
            "we get paid twice a month: how much should each paycheck put into a 401k for 2025?",
            "401(k) contributions",
            set(),
        ),
        (
            "i take home 2400 twice a month, what share of each check would maxing a 401k take?",
            "401(k) contributions",
            {"pay"},
        ),
    ],
)
def test_the_topic_is_still_the_answer_with_only_the_figures_needed(
    text: str, topic: str, bearing: set[str]
) -> None:
    assert _bearing(text) == {topic: bearing}


def target_charges(app: Flask) -> list[str]:
    """Alex's Target charges in the demo data, newest first, as an answer writes them (the
    demo's transactions are dated from today, so their amounts move with the date)."""
    query = (
        sa.select(transactions.c.amount)
        .join(users, users.c.id == transactions.c.user_id)
        .where(users.c.username == "alex", transactions.c.merchant_name == "Target")
        .order_by(transactions.c.date.desc())
    )
    with get_engine(app).connect() as conn:
        amounts = list(conn.execute(query).scalars())
    assert amounts, "the demo data has no Target charge of alex's"
    return [f"${amount:,.2f}" for amount in amounts]


def test_a_card_only_named_as_where_a_charge_sits_is_neither_said_nor_cited(app: Flask) -> None:
    text, cited = answer_in_new_chat(
        app,
        api_client(app, "alex"),
        "a target purchase on my bank of america card isn't one of mine. how many days do i "
        "get to contest it?",
    )
    assert "60 days" in text
    assert not [amount for amount in target_charges(app) if amount in text]
    assert all("your-account" not in c["source"] for c in cited), cited


def test_a_charge_asked_about_is_said_and_cited(app: Flask) -> None:
    text, cited = answer_in_new_chat(
        app,
        api_client(app, "alex"),
        "how much did target charge my bank of america card, and how many days do i get to "
        "contest it?",
    )
    assert "60 days" in text and target_charges(app)[0] in text  # the latest
    assert any(c["target"]["kind"] == "account" for c in cited), cited


def test_a_stated_pay_schedule_is_divided_without_the_paychecks(app: Flask) -> None:
    text, cited = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "we get paid twice a month: how much should each paycheck put into a 401k for 2025?",
    )
    assert "24 paychecks" in text and "$979.17" in text and "$2,850.00" not in text
    assert all("your-account" not in c["source"] for c in cited), cited


def test_pay_the_question_states_is_set_against_the_paychecks(app: Flask) -> None:
    text, cited = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "how much from each of my paychecks would fill a 401k this year?",
    )
    assert "$2,850.00" in text and "26" in text
    assert any(c["target"]["kind"] == "account" for c in cited), cited


def test_a_trip_told_on_the_card_gets_the_benefit_without_the_balance(app: Flask) -> None:
    text, cited = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "put the train on my sapphire and it ran 13 hours late. is the hotel covered?",
    )
    assert "12 hours" in text and "$2,315.40" not in text
    assert all("your-account" not in c["source"] for c in cited), cited
