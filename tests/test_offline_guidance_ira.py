"""The offline engine's IRA rules from Publication 590-A set against what the person earns
(guidance_ira.py), a down payment that avoids PMI against their bank accounts, a card's
balance carried from month to month beside the grace period, a card benefit for a trip still
to book, and what the FDIC doesn't insure added up, in wordings no evaluation set holds."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.guidance import topics_of
from webapp.llm.offline.guidance_ira import age_said


@pytest.mark.parametrize(
    ("text", "topic", "figures"),
    [
        (
            "is my salary too high for a roth ira? what's the income cutoff",
            "IRA income limits",
            {"income"},
        ),
        (
            "my employer has no 401k, so could i deduct what i put in a traditional ira?",
            "IRA income limits",
            {"income"},
        ),
        (
            "we make around 240k filing jointly, can we still put money in a roth?",
            "IRA income limits",
            {"income"},
        ),
        (
            "i overfunded my roth with $7,800 this year, i'm 41. now what?",
            "an excess IRA contribution",
            {"amount"},
        ),
        (
            "i already put 9k into my ira for 2025 and im 35, did i go over?",
            "an excess IRA contribution",
            {"amount"},
        ),
        (
            "buying a $250k house next year, what down payment skips pmi and how far is my savings?",
            "private mortgage insurance",
            {"source"},
        ),
        (
            "whats the harm in carrying a balance on my citi every month rather than paying it in full?",
            "a card's grace period",
            {"cards"},
        ),
    ],
)
def test_a_rule_is_read_with_what_the_person_earns_or_names(
    text: str, topic: str, figures: set[str]
) -> None:
    found = {t.name: set(bearing) for t, bearing in topics_of(text)}
    assert set(found) == {topic}, found
    assert figures <= found[topic]


@pytest.mark.parametrize(
    ("text", "topics"),
    [
        (
            "could i move $8k from my savings into a roth, or is that over the limit?",
            {"IRA contributions"},
        ),
        ("can i take money out of my ira early without a penalty?", set()),
        ("am i carrying a balance on my amex?", set()),
        ("what is the roth ira income limit?", set()),
    ],
)
def test_a_plan_a_withdrawal_a_balance_or_the_rule_alone_is_not_that_rule(
    text: str, topics: set[str]
) -> None:
    assert {t.name for t, _ in topics_of(text)} == topics


@pytest.mark.parametrize(
    ("text", "age"),
    [("i'm 26 and single", 26), ("Turned 55 this year", 55), ("im 41.", 41), ("no age here", None)],
)
def test_the_age_a_person_gives(text: str, age: int | None) -> None:
    assert age_said(text) == age


def _ask(app: Flask, user: str, question: str) -> tuple[str, list[dict[str, Any]]]:
    text, cited = answer_in_new_chat(app, api_client(app, user), question)
    return text, [c["target"] for c in cited]


def test_the_roth_phase_out_against_a_years_paychecks(app: Flask) -> None:
    text, targets = _ask(
        app, "demo", "i'm single - does what acme pays me keep me under the roth ira income cap?"
    )
    assert "$74,100.00 a year" in text and "$150,000" in text and "$165,000" in text
    assert "before tax" in text and "$79,000" not in text
    assert any(t["kind"] == "account" for t in targets)


def test_the_deduction_with_a_plan_at_work_and_without(app: Flask) -> None:
    text, _ = _ask(
        app,
        "demo",
        "single, and i have a 401k through work. can i still deduct a traditional ira on my pay?",
    )
    assert "$79,000" in text and "$89,000" in text and "$4,900.00 under" in text
    text, _ = _ask(
        app,
        "alex",
        "earning 48k and my job offers no retirement plan - is a traditional ira deductible for me?",
    )
    assert "fully deductible" in text and "$79,000" not in text and "$48,000.00" in text


def test_a_joint_income_above_the_range(app: Flask) -> None:
    text, _ = _ask(
        app,
        "alex",
        "my wife and i file jointly and make about 250k. are we over the roth income limit?",
    )
    assert "$236,000" in text and "above $246,000" in text


def test_an_excess_contribution_and_its_yearly_tax(app: Flask) -> None:
    text, targets = _ask(
        app, "alex", "i accidentally contributed $8,200 to my roth ira for 2025, i'm 33. what now?"
    )
    assert "$1,200.00 over the $7,000 limit" in text and "6%" in text and "$72.00" in text
    assert "Withdrawing the excess" in text and all(t["kind"] != "account" for t in targets)


def test_a_down_payment_that_avoids_pmi_against_savings(app: Flask) -> None:
    text, targets = _ask(
        app,
        "demo",
        "we'd like to buy a $400,000 house. what do we put down to skip pmi, and does my savings get us there?",
    )
    assert "$80,000.00" in text and "$18,250.00" in text and "$61,750.00 short" in text
    assert "78 percent" in text and any(t["kind"] == "account" for t in targets)


def test_a_card_benefit_for_a_trip_still_to_book_shows_no_balance(app: Flask) -> None:
    text, targets = _ask(
        app,
        "demo",
        "next month i'm going to put flights on my sapphire card. what does the card cover if "
        "they get delayed overnight?",
    )
    assert "12 hours" in text and "$2,315.40" not in text
    assert all(t["kind"] != "account" for t in targets)
    # a trip paid on it only names the card: the benefit, with no figure of the card's
    text, targets = _ask(
        app, "demo", "my flight was delayed overnight, i paid for it on my sapphire card. claims?"
    )
    assert "12 hours" in text and "$2,315.40" not in text
    assert all(t["kind"] != "account" for t in targets)


def test_what_the_fdic_does_not_insure_is_added_up(app: Flask) -> None:
    text, _ = _ask(app, "demo", "is my robinhood or my eth wallet fdic insured? how much in all?")
    assert "$22,859.05 in all" in text and "no bank deposits at Robinhood" not in text


def test_a_refunds_timing_shows_the_card_only_when_the_purchase_was_on_it(app: Flask) -> None:
    text, targets = _ask(
        app, "alex", "the shop says my return was credited back. how soon must my card show it?"
    )
    assert "seven business days" in text and all(t["kind"] != "account" for t in targets)
    text, targets = _ask(
        app, "alex", "i bought boots on my card and sent them back. how soon must the refund post?"
    )
    assert "seven business days" in text and any(t["kind"] == "account" for t in targets)
