"""Advice and scope answered as a careful analyst would (issue 19, the tenth set's kinds): the
concept asked about named from the bundled pages and set against the user's own figures
(PMI at a share down, a card opened or closed against the score, cash against inflation, a
holding against the debts it would clear, saving before investing), forecasts in any ending
of a move, and documents or data not held said plainly, offering only what is on the topic.
Wordings here are in no eval set."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.ask import documentish, understand
from webapp.llm.offline.dispatch import Context, Reply, tasks
from webapp.llm.offline.library import library
from webapp.llm.offline.open_task import guides, saves_first
from webapp.llm.offline.scope import held_of_own, out_of_scope, scope_reply

PMI = "https://www.consumerfinance.gov/ask-cfpb/what-is-private-mortgage-insurance-en-122/"
SCORE = "https://www.consumerfinance.gov/ask-cfpb/what-is-a-credit-score-en-315/"
INFLATION = "https://www.federalreserve.gov/economy-at-a-glance-inflation-pce.htm"
CUSHION = "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/"


@pytest.mark.parametrize(
    "text",
    [
        "Is GOOGL going to keep rising into next spring?",
        "will MSFT shares keep sliding lower next week?",
        "do you think the stock market is going to keep crashing?",
    ],
)
def test_a_forecast_is_read_in_any_ending_of_its_move(text: str) -> None:
    assert (scope_reply(text) or "").startswith("I can't predict")


def test_a_future_that_moves_no_price_is_no_forecast() -> None:
    assert scope_reply("is MSFT going to pay a dividend?") is None


def test_a_missing_publication_offers_none_off_its_topic() -> None:
    said = out_of_scope(
        "What does IRS Publication 596 say about the earned income credit?", library()
    )
    assert said and "don't have IRS Publication 596" in said
    assert "No IRS publication I have is about that topic" in said
    assert "Publication 526" not in said and "590-A" not in said


def test_a_missing_publication_asked_of_nothing_lists_those_held() -> None:
    said = out_of_scope("whats in IRS publication 502?", library()) or ""
    assert "Publication 526" in said and "590-A" in said


def test_a_missing_regulation_on_a_topic_no_document_uses_offers_none() -> None:
    said = out_of_scope("What does Regulation E say about ATM errors?", library()) or ""
    assert "don't have Regulation E" in said
    assert "none of the documents I have is about that topic" in said
    assert "1026" not in said


def test_a_figure_asked_after_a_paper_not_held_is_the_users_own_not_held() -> None:
    found = tasks(
        "Pull up my Citi cardholder agreement. What's the cash advance APR?",
        Context(library(), None),
    )
    assert len(found) == 1 and isinstance(found[0], Reply)
    assert "cardholder agreement" in found[0].text and "interest rates" in found[0].text
    assert held_of_own("what's my cash advance APR?") is None  # it says whose: asked anew


def test_what_another_party_may_charge_is_a_rule() -> None:
    assert documentish("can the lender bill me for an appraisal before closing?")
    question = understand("What fees can a creditor charge me before my Closing Disclosure?")
    assert question.intents == ()


def test_investing_weighed_against_saving_quotes_the_emergency_fund() -> None:
    assert saves_first("invest now, or put away an emergency fund before that?")
    assert not saves_first("how should I invest my savings?")
    assert guides("allocate", understand("should I invest first or save up a cushion?")) == (
        "cushion",
    )


def test_which_card_first_quotes_how_interest_is_charged() -> None:
    ordered = understand("my tax refund landed, which card gets it first?")
    assert guides("payoff", ordered) == ("payoff_order",)
    timed = understand("should I pay the amex in full this month?")
    assert guides("payoff", timed) == ("payoff",)
    soon = understand("worth clearing my visa right now?")
    assert guides("payoff", soon) == ("payoff",)


def test_when_the_money_comes_does_not_bring_the_page_to_which_card_first() -> None:
    # the order of their balances answers it: no page of the card's interest
    assert guides("payoff", understand("some spare money next month, what card comes first?")) == ()
    # when it is to be paid does: paid in full then, the grace period spares the interest
    paid = understand("if i can zero out just one card next month, which goes first?")
    assert guides("payoff", paid) == ("payoff_order",)


def test_paying_off_or_keeping_the_cash_where_it_sits_quotes_the_emergency_fund() -> None:
    kept = understand("pay the cards down from my savings, or leave the money where it is?")
    assert guides("payoff", kept) == ("cushion",)
    assert guides("payoff", understand("pay the cards down from my savings?")) == ()


def test_pmi_at_a_share_down_is_set_against_the_pages_share(app: Flask) -> None:
    client = api_client(app, "demo")
    said, cited = answer_in_new_chat(
        app, client, "if we bought a condo with 5% down would PMI apply?"
    )
    assert "less than 20 percent" in said
    assert "At 5 percent down you would be under the 20 percent" in said
    assert {c["source"] for c in cited} == {PMI}  # the rule alone: no account bears on it
    said, _ = answer_in_new_chat(app, client, "with 30 percent down do I dodge PMI?")
    assert "At 30 percent down you would be at or past the 20 percent" in said


def test_a_card_opened_or_closed_is_set_against_the_score(app: Flask) -> None:
    client = api_client(app, "demo")
    said, cited = answer_in_new_chat(app, client, "will applying for a new card ding my score?")
    assert "recent applications for new credit" in said
    assert "its limit would add to your $43,000.00" in said
    assert SCORE in {c["source"] for c in cited}
    said, _ = answer_in_new_chat(
        app, client, "would cancelling my citi card lower my credit score?"
    )
    # $4,782.07 of the $43,000.00 less Citi's $8,000.00
    assert "take $8,000.00 off your $43,000.00" in said and "13.7% of the $35,000.00" in said


def test_cash_against_inflation_quotes_the_page_and_the_rate(app: Flask) -> None:
    said, cited = answer_in_new_chat(
        app, api_client(app, "demo"), "my savings just sits in the bank, is inflation eating it?"
    )
    assert "loses purchasing power" in said
    assert "$18,250.00 in your Chase savings account would lose about $365.00" in said
    assert {INFLATION, CUSHION} <= {c["source"] for c in cited}


def test_a_holding_weighed_for_selling_is_set_against_the_debts_named(app: Flask) -> None:
    said, _ = answer_in_new_chat(
        app, api_client(app, "demo"), "should I sell some VTI to clear my credit card balances?"
    )
    assert "40 shares of VTI worth $11,584.00" in said
    assert "your three credit cards owe $4,782.07" in said
    assert "$6,801.93 to spare" in said  # 11,584.00 - 4,782.07


def test_saving_before_investing_with_no_holdings_quotes_the_emergency_fund(app: Flask) -> None:
    said, cited = answer_in_new_chat(
        app,
        api_client(app, "alex"),
        "is it smarter to start investing or to save up a cushion before that?",
    )
    assert "$3,120.44" in said and "three to six months" in said
    assert CUSHION in {c["source"] for c in cited}


def test_a_mix_weighed_for_diversification_quotes_the_diversifying_page(app: Flask) -> None:
    said, cited = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "my money is VTI, some apple and a little ether. diversified enough, do you think?",
    )
    sources = {c["source"] for c in cited}
    assert "Diversification means" in said
    assert any("asset-allocation-diversification" in s for s in sources), sources


def test_debt_before_an_index_fund_says_what_an_index_fund_is(app: Flask) -> None:
    said, cited = answer_in_new_chat(
        app, api_client(app, "alex"), "pay my card down first, or start buying an index fund?"
    )
    assert "$410.09" in said and "An index fund is a mutual fund" in said
    assert any("glossary/index-fund" in c["source"] for c in cited)
    said, cited = answer_in_new_chat(
        app, api_client(app, "alex"), "pay my card down first, or start investing?"
    )
    assert all("index-fund" not in c["source"] for c in cited)
