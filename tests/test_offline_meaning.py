"""The offline engine reads advice, refusals, amounts and documents by the words that carry
their meaning, not by whole phrasings (issue 19's third development set)."""

from __future__ import annotations

import pytest

from webapp.llm.offline.advice import advice_kind
from webapp.llm.offline.ask import understand
from webapp.llm.offline.compute import read_computation
from webapp.llm.offline.conversation import combined
from webapp.llm.offline.fuzzy import correct
from webapp.llm.offline.library import library
from webapp.llm.offline.scope import missing_document, padded, scope_reply
from webapp.llm.offline.words import amounts, bare_amounts


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("What debts should I prioritise paying off?", "payoff"),
        ("which loan do i tackle first", "payoff"),
        ("I'm thinking of buying a car for 15k, can I swing it?", "afford"),
        ("thinking about buying more vti, good idea?", "sell"),
        ("Is it smarter to pay the mortgage down early or put the money in the market?", "plan"),
        ("is my emergency fund big enough?", "cushion"),
        ("is it ok to keep all my money in my checking account?", "cushion"),
        ("is my portfolio diversified enough", "allocate"),
        ("is it better to pay off the sapphire or the amex first?", "payoff"),
        ("i want a 2000 tv, affordable?", "afford"),
        ("would a $30,000 down payment be doable for me right now?", "afford"),
        # no judgement asked, or a rule asked for: not advice
        ("How big should my emergency fund be?", None),
        ("Which card has the highest utilization?", None),
        ("What's my Amex balance?", None),
    ],
)
def test_advice_is_read_by_its_words(text: str, kind: str | None) -> None:
    assert advice_kind(padded(text), understand(text)) == kind


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("purchase 5 shares of msft", "can't place trades"),
        ("dump all my VTI now", "can't place trades"),
        ("pls pay off my amex", "can't make payments"),
        ("Increase my credit limit to $10,000", "can't open, close or change accounts"),
        ("whats my fico", "don't have your credit score"),
        ("what's the APR on my sapphire", "don't have the interest rate"),
        ("What's the minimum payment on my Citi card?", "don't have that"),
        ("where do you reckon VTI will be in six months?", "can't predict"),
        ("what will the S&P 500 do next month", "can't predict"),
        ("What did I pay for my Apple shares?", "don't have what you paid"),
        ("put $1000 into my roth ira", "can't move money"),
    ],
)
def test_a_request_or_data_not_held_is_read_by_verb_and_object(text: str, says: str) -> None:
    assert says in (scope_reply(text) or "")


@pytest.mark.parametrize(
    "text",
    [
        "pay off my amex first or my citi?",  # a choice to weigh
        "sell my house",  # not something trades act on
        "How do I raise my credit score?",  # how to change it: the documents
        "Should I sell my VTI?",
        "can i pay it off from checking?",
    ],
)
def test_a_question_is_not_taken_for_a_request(text: str) -> None:
    assert scope_reply(text) is None


def test_amounts_without_a_dollar_sign() -> None:
    assert amounts("a car for 15k") == [15000.0]
    assert amounts("my 401k") == []
    assert bare_amounts("afford 800 on a phone, or 5,000 on a car") == [800.0, 5000.0]
    assert bare_amounts("form 1040 in 2025, 10 shares, 20%, publication 590") == []
    assert bare_amounts("a 2000 tv") == [2000.0]  # a year's digits, not said as a year


def test_documents_named_by_their_kind() -> None:
    books = library()
    for text in (
        "summarize the fair debt collection practices act for me",
        "what does the CARD Act say about late fees",
        "what does the amex gold benefits guide say about travel insurance",
        "Show me section 401(k) of the tax code",
        "pull up the form w-4 instructions",
    ):
        assert "don't have" in (missing_document(text, books) or ""), text
    for text in (
        "what does section 121 say about excluding gain on a home sale",
        "what does the Sapphire Preferred benefits guide say about rental cars",
    ):
        assert missing_document(text, books) is None, text


def test_a_real_word_is_not_a_typo_of_its_plural() -> None:
    assert correct("Citi Double Cash benefits guide") == "Citi Double Cash benefits guide"


def test_a_british_spelling_is_read_as_the_american_one_the_engine_knows() -> None:
    assert correct("Utilisation across the amex pls") == "utilization across the amex pls"
    assert understand(correct("how high is my card utilisation")).intents == ("utilization",)
    assert understand(correct("utilisation rate?")).intents == ("utilization",)
    # a word whose American form is no word the engine knows stays as it was
    assert correct("I realise it's late") == "I realise it's late"


def test_a_difference_of_accounts_named_by_their_names() -> None:
    found = read_computation("how much more do i owe on the sapphire than the citi")
    assert found is not None and found.op == "difference"
    # no "my", "I": a question about terms, not the user's accounts
    assert (
        read_computation("what is the difference between APR and interest rate on a mortgage?")
        is None
    )


def test_accounts_left_out_and_taken_together() -> None:
    left = understand("how much cash do i have outside of my savings account")
    assert left.intents == ("cash",) and left.kinds == () and left.excluded_kinds == ("savings",)
    both = understand("total owed on the sapphire and the amex together")
    assert both.together
    merged = combined("add them together", ("What's my Citi balance?", "and my Amex?"))
    assert merged is not None
    assert {"citi", "american express"} <= set(merged[0].institutions)


@pytest.mark.parametrize(
    "text",
    [
        "should i leave my robinhood account alone to let it grow?",
        "stripping it back, what's my checking balance?",
    ],
)
def test_leave_and_strip_leave_nothing_out_without_their_particle(text: str) -> None:
    assert understand(text).excluded == ()
    left = understand("what's my net worth if you leave the house out of it")
    assert left.excluded_kinds or left.excluded
