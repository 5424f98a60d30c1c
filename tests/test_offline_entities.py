"""The question model's operations and entities (issue 19's tenth development set): a mean
over accounts, a holding's value per unit, a follow-up that keeps what the last question named,
a question that leaves an account out, and an account's overview, each figure cited to its rows."""

from __future__ import annotations

from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.ask import understand
from webapp.llm.offline.compute import read_computation
from webapp.llm.offline.conversation import follow_up, previous_question
from webapp.llm.offline.fuzzy import correct
from webapp.llm.offline.library import library
from webapp.llm.offline.scope import out_of_scope


def _sources(citations: list[dict[str, object]]) -> set[str]:
    return {str(c["source"]) for c in citations}


def test_a_mean_over_a_kind_of_account_is_an_operation_of_its_own() -> None:
    found = read_computation("on average how much sits in each of my checking accounts")
    assert found is not None and found.op == "average"
    assert found.sides[0].kinds == ("checking",)
    limits = read_computation("what's the mean limit on my cards")
    assert limits is not None and limits.op == "average" and limits.measure == "limit"


def test_the_mean_is_the_sum_over_the_count_each_account_cited(app: Flask) -> None:
    answer, citations = answer_in_new_chat(
        app, api_client(app, "demo"), "typical balance of one of my checking accounts?"
    )
    assert "$3,462.55" in answer  # (4,820.33 + 2,104.76) / 2, rounded to the cent
    assert "$6,925.09" in answer
    assert _sources(citations) == {"silvia://your-account/checking"}


def test_what_would_be_with_an_account_left_out_is_today_not_a_projection() -> None:
    books = library()
    for text in (
        "what would my net worth come to if we ignored my crypto",
        "what would our net worth be if you didn't count the property",
        "what would my net worth be excluding the home",
    ):
        assert out_of_scope(text, books) is None, text
        asked = understand(correct(text))
        assert asked.excluded_kinds, text
    # a future with it is still one
    said = out_of_scope("what will my net worth be in 5 years without the house", books)
    assert said is not None and "can't project" in said


def test_a_net_worth_with_the_home_left_out_cites_and_names_what_it_leaves(app: Flask) -> None:
    answer, _ = answer_in_new_chat(
        app, api_client(app, "demo"), "net worth if you didn't include my home, roughly?"
    )
    assert "$43,252.07" in answer and "leaves out Home" in answer


def test_one_share_asked_by_way_of_the_many_is_worth_their_value_over_their_count(
    app: Flask,
) -> None:
    answer, citations = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "by robinhood's numbers, what's every one of my vti shares worth",
    )
    assert "$289.60" in answer  # 11,584.00 / 40
    assert _sources(citations) == {"silvia://your-account/individual"}


def test_a_ticker_quoted_before_is_the_holding_a_pointing_follow_up_asks_of() -> None:
    before = previous_question(["how is apple trading today?"])
    found = follow_up("what's my stake in it worth", before)
    assert found is not None
    asked, note = found
    assert asked.tickers == ("AAPL",) and asked.intents == ("holdings",)
    assert "AAPL" in note


def test_how_much_of_that_is_a_holding_is_its_share_of_what_the_last_question_named(
    app: Flask,
) -> None:
    answer, citations = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "what's my robinhood account worth?",
        "and how much of it is VTI?",
    )
    assert "$11,584.00" in answer and "$17,609.05" in answer
    assert "silvia://your-account/individual" in _sources(citations)


def test_an_account_asked_of_as_a_whole_is_described_by_every_figure_on_record() -> None:
    card = understand("fill me in on my amex card")
    assert card.described and card.intents == ("balances",)
    assert understand("walk me through my robinhood account").intents == ("balances", "holdings")
    assert not understand("tell me about credit cards in general").described
    assert not understand("what's my amex balance").described


def test_a_card_described_gives_its_balance_limit_credit_left_and_share_used(app: Flask) -> None:
    answer, citations = answer_in_new_chat(
        app, api_client(app, "demo"), "what's the lowdown on my american express card"
    )
    for figure in ("$1,842.17", "$15,000.00", "$13,157.83", "12.3%"):
        assert figure in answer, figure
    assert _sources(citations) == {"silvia://your-account/credit-card"}


def test_the_account_with_the_least_money_is_no_card_which_holds_none(app: Flask) -> None:
    answer, _ = answer_in_new_chat(
        app, api_client(app, "demo"), "what account of mine has the smallest amount of money in it"
    )
    assert answer.startswith("Your Wells Fargo checking account")
    assert "$624.50" not in answer  # the Citi card's balance is owed, not money it holds


def test_a_cards_balance_and_limit_asked_together_are_both_answered() -> None:
    assert understand("what's the balance and the limit on my amex").intents == ("utilization",)
    # a contribution's limit is no card's
    assert "utilization" not in understand("my ira balance and the yearly limit").intents
