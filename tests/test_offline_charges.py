"""A charge of the user's named by its payee beside a card's rule (charges.py): the payee read
from the words around the charge, in wordings of no evaluation set; its rows on the user's
cards said and cited beside the dispute and refund rules; no payee named, no card figures."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.charges import payee_words
from webapp.llm.offline.dispatch import Context, Figures, tasks
from webapp.llm.offline.guidance import topics_of
from webapp.llm.offline.library import library


@pytest.mark.parametrize(
    ("text", "payee"),
    [
        ("the marriott charge on my sapphire is wrong, how do i dispute it", ("marriott",)),
        ("netflix keeps billing my amex after i cancelled", ("netflix",)),
        ("there's a charge from best buy on my citi card i never made", ("buy",)),
        ("Delta has been charging me twice for one flight", ("delta",)),
        ("i returned some shoes to nordstrom but no credit yet", ("nordstrom",)),
        ("how do i dispute a charge on my credit card?", ()),
        ("the store refunded a return to my card", ()),
        ("a charge on my chase card i don't recognise", ()),
    ],
)
def test_the_payee_is_read_from_the_words_around_a_charge(
    text: str, payee: tuple[str, ...]
) -> None:
    assert payee_words(text) == payee


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        (
            "how much was the best buy charge on my citi, and can i dispute it?",
            "disputing a card charge",
        ),
        (
            "i dont recognise a delta charge on my amex. what should i do, is there a deadline",
            "disputing a card charge",
        ),
        (
            "Marriott refunded me on my sapphire, when does the card have to post it",
            "a refund to a card",
        ),
    ],
)
def test_a_charge_named_by_its_payee_bears_on_a_card_rule(text: str, topic: str) -> None:
    found = {t.name: set(bearing) for t, bearing in topics_of(text)}
    assert topic in found and "charge" in found[topic], found


@pytest.mark.parametrize(
    "text",
    [
        "the best buy charge on my citi looks too high, can i dispute it?",
        "i dont recognise a delta charge on my amex, whats the deadline",
    ],
)
def test_a_charge_only_named_as_what_a_rule_is_about_brings_in_no_figure(text: str) -> None:
    found = {t.name: set(bearing) for t, bearing in topics_of(text)}
    assert found == {"disputing a card charge": set()}, found


def test_the_payees_charges_are_said_and_cited_beside_the_dispute_rule(app: Flask) -> None:
    text, cited = answer_in_new_chat(
        app,
        api_client(app, "alex"),
        "I cancelled Hulu ages ago but hulu billed my card again. How long have I got to contest "
        "those charges and how much are they?",
    )
    assert "60 days" in text and "Hulu charged your Bank of America credit card $17.99" in text
    assert "$410.09" not in text  # the card's balance was not asked
    assert {c["target"]["kind"] for c in cited} == {"card_document", "account"}


def test_a_charge_not_recognised_is_a_dispute_of_that_payees_rows(app: Flask) -> None:
    text, _ = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "theres a marriott hotels transaction on my sapphire that i didnt make. what now?",
    )
    assert "60 days" in text and "Marriott charged Sapphire Preferred at Chase" in text


@pytest.mark.parametrize(
    ("before", "text"),
    [
        ("How do I dispute a charge on my credit card?", "ok and how fast do they have to respond"),
        ("whats the deadline to dispute a card charge", "once they have it, when must they fix it"),
    ],
)
def test_a_follow_up_pointing_back_is_answered_from_the_documents_before(
    before: str, text: str
) -> None:
    (task,) = tasks(text, Context(library(), None, (before,)))
    assert isinstance(task, Figures)
    assert task.hits and task.hits[0].doc.path.endswith(("1026.13.md", "charge.md"))


@pytest.mark.parametrize(
    "text",
    [
        "someone got my card number and went shopping online, am i on the hook for it?",
        "somebody stole my card details and bought things online, am i liable",
    ],
)
def test_unauthorised_use_in_everyday_words_reads_the_liability_cap(text: str) -> None:
    hits = library().rank(text)
    assert hits and hits[0].doc.path.endswith("1026.12.md"), [h.doc.path for h in hits]


@pytest.mark.parametrize(
    "text",
    [
        "walgreens billed my visa two times for one prescription, what now?",
        "ticketmaster double charged my citi card for a single concert ticket - what can i do",
    ],
)
def test_the_same_purchase_charged_twice_is_a_billing_error_to_dispute(text: str) -> None:
    found = {t.name: set(bearing) for t, bearing in topics_of(text)}
    assert found == {"disputing a card charge": set()}, found
