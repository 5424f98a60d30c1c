"""Two sides compared however they are asked ("is A bigger than B", "do I have more in A than
B"), and holdings as a whole weighed against accounts: each side's figure, the gap, and each
figure cited to its own rows."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.compute import read_computation

CHECKING = "$6,925.09"  # demo: Chase $4,820.33 + Wells Fargo $2,104.76
SAVINGS = "$18,250.00"
HOLDINGS = "$22,546.50"  # demo: ETH $5,250.00 + AAPL $5,712.50 + VTI $11,584.00
CARDS = "$4,782.07"  # demo: Amex $1,842.17 + Citi $624.50 + Sapphire $2,315.40


def _sources(citations: list[dict[str, object]]) -> set[str]:
    return {str(c["source"]) for c in citations}


@pytest.mark.parametrize(
    "text",
    [
        "is my checking bigger than my savings",
        "are my checking accounts larger than savings?",
        "do i have more in checking than in savings",
    ],
)
def test_a_comparison_asked_as_a_yes_or_no_is_a_difference(text: str) -> None:
    computation = read_computation(text)
    assert computation is not None and computation.op == "difference"
    assert [s.kinds for s in computation.sides] == [("checking",), ("savings",)]


def test_a_comparison_of_two_banks_cards_names_each_bank() -> None:
    computation = read_computation("is my amex balance higher than my citi balance")
    assert computation is not None and computation.op == "difference"
    assert [s.institutions for s in computation.sides] == [("american express",), ("citi",)]


def test_is_a_bigger_than_b_gives_both_figures_and_the_gap(app: Flask) -> None:
    answer, citations = answer_in_new_chat(
        app, api_client(app, "demo"), "is my checking bigger than my savings"
    )
    assert CHECKING in answer and SAVINGS in answer
    assert "$11,324.91 more than" in answer  # 18,250.00 - 6,925.09
    assert _sources(citations) == {
        "silvia://your-account/checking",
        "silvia://your-account/savings",
    }


@pytest.mark.parametrize(
    ("text", "other", "gap"),
    [
        ("total value of my stocks vs what i owe on cards", CARDS, "$17,764.43"),
        ("how much more do i have in investments than in cash", "$25,175.09", "$2,628.59"),
    ],
)
def test_holdings_as_a_whole_are_weighed_against_accounts(
    app: Flask, text: str, other: str, gap: str
) -> None:
    answer, citations = answer_in_new_chat(app, api_client(app, "demo"), text)
    assert HOLDINGS in answer and other in answer and gap in answer
    assert "silvia://your-account/individual" in _sources(citations)  # the Robinhood holdings
    assert " is " + gap not in answer  # many rows on the larger side: "are"


def test_two_sets_of_accounts_are_not_read_as_holdings() -> None:
    computation = read_computation("how much more is in savings than checking")
    assert computation is not None and computation.over != "holdings"
